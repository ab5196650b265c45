"""Turn public judge datasets into gold sets (rows with ``input``, ``output``, ``gold``, ...).

* :func:`llmbar_rows` - LLMBar pairwise (``pairwise``; gold ``"1"``/``"2"``).
* :func:`halueval_rows` - HaluEval general (``closed_qa``; gold = *not* hallucinated).
* :func:`wmt_mqm_rows` - WMT MQM segment scores (``translation``; gold = :func:`mqm_level`).
* :func:`bfcl_rows` - BFCL questions + possible answers (``tool_call_accuracy``);
  :func:`bfcl_reference_call` builds a call that satisfies a ground truth.

:func:`write_jsonl` writes rows as a JSONL gold set; structured cells are stored as
JSON text so that Arrow does not merge object keys across rows.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: Upper bounds (MQM score >= bound) of the translation levels 4, 3, 2, 1; anything lower is 0.
MQM_LEVEL_BOUNDS = ((4, -0.5), (3, -2.0), (2, -5.0), (1, -10.0))

HALUEVAL_CRITERIA = "The response contains no hallucinated content: nothing false, fabricated or unsupported."
_TAG = re.compile(r"</?v>")


def mqm_level(score: float) -> int:
    """MQM segment score (<= 0, 0 best; Major = 5, Minor = 1, Minor punctuation = 0.1) to a 0-4 level.

    ========  ==============================  =====================================
    level     MQM score                       typically
    ========  ==============================  =====================================
    4         ``score >= -0.5``               no error, or a few punctuation slips
    3         ``-2 <= score < -0.5``          one or two minor errors
    2         ``-5 <= score < -2``            several minor errors, or one major
    1         ``-10 <= score < -5``           a major plus minors, or two majors
    0         ``score < -10``                 three+ majors, or a non-translation
    ========  ==============================  =====================================
    """
    for level, bound in MQM_LEVEL_BOUNDS:
        if score >= bound:
            return level
    return 0


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write gold rows as JSONL, JSON-encoding list/dict cells (except ``gold``)."""
    with Path(path).open("w", encoding="utf-8") as f:
        for row in rows:
            out = {k: (json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) and k != "gold" else v)
                   for k, v in row.items()}
            f.write(json.dumps(out, ensure_ascii=False) + "\n")
    return Path(path)


def llmbar_rows(dataset_json: Path, prefix: str = "llmbar") -> list[dict[str, Any]]:
    """LLMBar ``dataset.json`` (``input``, ``output_1``, ``output_2``, ``label``) as pairwise gold rows."""
    data = json.loads(Path(dataset_json).read_text(encoding="utf-8"))
    return [
        {"id": f"{prefix}-{i}", "input": r["input"], "output_1": r["output_1"], "output_2": r["output_2"],
         "gold": str(r["label"]).strip()}
        for i, r in enumerate(data)
    ]


def halueval_rows(general_data: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """HaluEval ``general_data.json`` as ``closed_qa`` rows: gold True when ``hallucination == "no"``.

    Ids are ``halueval-<line index>`` because the upstream ``ID`` is not unique.
    """
    rows: list[dict[str, Any]] = []
    with Path(general_data).open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if limit is not None and len(rows) >= limit:
                break
            if not line.strip():
                continue
            r = json.loads(line)
            rows.append({"id": f"halueval-{i}", "input": r["user_query"], "output": r["chatgpt_response"],
                         "criteria": HALUEVAL_CRITERIA, "gold": r["hallucination"].strip().lower() == "no",
                         "hallucination_spans": r.get("hallucination_spans") or []})
    return rows


def wmt_mqm_rows(annotations_tsv: Path, scores_tsv: Path, *, source_language: str = "en",
                 target_language: str = "de", reference_system: str = "ref",
                 include_reference: bool = False) -> list[dict[str, Any]]:
    """WMT MQM files as ``translation`` rows: one per (system, segment), gold = ``mqm_level(mqm_avg_score)``.

    Source and target come from the annotation file (``<v>`` error tags stripped);
    the reference system's target becomes ``expected``. The score file is split on
    any whitespace (its header uses spaces, its rows a tab then a space) and its
    ``ref-A`` system is the annotation file's ``ref``.
    """
    texts: dict[tuple[str, str], tuple[str, str]] = {}
    with Path(annotations_tsv).open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        col = {name: i for i, name in enumerate(header)}
        for row in reader:
            key = (row[col["system"]], row[col["seg_id"]])
            texts.setdefault(key, (_TAG.sub("", row[col["source"]]), _TAG.sub("", row[col["target"]])))
    rows = []
    lines = Path(scores_tsv).read_text(encoding="utf-8").splitlines()[1:]
    for line in lines:
        if not line.strip():
            continue
        system, score, seg = re.split(r"[\t ]+", line.strip())
        name = reference_system if system.startswith(reference_system + "-") else system
        if score == "None" or (name == reference_system and not include_reference) or (name, seg) not in texts:
            continue
        source, target = texts[(name, seg)]
        reference = texts.get((reference_system, seg), (None, None))[1]
        value = float(score)
        rows.append({"id": f"{name}-{seg}", "input": source, "output": target, "expected": reference,
                     "gold": mqm_level(value), "mqm_score": value, "system": name,
                     "source_language": source_language, "target_language": target_language})
    return rows


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def bfcl_rows(questions: Path, answers: Path, language: str = "python") -> list[dict[str, Any]]:
    """BFCL question + possible-answer files (JSON Lines, same order) as ``tool_call_accuracy`` rows.

    The rows have no ``output``."""
    gold = {a["id"]: a["ground_truth"] for a in _read_jsonl(answers)}
    rows = []
    for q in _read_jsonl(questions):
        turns = q["question"][0] if q["question"] and isinstance(q["question"][0], list) else q["question"]
        text = "\n".join(m.get("content", "") for m in turns if m.get("role") == "user")
        rows.append({"id": q["id"], "input": text, "expected": gold[q["id"]], "context": q["function"],
                     "language": language})
    return rows


def bfcl_reference_call(ground_truth: Sequence[dict[str, Any]], choice: int = 0,
                        functions: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """Calls ``[{name: {param: value}}]`` that satisfy a BFCL ground truth.

    Each parameter takes its ``choice``-th acceptable value (clamped to the list);
    a parameter whose pick is ``""`` (may be omitted) is left out, unless the
    function spec in ``functions`` marks it required: then its first non-empty
    acceptable value is used. Acceptable dicts are resolved the same way, recursively.
    """
    required = {f.get("name"): set(f.get("parameters", {}).get("required", [])) for f in functions}

    def pick(options: Any, must: bool = False) -> Any:
        if not isinstance(options, list) or not options:
            return options
        candidates = [o for o in options if o != ""] if must else options
        candidates = candidates or options
        return _resolve(candidates[min(choice, len(candidates) - 1)])

    def _resolve(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: pick(v) for k, v in value.items() if pick(v) != ""}
        if isinstance(value, list):
            return [_resolve(v) for v in value]
        return value

    calls = []
    for call in ground_truth:
        (name, params), = call.items()
        must = required.get(name, set())
        picked = {p: pick(v, p in must) for p, v in params.items()}
        calls.append({name: {p: v for p, v in picked.items() if v != ""}})
    return calls
