"""webchorearena's string and URL evaluators against webarena-verified's, on the same answers.

webarena-verified (ServiceNow's verified WebArena, PyPI) evaluates WebArena tasks offline: a structured agent
response (``AgentResponseEvaluator``) and the browser's network trace (``NetworkEventEvaluator``). It pins
pydantic==2.12.0 and more, so ``make webarena-verified`` installs it in a virtualenv of its own
(``.venv-webarena-verified``, or ``$JEVAL_WEBARENA_VERIFIED_PYTHON``); ``webarena_verified_driver.py`` runs its
evaluators there in one subprocess on every case of :data:`CASES`, and webchorearena's evaluators run here on the
same answers:

* a string case is a WebArena ``reference_answers`` (``exact_match`` or ``must_include``; no ``fuzzy_match``, which
  is an LLM judge) and the agent's answer as a list of values. webchorearena's ``string_match`` reads the values
  joined by ", " (how a WebArena agent writes them); webarena-verified reads them as ``retrieved_data`` and
  expects the references (an ``a |OR| b`` reference becomes a set of alternatives), as its own dataset converts
  WebArena's ``must_include`` lists;
* a URL case is a ``reference_url`` (`` |OR| `` alternatives) and the page's final URL. webchorearena's
  ``url_match`` reads the final URL; webarena-verified expects the last navigation of the trace to be the
  reference (alternatives as a list).

A case either agrees (both correct, or both not) or names its documented difference, which must show in
docs/web.md (section "webarena-verified") and must really differ: a difference that stops differing fails the
test, as does a disagreement nobody declared.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.benchmarks.webchorearena import evaluators as ev

ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("webarena_verified_driver.py")
DOCS = ROOT / "docs" / "web.md"
PYTHON_ENV = "JEVAL_WEBARENA_VERIFIED_PYTHON"
SITE = "http://127.0.0.1:7770"
VERSION = "1.2.3"

#: The documented differences (docs/web.md, "webarena-verified"), by id.
DIFFERENCES = ("containment", "extra-values", "text-normalization", "url-normalization")


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    kind: str
    """``exact_match`` | ``must_include`` (string cases) or ``url``."""
    reference: Any
    """The WebArena reference: a string (exact_match, url) or a list (must_include)."""
    answer: Any
    """The agent's values (string cases) or the final URL's path (url cases)."""
    ours: bool
    """webchorearena's verdict (correct or not)."""
    differs: str | None = None
    """The documented difference that makes webarena-verified's verdict the other one, or None (they agree)."""
    ignored: tuple[str, ...] = ()
    """webarena-verified's ``ignored_query_params_patterns`` (a url case)."""


