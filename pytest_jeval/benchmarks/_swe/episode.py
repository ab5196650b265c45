"""The agent side of a SWE instance, and the prompts.

An episode's workspace is a fresh copy of the instance's prepared checkout (:func:`environment`), for the
built-in loop (``orchestrator``, ``oracle``, ``nop``) and for external agent CLIs alike
(``AgentSpec.workspace_environment``). When the agent ends, :func:`finish` takes the submission as
SWE-agent does, ``git add -A && git diff --cached``, in the sandbox (git never runs on the host in a
checkout an agent touched), with a fresh ``HOME`` and no external diff or textconv drivers. The ``oracle``
applies the gold patch with the ``bash`` tool (:func:`gold_steps`); ``nop`` leaves the checkout as it is
(an empty submission).
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

from pytest_jeval.agents import HarnessError
from pytest_jeval.agents.spec import OracleStep, SayStep, ToolStep
from pytest_jeval.benchmarks._swe.prepare import Prepared, instance_of, prepare
from pytest_jeval.benchmarks._swe.repos import read_at
from pytest_jeval.benchmarks._swe.sandboxed import SandboxUnavailable, run_script
from pytest_jeval.benchmarks._swe.trees import copy_tree, room_for
from pytest_jeval.core.sample import Sample
from pytest_jeval.sandbox.workdir import make_room

__all__ = ["SUBMIT", "SweEpisode", "agent_prompt", "direct_prompt", "environment", "finish", "gold_steps"]

SUBMIT = ("git -c core.hooksPath=/dev/null add -A && git -c core.hooksPath=/dev/null -c diff.noprefix=false "
          "-c diff.mnemonicPrefix=false diff --cached --no-color --no-ext-diff --no-textconv --no-renames")
MAX_SUBMISSION = 8 * 1024 * 1024
SUBMIT_TIMEOUT = 300.0


@dataclasses.dataclass
class SweEpisode:
    """One episode's instance, its prepared parts and, after :func:`finish`, its submission."""

    metadata: dict[str, Any]
    prepared: Prepared | None
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    submission: str | None = None
    """The workspace's ``git diff`` when the agent ended ('' for no change)."""
    submission_error: str | None = None


def environment(sample: Sample, workspace: Path) -> SweEpisode:
    """Copy the instance's prepared checkout (built now when missing) into the episode's workspace."""
    try:
        prepared = prepare(sample.metadata)
    except SandboxUnavailable as exc:
        raise HarnessError(str(exc)) from exc
    disk_bytes, files = room_for(prepared.tree.path)
    make_room(workspace, disk_bytes=disk_bytes, files=files)  # as root the workspace is a size-limited file system
    copy_tree(prepared.tree.path, workspace)
    return SweEpisode(metadata=sample.metadata, prepared=prepared)


def finish(state: Any, workspace: Path) -> SweEpisode:
    """The submission: what the agent changed in the checkout, as a diff (see the module docstring)."""
    if not isinstance(state, SweEpisode) or state.prepared is None:
        raise HarnessError("the episode has no prepared checkout")
    with state.lock:
        done = run_script(workspace, SUBMIT, state.prepared.env, timeout=SUBMIT_TIMEOUT, max_output=MAX_SUBMISSION,
                          extra_env={"HOME": "/tmp", "GIT_CONFIG_GLOBAL": "/dev/null"})
    if not done.ok:
        state.submission_error = f"git diff failed (exit {done.returncode}): {done.stderr.strip()[-1500:]}"
        state.submission = ""
    elif len(done.stdout.encode()) >= MAX_SUBMISSION:
        state.submission_error = f"the diff is larger than {MAX_SUBMISSION} bytes"
        state.submission = ""
    else:
        state.submission = done.stdout
    return state


def gold_steps(sample: Sample) -> list[OracleStep]:
    """The oracle: ``git apply`` the gold patch with the bash tool, then say so."""
    patch = instance_of(sample.metadata).patch
    delimiter = "JEVAL_GOLD_PATCH"
    while delimiter in patch:
        delimiter += "_"
    body = patch if patch.endswith("\n") else patch + "\n"
    return [ToolStep("bash", {"command": f"git apply --verbose - <<'{delimiter}'\n{body}{delimiter}"}),
            SayStep("I applied the fix.")]


AGENT_SYSTEM = (
    "You are a software engineer working in a checkout of the repository {repo}: your working directory, "
    "/sandbox. Resolve the issue the user gives you by editing the repository's source code. Tools: bash and "
    "python (run in the checkout with the repository's Python environment; there is no network), str_replace "
    "(edit a file), file_read, file_write and list_files. Do not change the tests: the tests that grade your "
    "work replace them. When you are done, reply without a tool call; your changes to the checkout (its git "
    "diff) are your submission."
)


def agent_prompt(sample: Sample) -> list[dict[str, str]]:
    """The agent's opening messages: the system prompt and the issue."""
    inst = instance_of(sample.metadata)
    return [{"role": "system", "content": AGENT_SYSTEM.format(repo=inst.repo)},
            {"role": "user", "content": f"<issue>\n{inst.problem_statement.strip()}\n</issue>"}]


DIRECT_INSTRUCTIONS = (
    "I need you to solve this issue by generating a single patch file that I can apply directly to this "
    "repository using git apply. Respond with the patch in unified diff format (as `git diff` prints it, "
    "paths prefixed a/ and b/) between <patch> and </patch>, and nothing else."
)


def direct_prompt(sample: Sample) -> list[dict[str, str]]:
    """``backend = "direct"``: the issue, the files the gold patch edits at the base commit (upstream's
    "oracle" retrieval; ``direct_context = "none"`` leaves them out), and the answer format."""
    from pytest_jeval.benchmarks._swe.patches import patch_paths

    meta = sample.metadata
    inst = instance_of(meta)
    parts = [f"You will be provided with a partial code base of {inst.repo} and an issue statement explaining a "
             "problem to resolve.", f"<issue>\n{inst.problem_statement.strip()}\n</issue>"]
    if meta["options"].get("direct_context") == "oracle":
        code = []
        for path in patch_paths(inst.patch):
            text = read_at(Path(meta["mirror"]), inst.base_commit, path)
            if text is not None:
                numbered = "\n".join(f"{i} {line}" for i, line in enumerate(text.split("\n"), 1))
                code.append(f"[start of {path}]\n{numbered}\n[end of {path}]")
        if code:
            parts.append("<code>\n" + "\n".join(code) + "\n</code>")
    parts.append(DIRECT_INSTRUCTIONS)
    return [{"role": "user", "content": "\n\n".join(parts)}]
