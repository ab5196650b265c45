"""GAIA: general-assistant questions with one short, exact answer (answer-only, or as an agent).

Hub: ``gaia-benchmark/GAIA`` (gated), config ``2023_all``, split ``validation``
(165 rows; the ``test`` split's answers are hidden, ``"?"``, and such rows are
skipped). Schema ``task_id`` (the record id), ``Question``, ``Level`` (1-3),
``Final answer`` (the gold), ``file_name`` (an attachment, or ``""``),
``file_path`` (the attachment's path in the snapshot), ``Annotator Metadata``.

Attachments are resolved from the local snapshot: for a row with a
``file_name``, the first existing file among ``file_path`` (absolute, or
relative to the snapshot), ``<dir>/<file_name>``, ``<dir>/2023/validation/<file_name>``
and ``<dir>/2023/test/<file_name>``, where ``<dir>`` is the directory of the
suite's ``data_files`` and then ``$JEVAL_GAIA_SNAPSHOT_DIR`` (a
``huggingface_hub.snapshot_download`` folder). Text attachments (``.txt``,
``.csv``, ``.json``, ``.py``, ...) are inlined in the prompt, up to 20,000
characters; other files (images, audio, spreadsheets, PDFs) are named in the
prompt, since the answer-only backend cannot open them. A missing attachment
is noted in ``metadata.attachment_missing``.

Scoring: the text after the last ``FINAL ANSWER:`` (else the whole reply)
against the gold by the GAIA normalised exact match (:func:`score_gaia`:
numbers, comma lists element-wise, strings). When that says wrong and a
``[judge]`` is set, the judge's structured verdict decides
(``scoring_metadata.method`` = ``exact_match`` or ``judge``). per_subject is
``level_1`` / ``level_2`` / ``level_3``.

With ``backend = "agent"`` the attachment is not inlined: it is copied into the
episode's workspace under its file name, the prompt says so, and the model
works on it with tools (by default ``calculator``, ``file_read`` and
``python``; the suite's ``tools`` may name others). The episode's final reply
is scored as above.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, HubDataset, LoadContext, ModelClient, Reply, Sample, Score
from pytest_jeval.agents import AgentSpec
from pytest_jeval.scoring.gaia import score_gaia
from pytest_jeval.scoring.llm_judge.prompts import judge_structured
from pytest_jeval.scoring.registry import answer_of, judged, register_scorer, sample_of

SNAPSHOT_ENV = "JEVAL_GAIA_SNAPSHOT_DIR"
TEXT_SUFFIXES = {".txt", ".csv", ".tsv", ".json", ".jsonl", ".jsonld", ".md", ".py", ".xml", ".html", ".htm",
                 ".yaml", ".yml", ".pdb", ".log", ".tex"}
MAX_INLINE_CHARS = 20_000

SYSTEM = (
    "You are a general AI assistant. I will ask you a question. Report your thoughts, and finish your answer "
    "with the following template: FINAL ANSWER: [YOUR FINAL ANSWER]. YOUR FINAL ANSWER should be a number OR "
    "as few words as possible OR a comma separated list of numbers and/or strings. If you are asked for a "
    "number, don't use comma to write your number neither use units such as $ or percent sign unless "
    "specified otherwise. If you are asked for a string, don't use articles, neither abbreviations (e.g. for "
    "cities), and write the digits in plain text unless specified otherwise. If you are asked for a comma "
    "separated list, apply the above rules depending of whether the element to be put in the list is a "
    "number or a string."
)


def snapshot_dirs(ctx: LoadContext) -> list[Path]:
    """Where attachments are looked for: the data_files directory, then ``$JEVAL_GAIA_SNAPSHOT_DIR``."""
    dirs = []
    if ctx.data_dir is not None:
        dirs.append(Path(ctx.data_dir))
    env = os.environ.get(SNAPSHOT_ENV)
    if env:
        dirs.append(Path(env).expanduser())
    return dirs


def resolve_attachment(file_name: str, file_path: str, dirs: list[Path]) -> Path | None:
    """The first existing candidate path of an attachment, or None."""
    candidates: list[Path] = []
    if file_path and Path(file_path).is_absolute():
        candidates.append(Path(file_path))
    for d in dirs:
        if file_path and not Path(file_path).is_absolute():
            candidates.append(d / file_path)
        candidates += [d / file_name, d / "2023" / "validation" / file_name, d / "2023" / "test" / file_name]
    for c in candidates:
        if c.is_file():
            return c.resolve()
    return None


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One GAIA task with its attachment resolved; rows with a hidden gold (``?``) are skipped."""
    gold = str(row["Final answer"] if row["Final answer"] is not None else "").strip()
    if not gold or gold == "?":
        return None
    level = str(row.get("Level") or "").strip()
    file_name = str(row.get("file_name") or "").strip()
    attachment = (resolve_attachment(file_name, str(row.get("file_path") or ""), snapshot_dirs(ctx))
                  if file_name else None)
    return Sample(
        id=str(row.get("task_id") or ctx.default_id(index)),
        input=str(row["Question"]),
        target=gold,
        subject=f"level_{level}" if level else None,
        metadata={
            "level": level,
            "file_name": file_name or None,
            "attachment": str(attachment) if attachment else None,
            "attachment_missing": bool(file_name) and attachment is None,
        },
    )


