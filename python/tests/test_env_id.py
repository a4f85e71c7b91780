"""The Python half of the Gymnasium id rule: a ``module:Env-v0`` id only when the import is allowed."""

from __future__ import annotations

import pytest

from rrl_gym.env_id import ImportNotAllowed, check_env_id, import_module_of


def test_plain_ids_pass_and_module_ids_need_the_permission() -> None:
    for env_id in ["CartPole-v1", "ALE/Pong-v5", "gymnasium_robotics/FetchReach-v4"]:
        check_env_id(env_id, False)
        assert import_module_of(env_id) is None
    assert import_module_of("mypkg.envs:MyEnv-v0") == "mypkg.envs"
    check_env_id("mypkg.envs:MyEnv-v0", True)
    with pytest.raises(ImportNotAllowed) as err:
        check_env_id("mypkg.envs:MyEnv-v0", False)
    assert str(err.value) == 'env_id "mypkg.envs:MyEnv-v0" names a module to import (mypkg.envs); the task must allow it (environment.allowImport)'


def test_only_true_allows_the_import() -> None:
    for allowed in [1, "yes", "true", None]:
        with pytest.raises(ImportNotAllowed):
            check_env_id("os:Env-v0", allowed)  # type: ignore[arg-type]
