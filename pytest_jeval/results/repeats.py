"""Repeats as measurement: the one place where runs of the same item are put together.

A benchmark entry with ``repeats = k`` runs every sample k times (records ``<id>@1`` ...
``<id>@k`` with ``repeat`` and ``repeat_of``; agent records also carry them in ``agent``).
:func:`repeat_summary` turns those records into the summary's ``repeats`` block:

* ``pass_at_k`` - the unbiased pass@k for k = 1..n (Chen et al. 2021), ``pass_hat_k`` - pass^k,
  all k runs succeed (Yao et al. 2024); n is the fewest runs any item has. An errored run counts
  as not passed.
* ``per_repeat_accuracy``, ``mean_accuracy``, ``stderr`` - the accuracy of each repeat index (correct
  / answered runs of that index), their mean, and its standard error over the repeats
  (sample standard deviation / sqrt(number of repeats); null with one repeat).
* ``majority_vote_accuracy`` - the share of items whose answered runs are correct in a strict
  majority (a tie is not a majority).
* ``flip_rate`` and ``flipped`` - the share of items (with at least two answered runs) whose verdict
  differs across runs, and those items' ids with their verdicts.

Errored runs (the harness failed) are left out of everything but pass@k and pass^k.
:func:`judge_repeat_summary` is the judge's own: with ``judge_repeats = r`` the judge answers each
verdict r times (``judge_verdicts`` in the record), and its self-consistency is reported apart from
the model's noise.
"""

from __future__ import annotations

import math
from typing import Any

from pytest_jeval.scoring.metrics import pass_at_k, pass_hat_k

__all__ = ["MAX_LISTED", "judge_repeat_summary", "judge_verdicts", "repeat_groups", "repeat_of", "repeat_summary"]

MAX_LISTED = 200
"""Flipped items listed in a summary at most (the count is always exact)."""


def repeat_of(record: dict[str, Any]) -> tuple[str, int] | None:
    """``(item id, repeat index)`` of a repeated run (top-level ``repeat_of``/``repeat``, else the agent's),
    or None for a record that is no repeat."""
    for holder in (record, record.get("agent")):
        if isinstance(holder, dict) and holder.get("repeat_of") is not None:
            repeat = holder.get("repeat")
            return str(holder["repeat_of"]), int(repeat) if isinstance(repeat, int) and not isinstance(
                repeat, bool) else 0
    return None


