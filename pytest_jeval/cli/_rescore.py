"""``jeval rescore``: score stored answers again with a registered scorer; no model is queried.

Errored records stay as they are. Every other record gets the scorer's verdict
in the fields the plugin fills from a ``Score`` (``is_correct``, ``score``,
``extracted``, ``expected``, ``unscored``, ``scoring_metadata`` and the score's
extra fields); a scorer that raises makes the record wrong with the exception in
``scoring_metadata``, as a crashing scorer does during a run. The new JSONL gets
its ``.summary.json``, computed the way the results writer computes one.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from pytest_jeval.records import RECORD_FIELDS, _plain
from pytest_jeval.report._data import load_result, recompute_summary, summary_differences, summary_path
from pytest_jeval.scoring.registry import RecordScorer, get_scorer
from pytest_jeval.summary import write_summary


def rescore_record(record: dict[str, Any], scorer: RecordScorer) -> dict[str, Any]:
    """A copy of ``record`` with ``scorer``'s verdict (an errored record is returned unchanged)."""
    out = dict(record)
    if record.get("error") is not None:
        return out
    try:
        score = scorer(record)
    except Exception as exc:  # noqa: BLE001 - a crashing scorer makes the sample wrong, as in a run
        out.update(is_correct=False, score=0.0, extracted=None, unscored=False,
                   scoring_metadata={"exception": f"{type(exc).__name__}: {exc}"[:2000]})
        return out
    out.update(
        is_correct=score.correct,
        score=score.numeric,
        scoring_metadata=dict(score.metadata),
        expected=score.expected if score.expected is not None else record.get("expected"),
        extracted=score.extracted,
        unscored=score.unscored,
    )
    for key, value in score.fields.items():
        if key in RECORD_FIELDS:
            raise ValueError(f"Score.fields may not replace the reference field {key!r}")
        out[key] = value
    return {k: _plain(v) for k, v in out.items()}


def default_output(path: Path, scorer: str) -> Path:
    """``{stem}.rescored-{scorer}.jsonl`` beside the input."""
    return path.with_name(f"{path.stem}.rescored-{scorer}.jsonl")


def run(args: argparse.Namespace) -> int:
    """Rescore one file, write the JSONL and its summary, print what changed."""
    source = load_result(args.file)
    scorer = get_scorer(args.scorer)
    out = Path(args.output) if args.output else default_output(source.path, args.scorer)
    if out.resolve() == source.path.resolve():
        raise SystemExit("jeval rescore: the output would overwrite the input; choose another -o")
    records = [rescore_record(r, scorer) for r in source.records]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    os.replace(tmp, out)
    summary = recompute_summary(records, source.stored)
    write_summary(summary_path(out), summary)
    changed = sum(1 for old, new in zip(source.records, records)
                  if (old.get("is_correct"), old.get("score")) != (new.get("is_correct"), new.get("score")))
    before = source.summary
    print(f"rescored {len(records)} records of {source.path} with {args.scorer!r}: {changed} verdicts changed")
    print(f"accuracy: {_acc(before)} -> {_acc(summary)}  (correct {before['correct']} -> {summary['correct']}, "
          f"unscored {before['unscored']} -> {summary['unscored']}, errors {summary['errors']})")
    diffs = [key for key, _, _ in summary_differences(before, summary)]
    print(f"summary fields changed: {', '.join(diffs) if diffs else 'none'}")
    print(f"wrote {out} and {summary_path(out).name}")
    return 0


def _acc(summary: dict[str, Any]) -> str:
    value = summary.get("accuracy")
    return "-" if value is None else f"{value:.4f}"
