"""rrl-jobs: the recursive-rl harness (`rrl serve`) as a verifiers (v1) environment.

The v1 loader finds the taskset through ``__all__`` (its one ``vf.Taskset`` subclass) and the env of its tasks
(its one ``vf.Env`` subclass, :class:`RrlJobsEnv`: the single-agent env, multi-turn when ``rounds > 1``); the
rest are helpers.
"""

from rrl_jobs.bridge import TrlReward, completion_trace, score_completion, trace_reward, trl_rows
from rrl_jobs.env import RrlJobsEnv, play_rounds
from rrl_jobs.taskset import (
    REWARD,
    TASKSET_ID,
    RrlJobData,
    RrlJobsConfig,
    RrlJobsTaskset,
    RrlJobTask,
    RrlTaskConfig,
    RrlUnscorable,
    load_environment,
    prompt_messages,
)

__all__ = [
    "REWARD",
    "TASKSET_ID",
    "RrlJobData",
    "RrlJobTask",
    "RrlJobsConfig",
    "RrlJobsEnv",
    "RrlJobsTaskset",
    "RrlTaskConfig",
    "RrlUnscorable",
    "TrlReward",
    "completion_trace",
    "load_environment",
    "play_rounds",
    "prompt_messages",
    "score_completion",
    "trace_reward",
    "trl_rows",
]
