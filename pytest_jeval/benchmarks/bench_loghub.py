"""loghub: say whether a window of system log lines shows an anomaly, and which lines.

Bundled: ``data/loghub.jsonl``, 40 items made by :mod:`pytest_jeval.benchmarks._loghub_gen`
(seed 20240611): 20 HDFS block sessions and 20 BGL windows, half of each anomalous, with the
anomaly types and the injected lines known. Schema: ``id``, ``system``, ``lines`` (the log
text, one string per line), ``label`` (``anomalous`` | ``normal``), ``anomaly_type``,
``anomalous_lines`` (1-based).

Real LogHub files (``data_files``), read by :func:`read_rows`:

* a structured CSV with a ``Label`` column (BGL, Thunderbird, ...: ``LineId,Label,Timestamp,
  ...,Content,EventId,EventTemplate``): consecutive windows of ``WINDOW`` lines; a window is
  anomalous iff a line's ``Label`` is not ``-``, and those are its anomalous lines;
* a structured CSV without ``Label`` (HDFS: ``LineId,Date,Time,Pid,Level,Component,Content,
  EventId,EventTemplate``) together with ``anomaly_label.csv`` (``BlockId,Label``, ``Normal`` |
  ``Anomaly``): one session per block id (the first ``blk_...`` of ``Content``), in order of
  first appearance, cut at ``MAX_SESSION_LINES``; blocks the label file lacks are skipped
  (counted); HDFS labels are per block, so no line numbers are scored;
* JSON lines in the bundled schema.

The model sees only the log text: each line is rebuilt from the CSV's columns **other than**
``LineId``, ``Label``, ``EventId``, ``EventTemplate`` and ``ParameterList`` (HDFS as ``Date Time
Pid Level Component: Content``, others joined by spaces), so no label reaches the prompt.

Scoring: the reply's ``VERDICT:`` line (else the last "anomaly"/"normal" word) against the
label: ``is_correct`` = the verdict matches, ``score`` 1/0. A reply without a verdict is
unscored. ``LINES:`` (optional) is compared with the anomalous lines as an F1, reported in
``scoring_metadata`` and the summary but not in the verdict. The summary adds precision,
recall and F1 of the anomaly class (an unscored item counts as not flagged) and the
confusion counts.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._codeexec import strip_reasoning
from pytest_jeval.benchmarks._usecase import labelled_field
from pytest_jeval.scoring.metrics import precision_recall_f1
from pytest_jeval.scoring.registry import answer_of, register_scorer
from pytest_jeval.suite.dataset import DatasetLoadError

LABELS = ("anomalous", "normal")
#: Lines per window of a labelled structured CSV.
WINDOW = 20
#: Lines kept of one HDFS block session.
MAX_SESSION_LINES = 100
#: Structured-CSV columns never shown to the model.
HIDDEN_COLUMNS = frozenset({"LineId", "Label", "EventId", "EventTemplate", "ParameterList"})
LABEL_FILE = "anomaly_label.csv"
_BLOCK = re.compile(r"blk_-?\d+")

PROMPT = """You are monitoring a {system_name} cluster. Read these {count} log lines ({unit}) and decide whether they show an anomaly (a failure or abnormal behaviour) or only normal operation. Corrected errors and routine messages are normal.

```
{lines}
```

