"""rrl-jobs: the recursive-rl harness (`rrl serve`) as a verifiers (v1) environment.

The v1 loader finds the taskset through ``__all__`` (its one ``vf.Taskset`` subclass); the rest are helpers.
"""

from rrl_jobs.bridge import TrlReward, completion_trace, score_completion, trace_reward, trl_rows
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
    "RrlJobsTaskset",
    "RrlJobsConfig",
    "RrlJobTask",
    "RrlJobData",
    "RrlTaskConfig",
    "RrlUnscorable",
    "REWARD",
    "TASKSET_ID",
    "load_environment",
    "prompt_messages",
    "TrlReward",
    "completion_trace",
    "score_completion",
    "trace_reward",
    "trl_rows",
]
