"""Which Gymnasium ids the Python side makes: the bridge's half of ``src/inner/envs/gym-id.ts``.

``gymnasium.make("module:Env-v0")`` imports ``module`` before it looks the environment up, so an
id with a ``:`` runs code the id names. The TypeScript side refuses such an id unless the task
sets ``allowImport``; the bridge and the PyTorch trainer refuse it here as well unless they are
told the import is allowed, so the rule holds even for a caller that skipped the TypeScript check.
"""

from __future__ import annotations


class ImportNotAllowed(ValueError):
    """A ``module:Env-v0`` id without the task's permission to import the module."""


def import_module_of(env_id: str) -> str | None:
    """The module a ``module:Env-v0`` id makes Gymnasium import, or ``None`` for a plain id."""
    return env_id.split(":", 1)[0] if ":" in env_id else None


def check_env_id(env_id: str, allow_import: bool) -> None:
    """Raises ``ImportNotAllowed`` (one line) when ``env_id`` names a module and the import is not allowed."""
    module = import_module_of(env_id)
    if module is not None and allow_import is not True:
        shown = env_id[:80]
        raise ImportNotAllowed(f'env_id "{shown}" names a module to import ({module[:60]}); the task must allow it (environment.allowImport)')