Reply in exactly this format:
VERDICT: ANOMALY or NORMAL
LINES: <the numbers of the anomalous lines, e.g. 4, 5; NONE if normal>"""  # noqa: E501 - prompt text kept verbatim

_SYSTEMS = {"hdfs": ("Hadoop HDFS", "one block's session"), "bgl": ("BlueGene/L", "consecutive lines")}


# --------------------------------------------------------------------------- reading


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            rows = list(reader)
            return list(reader.fieldnames or []), rows
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DatasetLoadError(f"cannot read {path} as a LogHub CSV: {exc}") from None


def log_text(row: dict[str, str], columns: Sequence[str]) -> str:
    """One log line rebuilt from a structured-CSV row, without the hidden (label) columns."""
    shown = [c for c in columns if c not in HIDDEN_COLUMNS]
    values = [str(row.get(c) or "") for c in shown]
    if "Component" in shown and "Content" in shown and shown.index("Content") == shown.index("Component") + 1:
        i = shown.index("Component")
        values[i] = values[i] + ":"
    return " ".join(v for v in values if v != "")


def _windows(path: Path, columns: list[str], rows: list[dict[str, str]]) -> Iterable[dict[str, Any]]:
    for start in range(0, len(rows), WINDOW):
        chunk = rows[start:start + WINDOW]
        bad = [i + 1 for i, r in enumerate(chunk) if (r.get("Label") or "-").strip() != "-"]
        first = chunk[0].get("LineId") or str(start + 1)
        yield {
            "id": f"{path.stem}-L{first}",
            "system": "bgl" if "bgl" in path.name.lower() else path.name.split("_")[0].lower(),
            "lines": [log_text(r, columns) for r in chunk],
            "label": "anomalous" if bad else "normal",
            "anomaly_type": None,
            "anomalous_lines": bad,
        }


def _labels(path: Path) -> dict[str, str]:
    columns, rows = _read_csv(path)
    if not {"BlockId", "Label"} <= set(columns):
        raise DatasetLoadError(f"{path}: a LogHub label file has the columns BlockId,Label (found {','.join(columns)})")
    out = {}
    for r in rows:
        value = (r.get("Label") or "").strip().lower()
        if value not in ("normal", "anomaly"):
            raise DatasetLoadError(f"{path}: label {r.get('Label')!r} of {r.get('BlockId')!r} is not Normal or Anomaly")
        out[(r.get("BlockId") or "").strip()] = "anomalous" if value == "anomaly" else "normal"
    return out


def _sessions(path: Path, columns: list[str], rows: list[dict[str, str]],
              labels: dict[str, str]) -> Iterable[dict[str, Any]]:
    sessions: dict[str, list[str]] = {}
    for r in rows:
        found = _BLOCK.search(r.get("Content") or "")
        if found:
            sessions.setdefault(found.group(0), []).append(log_text(r, columns))
    for block, lines in sessions.items():
        yield {
            "id": block,
            "system": "hdfs",
            "lines": lines[:MAX_SESSION_LINES],
            "label": labels.get(block),  # None: not in the label file, skipped by to_sample
            "anomaly_type": None,
            "anomalous_lines": None,
            "truncated": len(lines) > MAX_SESSION_LINES,
        }


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterable[dict[str, Any]]:
    """The items of the bundled JSON lines, or of LogHub structured CSVs (see the module docstring)."""
    if not files:
        raise DatasetLoadError("loghub needs data files (the bundled data/loghub.jsonl, or LogHub CSVs)")
    label_files = [f for f in files if f.name == LABEL_FILE]
    labels: dict[str, str] = {}
    for f in label_files:
        labels.update(_labels(f))
    rows: list[dict[str, Any]] = []
    for f in files:
        if f in label_files:
            continue
        if f.suffix == ".jsonl":
            try:
                rows.extend(json.loads(line) for line in f.read_text(encoding="utf-8").splitlines() if line.strip())
            except (OSError, ValueError) as exc:
                raise DatasetLoadError(f"cannot read {f}: {exc}") from None
        elif f.suffix == ".csv":
            columns, table = _read_csv(f)
            if "Content" not in columns:
                raise DatasetLoadError(f"{f}: not a LogHub structured CSV (no Content column)")
            if "Label" in columns:
                rows.extend(_windows(f, columns, table))
            elif not label_files:
                raise DatasetLoadError(
                    f"{f} has no Label column: give its {LABEL_FILE} (BlockId,Label) in data_files too")
            else:
                rows.extend(_sessions(f, columns, table, labels))
        else:
            raise DatasetLoadError(f"{f}: loghub reads .jsonl items or LogHub *_structured.csv files")
    return rows


# --------------------------------------------------------------------------- samples and prompt


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One window; an HDFS block without a label is skipped."""
    if row.get("label") is None:
        return None
    if row["label"] not in LABELS:
        raise ValueError(f"{row['id']}: label {row['label']!r} is not one of {LABELS}")
    lines = [str(x) for x in row["lines"]]
    if not lines:
        raise ValueError(f"{row['id']}: no log lines")
    bad = row.get("anomalous_lines")
    if bad is not None and not all(1 <= int(n) <= len(lines) for n in bad):
        raise ValueError(f"{row['id']}: anomalous_lines {bad} point outside the {len(lines)} lines")
    return Sample(
        id=str(row["id"]),
        input="\n".join(lines),
        target=row["label"],
        subject=str(row.get("system") or "log"),
        metadata={
            "system": str(row.get("system") or "log"),
            "lines": lines,
            "anomaly_type": row.get("anomaly_type"),
            "anomalous_lines": None if bad is None else [int(n) for n in bad],
        },
    )


def prompt(sample: Sample) -> str:
    """The numbered log lines and the answer format; only ``metadata.lines`` is shown."""
    lines = sample.metadata["lines"]
    name, unit = _SYSTEMS.get(sample.metadata["system"], (sample.metadata["system"], "consecutive lines"))
    width = len(str(len(lines)))
    numbered = "\n".join(f"{i:>{width}} | {line}" for i, line in enumerate(lines, 1))
    return PROMPT.format(system_name=name, count=len(lines), unit=unit, lines=numbered)


# --------------------------------------------------------------------------- scoring