CASES = (
    # exact_match
    Case("exact-same", "exact_match", "Quest Lumaflex Band", ["Quest Lumaflex Band"], True),
    Case("exact-case-and-spaces", "exact_match", "Quest Lumaflex Band", ["  quest LUMAFLEX band "], True),
    Case("exact-enclosing-quotes", "exact_match", "42", ['"42"'], True),
    Case("exact-other-value", "exact_match", "42", ["41"], False),
    Case("exact-number-format", "exact_match", "42", ["42.0"], False),
    Case("exact-trailing-period", "exact_match", "42", ["42."], False, "text-normalization"),
    Case("exact-inner-spaces", "exact_match", "Quest Lumaflex Band", ["Quest  Lumaflex Band"], False,
         "text-normalization"),
    Case("exact-trademark-sign", "exact_match", "Quest Lumaflex\u2122 Band", ["Quest Lumaflex Band"], False,
         "text-normalization"),
    Case("exact-in-a-sentence", "exact_match", "42", ["The total is 42"], False),
    # must_include
    Case("include-same", "must_include", ["Impulse Duffle"], ["Impulse Duffle"], True),
    Case("include-in-a-sentence", "must_include", ["42"], ["The total is 42"], True, "containment"),
    Case("include-all-any-order", "must_include", ["Impulse Duffle", "Overnight Duffle"],
         ["Overnight Duffle", "Impulse Duffle"], True),
    Case("include-one-missing", "must_include", ["Impulse Duffle", "Overnight Duffle"], ["Impulse Duffle"], False),
    Case("include-one-extra", "must_include", ["Impulse Duffle", "Overnight Duffle"],
         ["Impulse Duffle", "Overnight Duffle", "Joust Duffle Bag"], True, "extra-values"),
    Case("include-alternatives", "must_include", ["Sprite Stasis Ball 65 cm |OR| Cruise Stasis Ball 65 cm"],
         ["Cruise Stasis Ball 65 cm"], True),
    Case("include-no-alternative", "must_include", ["Sprite Stasis Ball 65 cm |OR| Cruise Stasis Ball 65 cm"],
         ["Sprite Stasis Ball 55 cm"], False),
    Case("include-one-char-token", "must_include", ["3"], ["3 orders"], True, "containment"),
    Case("include-one-char-inside-a-number", "must_include", ["3"], ["13"], False),
    Case("include-hyphens-as-spaces", "must_include", ["Hawkeye Yoga Short-32-Blue"], ["Hawkeye Yoga Short 32 Blue"],
         False, "text-normalization"),
    Case("include-hyphens-kept", "must_include", ["Hawkeye Yoga Short-32-Blue"], ["hawkeye yoga short-32-blue"], True),
    # url_match (GOLD in PRED)
    Case("url-same", "url", "__SHOPPING__/sales/order", "/sales/order", True),
    Case("url-trailing-slash-final", "url", "__SHOPPING__/sales/order", "/sales/order/", True),
    Case("url-trailing-slash-reference", "url", "__SHOPPING__/sales/order/", "/sales/order", True),
    Case("url-path-case", "url", "__SHOPPING__/Sales/Order", "/sales/order", True),
    Case("url-other-path", "url", "__SHOPPING__/sales/order", "/sales/invoice", False),
    Case("url-reference-is-a-prefix", "url", "__SHOPPING__/sales", "/sales/order", True, "containment"),
    Case("url-reference-inside-the-path", "url", "__SHOPPING__/order", "/sales/order/view", False),
    Case("url-query-same", "url", "__SHOPPING__/search?q=shoes", "/search?q=shoes", True),
    Case("url-query-value-case", "url", "__SHOPPING__/search?q=shoes", "/search?q=Shoes", True),
    Case("url-query-order", "url", "__SHOPPING__/search?a=1&b=2", "/search?b=2&a=1", True),
    Case("url-query-other-value", "url", "__SHOPPING__/search?q=shoes", "/search?q=boots", False),
    Case("url-query-missing", "url", "__SHOPPING__/search?q=shoes&cat=3", "/search?q=shoes", False),
    Case("url-query-extra", "url", "__SHOPPING__/search?q=shoes", "/search?q=shoes&page=2", True, "extra-values"),
    Case("url-query-extra-ignored", "url", "__SHOPPING__/search?q=shoes", "/search?q=shoes&page=2", True,
         ignored=("page",)),
    Case("url-query-on-a-plain-reference", "url", "__SHOPPING__/sales/order", "/sales/order?status=pending", True,
         "extra-values"),
    Case("url-query-encoding", "url", "__SHOPPING__/search?q=yoga%20mat", "/search?q=yoga+mat", True),
    Case("url-alternatives", "url", "__SHOPPING__/sales/order |OR| __SHOPPING__/sales/invoice", "/sales/invoice",
         True),
    Case("url-alternatives-none", "url", "__SHOPPING__/sales/order |OR| __SHOPPING__/sales/invoice",
         "/sales/shipment", False),
    Case("url-fragment", "url", "__SHOPPING__/sales/order", "/sales/order#top", True, "url-normalization"),
    Case("url-other-port", "url", "__SHOPPING__/sales/order", "http://127.0.0.1:7780/sales/order", False),
)


def ours(case: Case) -> bool:
    """webchorearena's verdict on the case."""
    if case.kind == "url":
        final = case.answer if case.answer.startswith("http") else SITE + case.answer
        config = {"eval": {"reference_url": case.reference.replace("__SHOPPING__", SITE)}}
        return ev.url_match(config, final).score == 1.0
    config = {"intent": "cross-check", "eval": {"reference_answers": {case.kind: case.reference}}}
    return ev.string_match(config, ", ".join(case.answer)).score == 1.0