def attachment_block(sample: Sample) -> str:
    """The attachment as the prompt shows it ('' when there is none)."""
    name = sample.metadata.get("file_name")
    if not name:
        return ""
    path = sample.metadata.get("attachment")
    if not path:
        return f"\n\nThe question comes with an attached file, {name}, which is not available."
    p = Path(path)
    if p.suffix.lower() in TEXT_SUFFIXES:
        text = p.read_text(encoding="utf-8", errors="replace")
        cut = len(text) > MAX_INLINE_CHARS
        text = text[:MAX_INLINE_CHARS]
        note = f"\n[... cut at {MAX_INLINE_CHARS} characters]" if cut else ""
        return f"\n\nAttached file {name}:\n```\n{text}{note}\n```"
    return (f"\n\nThe question comes with an attached file, {name} ({p.suffix or 'no extension'}), "
            "which cannot be shown here.")


def prompt(sample: Sample) -> str:
    """The GAIA answer-format instructions, then the question and its attachment.

    The instructions go in the user message so that a suite's ``system_prompt`` still applies.
    """
    return f"{SYSTEM}\n\nQuestion: {sample.input}{attachment_block(sample)}"


def agent_attachments(sample: Sample) -> list[Path]:
    """The attachment to copy into the episode's workspace (none when the task has none, or it is missing)."""
    path = sample.metadata.get("attachment")
    return [Path(path)] if path else []


def workspace_note(sample: Sample) -> str:
    """Where the agent finds the attachment ('' when there is none)."""
    name = sample.metadata.get("file_name")
    if not name:
        return ""
    path = sample.metadata.get("attachment")
    if not path:
        return f"\n\nThe question comes with an attached file, {name}, which is not available."
    return (f"\n\nThe attached file is in your workspace as {Path(path).name}. "
            "Use your tools to read or process it.")


def agent_prompt(sample: Sample) -> str:
    """The agent's prompt: the answer-format instructions, the question, and the attachment's file name."""
    return f"{SYSTEM}\n\nQuestion: {sample.input}{workspace_note(sample)}"


def score_gaia_with_fallback(sample: Sample, reply: str, judge: ModelClient | None) -> Any:
    """Normalised exact match; a judge may overturn a mismatch (never a match)."""
    result = score_gaia(reply, sample.target)
    meta = {**result.metadata, "method": "exact_match"}
    result = dataclasses.replace(result, metadata=meta)
    if result.correct is not False or judge is None:
        return result
    verdict, jmeta = judge_structured(judge, question=sample.input, response=reply, correct_answer=sample.target)
    meta = {**meta, **jmeta}
    if verdict.correct is None:
        return dataclasses.replace(result, metadata=meta)  # keep the exact-match verdict
    return dataclasses.replace(result, correct=verdict.correct, metadata={**meta, "method": "judge"})


BENCHMARK = Benchmark(
    name="gaia",
    category="agentic",
    description="GAIA 2023 validation: answer-only, or an agent with tools over the attachment",
    dataset=HubDataset(path="gaia-benchmark/GAIA", name="2023_all", split="validation", id_column="task_id"),
    to_sample=to_sample,
    prompt=prompt,
    scorer="gaia",
    scoring="gaia normalized exact match, llm-judge fallback",
    sample_count=165,
    backends=("direct", "agent"),
    agent=AgentSpec(default_tools=("calculator", "file_read", "python"), attachments=agent_attachments,
                    prompt=agent_prompt),
)


def test_gaia(sample: Sample, response: Reply, judge: ModelClient | None, score: Any) -> None:
    """The final answer matches the gold (normalised), or the judge says it does."""
    score(score_gaia_with_fallback(sample, response.text, judge))


@register_scorer("gaia", uses_judge=True)
def record_gaia(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """GAIA's normalised exact match of the final answer; the judge may overturn a mismatch."""

    sample, answer = sample_of(record), answer_of(record)
    return judged(record, reparse_judge, lambda judge: score_gaia_with_fallback(sample, answer, judge))
