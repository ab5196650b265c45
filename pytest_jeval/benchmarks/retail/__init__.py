"""The retail domain (tau-bench style): a mock store database, its tools, the tasks, the reward and the users.

See docs/retail.md.
"""

from __future__ import annotations

from pytest_jeval.benchmarks.retail.database import DB_PATH, canonical_json, db_hash, fresh_db
from pytest_jeval.benchmarks.retail.policy import POLICY
from pytest_jeval.benchmarks.retail.rescore import replayed_episode, rescore_retail
from pytest_jeval.benchmarks.retail.reward import assistant_texts, gold_db, missing_outputs, retail_score
from pytest_jeval.benchmarks.retail.tasks import read_tasks, task_samples, to_sample
from pytest_jeval.benchmarks.retail.tools import TOOLS, TOOLS_BY_NAME, WRITE_TOOLS, call_tool
from pytest_jeval.benchmarks.retail.users import STOP, LLMUser, ScriptedUser, make_user

__all__ = [
    "DB_PATH",
    "POLICY",
    "STOP",
    "TOOLS",
    "TOOLS_BY_NAME",
    "WRITE_TOOLS",
    "LLMUser",
    "ScriptedUser",
    "assistant_texts",
    "call_tool",
    "canonical_json",
    "db_hash",
    "fresh_db",
    "gold_db",
    "make_user",
    "missing_outputs",
    "read_tasks",
    "replayed_episode",
    "rescore_retail",
    "retail_score",
    "task_samples",
    "to_sample",
]