def verified_case(case: Case) -> dict[str, Any]:
    """The case as the driver reads it (webarena-verified's form of the same reference and answer)."""
    if case.kind == "url":
        alternatives = [u.strip() for u in case.reference.split(" |OR| ")]
        final = case.answer if case.answer.startswith("http") else SITE + case.answer
        return {"id": case.id, "kind": "url", "expected": alternatives if len(alternatives) > 1 else alternatives[0],
                "final": final, "ignored_query_params_patterns": list(case.ignored)}
    references = [case.reference] if case.kind == "exact_match" else list(case.reference)
    expected = [alts if len(alts := [a.strip() for a in r.split(" |OR| ")]) > 1 else alts[0] for r in references]
    return {"id": case.id, "kind": "string", "expected": expected, "answer": list(case.answer)}


def verified_python() -> str:
    """The interpreter that has webarena-verified; the test fails saying how to install it when there is none."""
    given = os.environ.get(PYTHON_ENV)
    python = Path(given) if given else ROOT / ".venv-webarena-verified" / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import webarena_verified"], capture_output=True, text=True,
                           check=False) if python.exists() else None
    if probe is None or probe.returncode != 0:
        why = probe.stderr.strip().splitlines()[-1] if probe is not None and probe.stderr.strip() else "missing"
        pytest.fail(f"webarena-verified is not installed at {python} ({why}): run `make webarena-verified` "
                    f"(a virtualenv of its own: it pins pydantic==2.12.0), or set {PYTHON_ENV}")
    return str(python)


@pytest.fixture(scope="module")
def verified() -> dict[str, dict[str, Any]]:
    """webarena-verified's verdict on every case, from one run of the driver."""
    given = json.dumps({"site_url": SITE, "cases": [verified_case(c) for c in CASES]})
    done = subprocess.run([verified_python(), str(DRIVER)], input=given, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, dict[str, Any]] = json.loads(done.stdout)
    return result


def test_the_pinned_release_ran(verified: dict[str, dict[str, Any]]) -> None:
    """Every case was evaluated, without an evaluator error, by the release the Makefile pins."""
    assert set(verified) == {c.id for c in CASES}
    assert {v["version"] for v in verified.values()} == {VERSION}
    assert [(k, v["error"]) for k, v in verified.items() if v["error"]] == []
    # the other evaluator of a case (the navigate task's answer) passes, so a case's verdict is its own evaluator's
    assert [k for k, v in verified.items() if not v["others_pass"]] == []


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_verdicts_agree_or_differ_as_documented(case: Case, verified: dict[str, dict[str, Any]]) -> None:
    """webchorearena's verdict is the stated one; webarena-verified's is the same unless a documented difference
    says otherwise, and then it really is the other one."""
    assert ours(case) is case.ours
    theirs = verified[case.id]["score"] == 1.0
    if case.differs is None:
        assert theirs is case.ours, f"{case.id}: webarena-verified says {theirs}, webchorearena {case.ours}"
    else:
        assert case.differs in DIFFERENCES
        assert theirs is not case.ours, f"{case.id}: declared to differ ({case.differs}) but both say {theirs}"


def test_every_difference_is_documented_and_used() -> None:
    """docs/web.md names each difference (a table row starting with its id); each is shown by some case."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## webarena-verified"):]
    for difference in DIFFERENCES:
        assert re.search(rf"^\| `{re.escape(difference)}` \|", section, re.M), f"{difference} is not in docs/web.md"
    assert {c.differs for c in CASES if c.differs} == set(DIFFERENCES)
    agree = sum(1 for c in CASES if c.differs is None)
    assert f"{len(CASES)} cases" in section
    assert f"agree on {agree} cases; the other {len(CASES) - agree} show" in section
    assert f"webarena-verified=={VERSION}" in text or f"webarena-verified {VERSION}" in text
