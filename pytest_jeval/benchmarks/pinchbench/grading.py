"""Grading a PinchBench task as upstream's ``lib_grading`` does, with the task's Python grader in the sandbox.

* **automated**: the task's ``grade(transcript, workspace_path)`` runs in a sandboxed interpreter
  (:func:`pytest_jeval.sandbox.run_in_workspace`: no network, only its working directory of the host's files
  mounted, limits, killed at its timeout), never in the pytest process. It works on a copy of the workspace and gets
  the transcript on its standard input, so nothing it does changes what the judge reads or the record keeps. Its
  score is the mean of the numbers in the dict it returns (upstream's ``_average_scores``: an empty or non-dict
  result is 0). A grader that raises or times out leaves the task unscored, with its message.
* **llm_judge**: the judge gets upstream's prompt: the f-string of the clone's ``scripts/lib_grading.py``
  ``_build_judge_prompt`` (:func:`judge_template`, read with :mod:`ast`, never run), filled with the task's prompt,
  expected behaviour, the transcript summarised and the workspace files as upstream gives them, and the rubric (else
  the grading criteria); a clone without it gets this project's wording of it (:data:`JUDGE_PROMPT`). It answers
  ``{"scores": {criterion: 0-1}, "total": 0-1, "notes"}``; its reply is read and normalised as upstream reads it.
  A judge that fails, or a reply with no total, leaves the judge part unscored (upstream: 0).
* **hybrid**: ``(automated x w_auto + judge x w_judge) / (w_auto + w_judge)`` with the task's ``grading_weights``
  (0.5 each by default); unscored when either part is.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._research.judgelog import JudgeFailed, JudgeLog
from pytest_jeval.benchmarks._research.upstream import Template, UpstreamError, fstring, render

__all__ = ["GRADER_TIMEOUT", "HARNESS", "combine", "judge_part", "judge_template", "normalize_judgement",
           "parse_judge_text",
           "run_grader", "summarize_transcript", "workspace_text"]

GRADER_TIMEOUT = 60.0
"""Seconds a grader may run."""

HARNESS = r'''
import json, os, sys, traceback
job = json.loads(sys.stdin.read())
space = {"__name__": "pinchbench_grader", "__builtins__": __builtins__}
try:
    exec(compile(job["code"], "<Automated Checks>", "exec"), space)
    grade = space.get("grade")
    if not callable(grade):
        out = {"status": "missing", "error": "the Automated Checks define no grade() function"}
    else:
        result = grade(job["transcript"], os.getcwd())
        out = {"status": "ok", "scores": result if isinstance(result, dict) else None, "type": type(result).__name__}
except BaseException as exc:
    out = {"status": "raised", "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-3000:]}
sys.stdout.write("\n" + job["nonce"] + json.dumps(out, default=repr) + "\n")
'''
"""The program that runs a grader inside the sandbox: the job (grader source, transcript, a nonce) comes on
standard input, the outcome goes to standard output after the nonce."""


def run_grader(code: str, transcript: list[dict[str, Any]], workspace: Path, *, timeout: float) -> dict[str, Any]:
    """Run ``grade`` in the sandbox on ``workspace`` (a copy): ``{"status": "ok", "scores": {...}}``, or
    ``{"status": "raised" | "missing" | "timeout" | "sandbox", "error": ...}``."""
    from pytest_jeval.sandbox import SandboxError, run_in_workspace

    nonce = "@@pinchbench-" + secrets.token_hex(8) + "@@"
    job = json.dumps({"code": code, "transcript": transcript, "nonce": nonce})
    try:
        result = run_in_workspace(workspace, ["-I", "-B", "-u", "-c", HARNESS], stdin=job, timeout=timeout,
                                  max_output=4 * 1024 * 1024)
    except SandboxError as exc:
        return {"status": "sandbox", "error": f"the sandbox cannot run the grader: {exc}"}
    if result.status == "timeout":
        return {"status": "timeout", "error": f"the grader ran past {timeout:g}s"}
    for line in reversed(result.stdout.splitlines()):
        if line.startswith(nonce):
            outcome: dict[str, Any] = json.loads(line[len(nonce):])
            return outcome
    tail = (result.stderr or result.stdout)[-1500:]
    return {"status": "raised", "error": f"the grader's interpreter ended ({result.status}, exit status "
                                         f"{result.returncode}) without a result: {tail}"}


def automated_score(scores: Mapping[str, Any] | None) -> float:
    """Upstream's ``_average_scores``: the mean of the numeric values (0 when none)."""
    values = [float(v) for v in (scores or {}).values() if isinstance(v, (int, float))]
    return sum(values) / len(values) if values else 0.0