def repeat_groups(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The repeated runs by item id, each item's runs in repeat order (records without repeats left out)."""
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for r in records:
        found = repeat_of(r)
        if found is not None:
            groups.setdefault(found[0], []).append((found[1], r))
    return {item: [r for _, r in sorted(runs, key=lambda pair: pair[0])] for item, runs in groups.items()}


def _verdict(record: dict[str, Any]) -> bool | None:
    """True/False for an answered run (unscored counts as wrong), None for an errored one."""
    if record.get("error") is not None:
        return None
    return record.get("is_correct") is True


def _per_repeat(groups: dict[str, list[dict[str, Any]]]) -> dict[str, float | None]:
    by_index: dict[int, list[bool]] = {}
    for runs in groups.values():
        for r in runs:
            verdict = _verdict(r)
            found = repeat_of(r)
            if verdict is not None and found is not None:
                by_index.setdefault(found[1], []).append(verdict)
    return {str(i): (sum(v) / len(v) if v else None) for i, v in sorted(by_index.items())}


def repeat_summary(records: list[dict[str, Any]], max_listed: int = MAX_LISTED) -> dict[str, Any] | None:
    """The ``repeats`` block of a summary (see the module docstring); None when no record is a repeat."""
    groups = repeat_groups(records)
    if not groups:
        return None
    trials = [(len(runs), sum(1 for r in runs if _verdict(r) is True)) for runs in groups.values()]
    n = min(count for count, _ in trials)
    per_repeat = _per_repeat(groups)
    accuracies = [a for a in per_repeat.values() if a is not None]
    mean = sum(accuracies) / len(accuracies) if accuracies else None
    stderr = None
    if mean is not None and len(accuracies) >= 2:
        variance = sum((a - mean) ** 2 for a in accuracies) / (len(accuracies) - 1)
        stderr = math.sqrt(variance / len(accuracies))
    answered = {item: [v for v in map(_verdict, runs) if v is not None] for item, runs in groups.items()}
    voted = [runs for runs in answered.values() if runs]
    majority = sum(1 for runs in voted if 2 * sum(runs) > len(runs)) / len(voted) if voted else None
    comparable = {item: runs for item, runs in answered.items() if len(runs) >= 2}
    flipped = [item for item, runs in comparable.items() if len(set(runs)) > 1]
    return {
        "items": len(groups),
        "runs": sum(count for count, _ in trials),
        "k": n,
        "pass_at_k": {str(k): pass_at_k(trials, k) for k in range(1, n + 1)},
        "pass_hat_k": {str(k): pass_hat_k(trials, k) for k in range(1, n + 1)},
        "per_repeat_accuracy": per_repeat,
        "mean_accuracy": mean,
        "stderr": stderr,
        "majority_vote_accuracy": majority,
        "flip_rate": len(flipped) / len(comparable) if comparable else None,
        "flipped_count": len(flipped),
        "flipped": [{"item": item, "verdicts": [_verdict(r) for r in groups[item]]} for item in flipped[:max_listed]],
    }


def judge_verdicts(record: dict[str, Any], repeats: list[list[str | None]], scorer: str,
                   sample: Any = None) -> list[Any]:
    """The verdict of each time the judge was asked, by the benchmark's own scorer replaying the replies.

    ``repeats`` holds, per judge call of the item, the texts of its extra asks. Verdict 0 replays the stored
    replies, verdict r the r-th extra reply of every call (``reparse_judge``: the same parser as the run);
    None where a reply is missing or the replay fails.
    """
    from pytest_jeval.scoring.registry import call_scorer

    meta = record.get("scoring_metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}

    def replay(outputs: list[str] | None) -> Any:
        replayed = dict(meta)
        if outputs is not None:
            for key in ("judge_output", "judge_error"):
                replayed.pop(key, None)
            replayed["judge_outputs"] = outputs
        try:
            return call_scorer(scorer, {**record, "scoring_metadata": replayed}, sample=sample,
                               reparse_judge=True).correct
        except Exception:  # a replay the scorer cannot do gives no verdict
            return None

    verdicts = [replay(None)]
    for r in range(max((len(texts) for texts in repeats), default=0)):
        outputs = [texts[r] if r < len(texts) else None for texts in repeats]
        verdicts.append(replay([o for o in outputs if o is not None]) if all(o is not None for o in outputs)
                        else None)
    return verdicts


def judge_repeat_summary(records: list[dict[str, Any]], max_listed: int = MAX_LISTED) -> dict[str, Any] | None:
    """The judge's self-consistency over ``judge_repeats``: per record, ``judge_verdicts`` holds the verdict
    of each time the judge was asked (null where it gave none). None when no record has two.

    ``agreement`` is the mean over items of the share of verdict pairs that agree (items with at least two
    verdicts); ``unanimous`` the share of those items whose verdicts all agree; ``split`` lists the others.
    """
    rows = [(str(r.get("record_id")), [v for v in r["judge_verdicts"] if v is not None]) for r in records
            if r.get("error") is None and isinstance(r.get("judge_verdicts"), list)]
    rows = [(rid, verdicts) for rid, verdicts in rows if len(verdicts) >= 2]
    if not rows:
        return None
    agreements = []
    for _, verdicts in rows:
        pairs = [(a, b) for i, a in enumerate(verdicts) for b in verdicts[i + 1:]]
        agreements.append(sum(1 for a, b in pairs if a == b) / len(pairs))
    split = [rid for rid, verdicts in rows if len(set(map(repr, verdicts))) > 1]
    return {
        "items": len(rows),
        "judge_repeats": max(len(r.get("judge_verdicts") or []) for r in records),
        "agreement": sum(agreements) / len(agreements),
        "unanimous": 1 - len(split) / len(rows),
        "split_count": len(split),
        "split": split[:max_listed],
    }
