"""Free code evaluators: exact_match, classification, numeric, json_match and trajectory."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any

from pytest_jeval.scoring.judging.cases import CaseSpec
from pytest_jeval.scoring.judging.registry import CodeEvaluator, EvaluatorError, GoldItem, Judgment, register
from pytest_jeval.scoring.numeric import extract_final_number, parse_number, values_close

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_+-]*\s*\n(?P<body>.*?)\n?\s*```\s*$", re.DOTALL)


def strip_fence(text: str) -> str:
    """The body of a reply wrapped in one markdown code fence, else the text itself."""
    m = _FENCE.match(text or "")
    return m.group("body") if m else (text or "")


def normalize_ws_case(text: Any) -> str:
    """Collapse runs of whitespace, strip, and case-fold."""
    return " ".join(str(text if text is not None else "").split()).casefold()


def _need(item: GoldItem, field: str) -> Any:
    value = getattr(item, field)
    if value is None:
        raise EvaluatorError(f"the gold item has no {field!r}")
    return value


@register
class ExactMatch(CodeEvaluator):
    """Output equals expected after whitespace and case normalisation."""

    name = "exact_match"
    description = "Output equals expected after whitespace and case normalisation."
    required_columns = ("output", "expected")

    def judge(self, item: GoldItem, spec: CaseSpec) -> Judgment:
        """True when ``normalize(output) == normalize(expected)``."""
        out, exp = normalize_ws_case(item.output), normalize_ws_case(_need(item, "expected"))
        return self.decided(out == exp, normalized_output=out, normalized_expected=exp)


_LABEL_STRIP = " \t\r\n.,:;!?\"'`*()[]{}"


def normalize_label(text: Any) -> str:
    """A class label for comparison: whitespace/case normalised, surrounding punctuation and quotes removed."""
    return normalize_ws_case(text).strip(_LABEL_STRIP)


@register
class Classification(CodeEvaluator):
    """The predicted label in the output equals the expected label."""

    name = "classification"
    description = "Predicted label in output equals the expected label."
    required_columns = ("output", "expected")

    def judge(self, item: GoldItem, spec: CaseSpec) -> Judgment:
        """True when the normalised labels are equal (``"Positive."`` equals ``positive``)."""
        out, exp = normalize_label(item.output), normalize_label(_need(item, "expected"))
        return self.decided(bool(out) and out == exp, predicted_label=out, expected_label=exp)


@register
class Numeric(CodeEvaluator):
    """The final number in the output equals the expected number."""

    name = "numeric"
    description = ("The final number stated in the output equals the expected number "
                   "(whole numbers exactly, others to 1e-6 relative).")
    required_columns = ("output", "expected")

    def judge(self, item: GoldItem, spec: CaseSpec) -> Judgment:
        """Compare the last number in the output with ``expected``; no number is a False decision."""
        gold = parse_number(_need(item, "expected"))
        if gold is None:
            raise EvaluatorError(f"expected {item.expected!r} is not a number")
        text = item.output if isinstance(item.output, str) else str(item.output)
        extracted = extract_final_number(text)
        value = parse_number(extracted) if extracted is not None else None
        return self.decided(value is not None and values_close(value, gold), extracted=extracted, expected_value=gold)


def _json_value(value: Any) -> tuple[bool, Any]:
    """(parsed, value): strings are parsed as JSON (fences stripped); other values are taken as they are."""
    if not isinstance(value, str):
        return True, value
    try:
        return True, json.loads(strip_fence(value))
    except ValueError:
        return False, None


def json_equal(a: Any, b: Any) -> bool:
    """Structural JSON equality: object key order ignored, array order kept, 1 == 1.0, true != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@register
class JsonMatch(CodeEvaluator):
    """The output parses as JSON and equals the expected JSON structurally."""

    name = "json_match"
    description = "Output parses as JSON equal to expected (key order ignored, array order kept, 1 == 1.0)."
    required_columns = ("output", "expected")

    def judge(self, item: GoldItem, spec: CaseSpec) -> Judgment:
        """Unparseable output is a False decision; unparseable expected is a gold error."""
        ok, expected = _json_value(_need(item, "expected"))
        if not ok:
            raise EvaluatorError(f"expected is not valid JSON: {str(item.expected)[:80]!r}")
        parsed, output = _json_value(item.output)
        if not parsed:
            return self.decided(False, output_parsed=False)
        return self.decided(json_equal(output, expected), output_parsed=True)


_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")


def _steps(value: Any) -> list[str]:
    """A trajectory as step identities: JSON list items (a dict's ``name``/``tool``/``action``), or lines."""
    if isinstance(value, str):
        ok, parsed = _json_value(value)
        if ok and isinstance(parsed, list):
            value = parsed
        else:
            return [normalize_ws_case(_MARKER.sub("", line)) for line in value.splitlines() if line.strip()]
    if not isinstance(value, (list, tuple)):
        raise EvaluatorError(f"a trajectory must be a list or lines of text, got {type(value).__name__}")
    out = []
    for step in value:
        if isinstance(step, dict):
            key = next((k for k in ("name", "tool", "action", "step") if k in step), None)
            out.append(normalize_ws_case(step[key]) if key else json.dumps(step, sort_keys=True))
        else:
            out.append(normalize_ws_case(step))
    return out


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two step sequences (insert, delete, substitute cost 1)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def trajectory_similarity(predicted: Sequence[str], expected: Sequence[str]) -> float:
    """``1 - levenshtein(predicted, expected) / max(len(predicted), len(expected))``; 1.0 for two empty ones."""
    longest = max(len(predicted), len(expected))
    return 1.0 if longest == 0 else 1.0 - edit_distance(predicted, expected) / longest


@register
class Trajectory(CodeEvaluator):
    """Step-sequence similarity between the agent's trajectory and the expected one."""

    name = "trajectory"
    description = ("Step-sequence similarity 1 - levenshtein/max_len between output and expected steps, "
                   "mapped to the scale.")
    kinds = ("score",)
    default_scale = (0, 1)
    required_columns = ("output", "expected")

    def judge(self, item: GoldItem, spec: CaseSpec) -> Judgment:
        """Similarity in [0, 1], mapped to a level with :meth:`CaseSpec.level_from_fraction`."""
        predicted, expected = _steps(item.output), _steps(_need(item, "expected"))
        similarity = trajectory_similarity(predicted, expected)
        return self.decided(spec.level_from_fraction(similarity), similarity=similarity,
                            predicted_steps=predicted, expected_steps=expected)


def first_text(value: Any | None) -> str:
    """A cell as text (JSON for structured values)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