def breakdown(scores: Mapping[str, Any] | None) -> dict[str, float]:
    """Upstream's ``_normalize_score_dict``: every value that converts to a float."""
    out: dict[str, float] = {}
    for key, value in (scores or {}).items():
        try:
            out[str(key)] = float(value)
        except (TypeError, ValueError):
            continue
    return out


SKIP_FILES = {"BOOTSTRAP.md", "SOUL.md", "USER.md", "IDENTITY.md", "HEARTBEAT.md", "TOOLS.md", "AGENTS.md"}
SKIP_DIRS = {".git", ".openclaw", "__pycache__", "node_modules", "skills"}


def workspace_text(workspace: Path) -> str:
    """The workspace's text files for the judge, as upstream lists them: ``### File: <path>`` and the first 3000
    characters of each, OpenClaw's own files and hidden or tool folders left out."""
    parts: list[str] = []
    for path in sorted(workspace.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        rel = path.relative_to(workspace)
        if any(p.startswith(".") or p in SKIP_DIRS for p in rel.parts) or path.name in SKIP_FILES:
            continue
        try:
            parts.append(f"### File: {rel.as_posix()}\n{path.read_text(encoding='utf-8')[:3000]}")
        except (OSError, UnicodeDecodeError):
            continue
    return "\n\n".join(parts)


def summarize_transcript(events: list[dict[str, Any]]) -> str:
    """Upstream's ``_summarize_transcript``: tool calls (long string arguments cut at 200 characters), assistant
    text (2000), the first part of each tool result (200) and of each user message."""
    lines: list[str] = []
    for event in events:
        message = event.get("message") or {}
        role, content = message.get("role"), message.get("content") or []
        if role == "assistant":
            for item in content:
                if item.get("type") == "toolCall":
                    args = {k: (v[:200] + "...[truncated]" if isinstance(v, str) and len(v) > 200 else v)
                            for k, v in (item.get("arguments") or {}).items()}
                    lines.append(f"Tool: {item.get('name')}({json.dumps(args)})")
                elif item.get("type") == "text" and str(item.get("text", "")).strip():
                    lines.append(f"Assistant: {str(item['text']).strip()[:2000]}")
        elif role == "toolResult" and content:
            lines.append(f"Result: {str(content[0])[:200]}")
        elif role == "user" and content:
            lines.append(f"User: {content[0]}")
    return "\n".join(lines)


JUDGE_PROMPT = """You are a grading function: reply with one JSON object and nothing else (no tools, no prose).

Grade strictly: 1.0 only for excellent work; an average acceptable completion scores about 0.6-0.7. Take points \
off for unnecessary steps, verbose output and inefficient tool use.

## Task
{prompt}

## Expected Behavior
{expected}

## Agent Transcript (summarized)
{transcript}

{workspace}## Grading Rubric
{rubric}

Score each criterion from 0.0 to 1.0. "total" is also between 0.0 and 1.0: the mean of the criterion scores, not \
their sum.

Reply with only: {{"scores": {{"criterion_name": 0.0}}, "total": 0.0, "notes": "brief justification"}}"""


JUDGE_SOURCE = "scripts/lib_grading.py"
JUDGE_FILL = frozenset({"task.prompt", "task.expected_behavior", "transcript_summary", "rubric", "workspace_content",
                        "workspace_section"})


def judge_template(clone: Path) -> tuple[Template | None, str]:
    """Upstream's judge prompt from the clone (``_build_judge_prompt``'s returned f-string) as a template, and where
    the prompt comes from; ``(None, why)`` when the clone has none this can read (then :data:`JUDGE_PROMPT`)."""
    try:
        template = fstring(clone / JUDGE_SOURCE, "_build_judge_prompt", None, set(JUDGE_FILL))
    except UpstreamError as exc:
        return None, f"pytest-jeval's wording of upstream's judge prompt ({exc})"
    return template, f"upstream {JUDGE_SOURCE}:_build_judge_prompt()"


def _objects(text: str) -> list[str]:
    found: list[str] = []
    depth, start = 0, -1
    for i, char in enumerate(text):
        if char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                found.append(text[start:i + 1])
    return found


def parse_judge_text(raw: str) -> dict[str, Any]:
    """Upstream's ``_parse_judge_text``: the whole reply as JSON; a code block; the last balanced ``{...}`` with
    ``scores``, else the last one that parses; else a ``total: 0.x`` in prose. ``{}`` when nothing is found."""
    text = raw.strip()
    if not text:
        return {}
    candidates = [text]
    block = re.search(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
    if block:
        candidates.append(block.group(1))
    for candidate in candidates:
        try:
            parsed = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            return parsed
    objects = []
    for candidate in reversed(_objects(text)):
        try:
            parsed = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            objects.append(parsed)
    for parsed in objects:
        if "scores" in parsed:
            return parsed
    if objects:
        return objects[0]
    prose = re.search(r"(?:total|overall|final)\s*(?:score)?[:\s]*(0\.\d+|1\.0+)", text, re.IGNORECASE)
    if prose and 0.0 <= float(prose.group(1)) <= 1.0:
        return {"scores": {}, "total": float(prose.group(1)), "notes": "Score extracted from prose"}
    return {}


def normalize_judgement(parsed: Mapping[str, Any]) -> dict[str, Any]:
    """Upstream's ``_normalize_judge_response``: ``{"scores", "total", "notes"}`` from the formats judges use
    (``scores`` or ``criteria_scores``, nested ``{"score": x}``; ``total``, ``score`` or ``overall_score``, else the
    mean; a summed total over 1 with every criterion in 0-1 becomes their mean)."""
    scores: dict[str, Any] = {}
    source = parsed.get("scores") if "scores" in parsed else parsed.get("criteria_scores")
    if isinstance(source, dict):
        for key, value in source.items():
            if isinstance(value, dict) and "score" in value:
                scores[key] = value["score"]
            elif isinstance(value, (int, float)):
                scores[key] = value
    total: float | None = None
    if parsed.get("total") is not None:
        total = float(parsed["total"]) if isinstance(parsed["total"], (int, float)) else None
    elif isinstance(parsed.get("score"), (int, float)):
        total = float(parsed["score"])
    elif isinstance(parsed.get("overall_score"), (int, float)):
        total = float(parsed["overall_score"])
    elif scores:
        values = [v for v in scores.values() if isinstance(v, (int, float))]
        total = sum(values) / len(values) if values else None
    values = [v for v in scores.values() if isinstance(v, (int, float))]
    if values and total is not None and total > 1.0 and all(0.0 <= float(v) <= 1.0 for v in values):
        total = sum(values) / len(values)
    notes = next((str(parsed[k]) for k in ("notes", "justification", "reasoning") if k in parsed), "")
    return {"scores": scores, "total": total, "notes": notes}


def judge_part(log: JudgeLog, *, task: Mapping[str, Any], events: list[dict[str, Any]],
               workspace: str) -> dict[str, Any]:
    """The judge's part: ``{"score": total or None, "breakdown", "notes", "unscored_reason"?}``; the prompt is
    ``task["judge_template"]`` filled in (:func:`judge_template`), else :data:`JUDGE_PROMPT`."""
    rubric = task.get("llm_judge_rubric") or "\n".join(f"- {c}" for c in task.get("grading_criteria") or [])
    files = f"## Workspace Files Created by Agent\n{workspace}\n\n" if workspace.strip() else ""
    summary = summarize_transcript(events)
    template = task.get("judge_template")
    if template:
        prompt = render(template, {"task.prompt": task["prompt"], "task.expected_behavior": task["expected_behavior"],
                                   "transcript_summary": summary, "rubric": rubric, "workspace_content": workspace,
                                   "workspace_section": files})
    else:
        prompt = JUDGE_PROMPT.format(prompt=task["prompt"], expected=task["expected_behavior"], transcript=summary,
                                     workspace=files, rubric=rubric)
    try:
        reply = log.ask("judge", [{"role": "user", "content": prompt}])
    except JudgeFailed as exc:
        return {"score": None, "unscored_reason": str(exc)}
    parsed = parse_judge_text(reply)
    found = normalize_judgement(parsed)
    if not parsed or found["total"] is None:
        return {"score": None, "unscored_reason": "the judge's reply holds no total score", "notes": found["notes"]}
    return {"score": float(found["total"]), "breakdown": breakdown(found["scores"]), "notes": found["notes"]}


def combine(grading_type: str, weights: Mapping[str, float] | None, automated: dict[str, Any] | None,
            judged: dict[str, Any] | None) -> float | None:
    """The task's score from its parts (None when a part it needs is unscored); hybrid as upstream weighs it."""
    auto = automated.get("score") if automated is not None else None
    llm = judged.get("score") if judged is not None else None
    if grading_type == "automated":
        return float(auto) if auto is not None else None
    if grading_type == "llm_judge":
        return float(llm) if llm is not None else None
    if auto is None or llm is None:
        return None
    chosen = weights or {"automated": 0.5, "llm_judge": 0.5}
    w_auto, w_llm = float(chosen.get("automated", 0.5)), float(chosen.get("llm_judge", 0.5))
    if w_auto + w_llm <= 0:
        w_auto = w_llm = 0.5
    return (float(auto) * w_auto + float(llm) * w_llm) / (w_auto + w_llm)