def normalize_verdict(text: str | None) -> str | None:
    """``anomalous`` / ``normal`` from a verdict value, or None."""
    if not text:
        return None
    low = text.lower()
    if re.search(r"\b(no|not|without)\b[\w\s]{0,12}anomal", low):
        return "normal"
    if re.search(r"anomal|abnormal|\bfailure\b|\bincident\b", low):
        return "anomalous"
    if re.search(r"\bnormal\b", low):
        return "normal"
    return None


def parse_reply(reply: str) -> tuple[str | None, list[int] | None]:
    """``(verdict, lines)``: the VERDICT line (else the last anomaly/normal word) and the LINES numbers."""
    text = strip_reasoning(reply)
    verdict = normalize_verdict(labelled_field(text, "VERDICT", "ANSWER", "LABEL", "CLASSIFICATION"))
    if verdict is None:
        words = re.findall(r"\b(anomal\w*|abnormal|normal)\b", text, re.I)
        verdict = normalize_verdict(words[-1]) if words else None
    lines_text = labelled_field(text, "LINES", "LINE", "ANOMALOUS LINES")
    lines = None if lines_text is None else sorted({int(n) for n in re.findall(r"\d+", lines_text)})
    return verdict, lines


def line_f1(predicted: list[int], gold: list[int]) -> float:
    """F1 of the flagged line numbers; 1.0 when both are empty."""
    if not gold and not predicted:
        return 1.0
    hit = len(set(predicted) & set(gold))
    return 2 * hit / (len(set(predicted)) + len(set(gold)))


def score_loghub(reply: str, sample: Sample) -> Score:
    """Correct iff the verdict matches the label; the line F1 is kept in the metadata."""
    if not strip_reasoning(reply).strip():
        return Score.unscorable("empty reply", expected=sample.target)
    verdict, lines = parse_reply(reply)
    if verdict is None:
        return Score.unscorable("no ANOMALY / NORMAL verdict in the reply", expected=sample.target)
    gold_lines = sample.metadata["anomalous_lines"]
    f1 = None
    if gold_lines is not None and lines is not None:
        f1 = round(line_f1(lines if verdict == "anomalous" else [], gold_lines), 4)
    return Score(correct=verdict == sample.target, extracted=verdict, expected=sample.target,
                 metadata={"predicted": verdict, "gold": sample.target, "lines": lines, "gold_lines": gold_lines,
                           "line_f1": f1, "anomaly_type": sample.metadata["anomaly_type"]})


def summarize_loghub(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Precision, recall and F1 of the anomaly class, the confusion counts and the mean line F1."""
    pred: list[str] = []
    gold: list[str] = []
    line_scores: list[float] = []
    for r in records:
        if r.get("error") is not None or r.get("expected") not in LABELS:
            continue
        meta = r.get("scoring_metadata") or {}
        gold.append(str(r["expected"]))
        pred.append(str(meta.get("predicted") or "none"))
        if isinstance(meta.get("line_f1"), (int, float)) and r["expected"] == "anomalous":
            line_scores.append(float(meta["line_f1"]))
    if not gold:
        return {"anomaly_precision": None, "anomaly_recall": None, "anomaly_f1": None, "confusion": None,
                "mean_line_f1": None}
    precision, recall, f1 = precision_recall_f1(pred, gold, positive="anomalous")
    confusion = {
        "true_positive": sum(p == g == "anomalous" for p, g in zip(pred, gold)),
        "false_positive": sum(p == "anomalous" != g for p, g in zip(pred, gold)),
        "false_negative": sum(g == "anomalous" != p for p, g in zip(pred, gold)),
        "true_negative": sum(g == "normal" and p != "anomalous" for p, g in zip(pred, gold)),
        "unscored": sum(p == "none" for p in pred),
    }
    return {
        "anomaly_precision": round(precision, 4),
        "anomaly_recall": round(recall, 4),
        "anomaly_f1": round(f1, 4),
        "confusion": confusion,
        "mean_line_f1": round(sum(line_scores) / len(line_scores), 4) if line_scores else None,
    }


BENCHMARK = Benchmark(
    name="loghub",
    category="agentic",
    description="Log anomaly detection over HDFS/BGL-style windows (generated; or real LogHub structured CSVs)",
    bundled_files=("data/loghub.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    read_rows=read_rows,
    scorer="loghub",
    scoring="ANOMALY/NORMAL verdict (accuracy; anomaly-class P/R/F1 in the summary)",
    sample_count=40,
    summarize_extra=summarize_loghub,
)


def test_loghub(sample: Sample, response: Reply, score: Any) -> None:
    """Correct iff the verdict matches the window's label."""
    score(score_loghub(response.text, sample))


@register_scorer("loghub", needs_sample=True)
def record_loghub(record: dict[str, Any], sample: Sample) -> Score:
    """loghub: the ANOMALY / NORMAL verdict against the window's label."""

    result: Score = score_loghub(answer_of(record), sample)
    return result
