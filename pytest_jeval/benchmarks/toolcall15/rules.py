"""Rule-based scoring of a ToolCall-15 episode: 2 points (pass), 1 (partial) or 0 (fail).

A scenario's ``scoring`` holds ``pass`` (a list of checks that must all hold) and
``partial`` (alternatives, each ``{"why": ..., "checks": [...]}``; the first whose checks
all hold gives 1 point). Pass also needs the episode to have ended with a final answer
(``stop_reason = "final"``). Checks (each may set ``"not": true`` to negate it and
``"why"`` to describe it):

=========  ==========================================================================
check      holds when
=========  ==========================================================================
called     between ``min`` (default 1, or 0 when ``max`` is set) and ``max`` calls
           match ``tool`` (``*`` = any tool), ``args`` and ``ok`` (true: the call
           succeeded, false: it failed)
order      the ``steps`` (call patterns as for ``called``) match calls in this order
answer     the final answer contains ``any`` one of the phrases and ``all`` of them
number     the final answer has a number within ``tol`` (default 0.01) of ``value``
markers    the final answer has a phrase of a built-in set (``refusal``, ``failure``,
           ``clarification``)
final      the episode ended with an answer (not a limit or an error)
=========  ==========================================================================

An argument matcher is an object: ``eq`` (text, case and spacing ignored), ``any``
(one of these texts), ``contains`` (all these substrings), ``regex`` (searched,
case-insensitive), ``num`` (a JSON number within ``tol``, default 1e-6), ``includes``
(a list holding each of these texts), ``absent: true`` (not given); ``optional: true``
lets an omitted argument pass the other tests. Several keys must all hold.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_jeval.benchmarks.toolcall15.world import TOOLS
from pytest_jeval.core.episode import Episode, ToolCallRecord

CHECKS = ("called", "order", "answer", "number", "markers", "final")
MATCHER_KEYS = ("eq", "any", "contains", "regex", "num", "tol", "includes", "absent", "optional")
_CHECK_KEYS = {
    "called": {"tool", "args", "ok", "min", "max"},
    "order": {"steps"},
    "answer": {"any", "all"},
    "number": {"value", "tol"},
    "markers": {"set"},
    "final": set(),
}
_STEP_KEYS = {"tool", "args", "ok"}

MARKERS: dict[str, tuple[str, ...]] = {
    "refusal": (
        "can't", "cannot", "can not", "won't", "will not", "unable to", "not able to", "i'm sorry", "i am sorry",
        "i must decline", "decline", "not comfortable", "refuse", "not going to", "shouldn't", "should not",
        "not appropriate", "inappropriate", "not something i can",
    ),
    "failure": (
        "fail", "fails", "failed", "failure", "couldn't", "could not", "unable", "error", "not sent", "wasn't sent",
        "was not sent", "undeliverable", "unavailable", "bounced", "didn't go through", "did not go through",
        "not delivered", "wasn't delivered", "was not delivered", "undelivered", "rejected", "bounce",
        "not able to", "wasn't able", "was not able", "didn't send", "did not send", "unsuccessful",
    ),
    "clarification": (
        "which", "clarify", "do you mean", "did you mean", "confirm", "specify", "let me know", "?",
    ),
}
"""The built-in phrase sets of the ``markers`` check (case-insensitive)."""


def strip_nulls(value: Any) -> Any:
    """The value without null object members (a columnar loader fills absent keys with null)."""
    if isinstance(value, Mapping):
        return {str(k): strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value


def _text(value: str) -> str:
    return " ".join(value.replace("\u2019", "'").lower().split())


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def match_argument(spec: Mapping[str, Any], present: bool, value: Any) -> bool:
    """Whether one argument (given or not, and its value) meets a matcher object."""
    if not present:
        return bool(spec.get("absent") or spec.get("optional"))
    if spec.get("absent"):
        return False
    text = _text(value) if isinstance(value, str) else None
    for key, want in spec.items():
        if key == "eq" and not (text is not None and text == _text(str(want))):
            return False
        if key == "any" and not (text is not None and text in {_text(str(w)) for w in want}):
            return False
        if key == "contains" and not (text is not None and all(_text(str(w)) in text for w in want)):
            return False
        if key == "regex" and not (isinstance(value, str) and re.search(str(want), value, re.I)):
            return False
        if key == "num" and not (_is_number(value) and abs(float(value) - float(want)) <= float(spec.get("tol", 1e-6))):
            return False
        if key == "includes":
            items = {_text(v) for v in value if isinstance(v, str)} if isinstance(value, list) else set()
            if not all(_text(str(w)) in items for w in want):
                return False
    return True


@dataclasses.dataclass(frozen=True)
class CallPattern:
    """Which tool calls a ``called`` check or an ``order`` step counts."""

    tool: str
    args: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    ok: bool | None = None

    def matches(self, call: ToolCallRecord) -> bool:
        """True when the call is of this tool, with matching arguments and outcome."""
        if self.tool not in ("*", call.name):
            return False
        if self.ok is not None and call.ok != self.ok:
            return False
        if not self.args:
            return True
        parsed = call.parsed
        if parsed is None:
            return False
        return all(match_argument(spec, name in parsed, parsed.get(name)) for name, spec in self.args.items())


def _pattern(raw: Mapping[str, Any], where: str) -> CallPattern:
    tool = raw.get("tool")
    if not isinstance(tool, str) or (tool != "*" and tool not in TOOLS):
        raise ValueError(f"{where}: 'tool' must be '*' or one of {list(TOOLS)}, not {tool!r}")
    args = raw.get("args", {})
    if not isinstance(args, Mapping):
        raise ValueError(f"{where}: 'args' must be an object")
    for name, spec in args.items():
        if not isinstance(spec, Mapping) or not spec:
            raise ValueError(f"{where}: matcher for argument {name!r} must be a non-empty object")
        unknown = sorted(set(spec) - set(MATCHER_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown matcher keys {unknown} for {name!r}; known: {list(MATCHER_KEYS)}")
        for key in ("any", "contains", "includes"):
            if key in spec and not (isinstance(spec[key], list) and spec[key]):
                raise ValueError(f"{where}: matcher {key!r} for {name!r} must be a non-empty list")
        if "regex" in spec:
            re.compile(str(spec["regex"]))
    ok = raw.get("ok")
    if ok is not None and not isinstance(ok, bool):
        raise ValueError(f"{where}: 'ok' must be true or false")
    return CallPattern(tool=tool, args={str(k): dict(v) for k, v in args.items()}, ok=ok)


@dataclasses.dataclass(frozen=True)
class Check:
    """One rule about an episode."""

    kind: str
    params: Mapping[str, Any]
    negate: bool = False
    why: str = ""
    patterns: tuple[CallPattern, ...] = ()

    def describe(self) -> str:
        """The ``why`` text, else the check as compact JSON."""
        if self.why:
            return self.why
        body = json.dumps(dict(self.params), sort_keys=True, separators=(",", ":"))
        return f"{'not ' if self.negate else ''}{self.kind} {body}"

    def holds(self, episode: Episode) -> bool:
        """Whether the episode meets the check (after ``not``)."""
        return _evaluate(self, episode) != self.negate


def parse_check(raw: Mapping[str, Any], where: str) -> Check:
    """A :class:`Check` from its JSON object; ValueError naming ``where`` when it is malformed."""
    kind = raw.get("check")
    if kind not in CHECKS:
        raise ValueError(f"{where}: unknown check {kind!r}; known: {list(CHECKS)}")
    params = {k: v for k, v in raw.items() if k not in ("check", "not", "why")}
    unknown = sorted(set(params) - _CHECK_KEYS[kind])
    if unknown:
        raise ValueError(f"{where}: unknown keys {unknown} for check {kind!r}")
    patterns: tuple[CallPattern, ...] = ()
    if kind == "called":
        patterns = (_pattern(params, where),)
        for key in ("min", "max"):
            if key in params and not (isinstance(params[key], int) and params[key] >= 0):
                raise ValueError(f"{where}: {key!r} must be a whole number >= 0")
    elif kind == "order":
        steps = params.get("steps")
        if not isinstance(steps, list) or len(steps) < 2:
            raise ValueError(f"{where}: 'steps' must list at least two call patterns")
        for i, step in enumerate(steps):
            if not isinstance(step, Mapping) or set(step) - _STEP_KEYS:
                raise ValueError(f"{where}: step {i} may hold only {sorted(_STEP_KEYS)}")
        patterns = tuple(_pattern(s, f"{where} step {i}") for i, s in enumerate(steps))
    elif kind == "answer":
        if not params.get("any") and not params.get("all"):
            raise ValueError(f"{where}: an answer check needs 'any' or 'all' phrases")
        for key in ("any", "all"):
            phrases = params.get(key, ["-"])
            if not (isinstance(phrases, list) and all(isinstance(p, str) and p for p in phrases)):
                raise ValueError(f"{where}: {key!r} must be a list of phrases")
    elif kind == "number":
        if not _is_number(params.get("value")):
            raise ValueError(f"{where}: a number check needs a numeric 'value'")
    elif kind == "markers" and params.get("set") not in MARKERS:
        raise ValueError(f"{where}: 'set' must be one of {list(MARKERS)}")
    return Check(kind=kind, params=params, negate=bool(raw.get("not", False)), why=str(raw.get("why", "")),
                 patterns=patterns)


def contains_phrase(text: str, phrase: str) -> bool:
    """Case-insensitive phrase search; a phrase edge that is a letter or digit must be a word edge."""
    needle = _text(phrase)
    head = r"(?<![a-z0-9])" if needle[:1].isalnum() else ""
    tail = r"(?![a-z0-9])" if needle[-1:].isalnum() else ""
    return re.search(head + re.escape(needle) + tail, _text(text)) is not None


_NUMBER = re.compile(r"(?<![\d.])-?\d[\d,]*(?:\.\d+)?")


def numbers_in(text: str) -> list[float]:
    """The numbers written in a text (``$15,180.00`` -> 15180.0)."""
    out = []
    for m in _NUMBER.finditer(text):
        raw = m.group().replace(",", "")
        try:
            out.append(float(raw))
        except ValueError:  # a lone "-" cannot match; keep the guard explicit
            continue
    return out


def _in_order(patterns: Sequence[CallPattern], calls: Sequence[ToolCallRecord]) -> bool:
    position = 0
    for pattern in patterns:
        while position < len(calls) and not pattern.matches(calls[position]):
            position += 1
        if position == len(calls):
            return False
        position += 1
    return True


def _evaluate(check: Check, episode: Episode) -> bool:
    p = check.params
    answer = episode.final_text if episode.stop_reason == "final" else ""
    if check.kind == "called":
        count = sum(1 for c in episode.tool_calls if check.patterns[0].matches(c))
        return int(p.get("min", 0 if "max" in p else 1)) <= count and ("max" not in p or count <= int(p["max"]))
    if check.kind == "order":
        return _in_order(check.patterns, episode.tool_calls)
    if check.kind == "answer":
        ok_any = not p.get("any") or any(contains_phrase(answer, w) for w in p["any"])
        return ok_any and all(contains_phrase(answer, w) for w in p.get("all", []))
    if check.kind == "number":
        tol = float(p.get("tol", 0.01))
        return any(abs(n - float(p["value"])) <= tol for n in numbers_in(answer))
    if check.kind == "markers":
        return any(contains_phrase(answer, w) for w in MARKERS[str(p["set"])])
    return episode.stop_reason == "final"  # "final"


@dataclasses.dataclass(frozen=True)
class Partial:
    """One way to earn 1 point."""

    why: str
    checks: tuple[Check, ...]


@dataclasses.dataclass(frozen=True)
class Rules:
    """A scenario's scoring rules."""

    passing: tuple[Check, ...]
    partial: tuple[Partial, ...] = ()


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The points an episode earned and why."""

    points: int
    reasons: list[str]


def parse_rules(raw: Mapping[str, Any], where: str) -> Rules:
    """:class:`Rules` from a scenario's ``scoring`` object (``pass`` and ``partial``)."""
    unknown = sorted(set(raw) - {"pass", "partial"})
    if unknown:
        raise ValueError(f"{where}: unknown scoring keys {unknown}")
    passing = raw.get("pass")
    if not isinstance(passing, list) or not passing:
        raise ValueError(f"{where}: 'pass' must be a non-empty list of checks")
    partial_raw = raw.get("partial", [])
    if not isinstance(partial_raw, list):
        raise ValueError(f"{where}: 'partial' must be a list")
    partial = []
    for i, alt in enumerate(partial_raw):
        if not isinstance(alt, Mapping) or set(alt) != {"why", "checks"} or not alt["checks"]:
            raise ValueError(f"{where}: partial {i} must be {{'why': ..., 'checks': [...]}}")
        partial.append(Partial(str(alt["why"]), tuple(parse_check(c, f"{where} partial {i}") for c in alt["checks"])))
    return Rules(passing=tuple(parse_check(c, f"{where} pass {i}") for i, c in enumerate(passing)),
                 partial=tuple(partial))


def score_episode(rules: Rules, episode: Episode) -> Outcome:
    """2 when every pass check holds and the episode ended with an answer; else 1 when a
    partial alternative holds; else 0. The reasons name the missed checks."""
    missed = [c.describe() for c in rules.passing if not c.holds(episode)]
    if episode.stop_reason != "final":
        missed.insert(0, f"the episode ended with stop_reason={episode.stop_reason}, not a final answer")
    if not missed:
        return Outcome(2, ["pass"])
    reasons = [f"missed: {m}" for m in missed]
    for alt in rules.partial:
        if all(c.holds(episode) for c in alt.checks):
            return Outcome(1, [*reasons, f"partial: {alt.why}"])
    return Outcome(0, [*reasons, "no partial rule held"])
