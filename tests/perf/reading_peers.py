"""How pytest-jeval and the installed peer scorers read the answers of issue 29's section 1.

    PYTHONPATH=$PWD python tests/perf/reading_peers.py

Each case is a reply, a gold answer and the verdict a careful reader gives. The script scores every case
with pytest-jeval's scorer for that class and with each peer that is installed here (Math-Verify's
``verify(parse(gold), parse(reply))``; inspect_ai and lm-eval are named as not installed when they are
not), and prints, per class, how many of the cases each reader gets right, then every case a reader gets
wrong. Math-Verify gets the gold in its documented form, ``$gold$``. The inputs are the ones in ``tests/scoring/test_reading_peers.py`` (taken from the peers' own tests
where that file names a source), written out here again so this script stands alone. No peer code is
copied: a peer is only called when its package is installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

from pytest_jeval.scoring import score_answer_line, score_answer_word, score_mcq_multi, score_token_f1
from pytest_jeval.scoring.math_equiv import score_math
from pytest_jeval.scoring.numeric import score_numeric


@dataclass(frozen=True)
class Case:
    kind: str
    reply: str
    gold: str
    correct: bool  # what a careful reader says


CASES = [
    # a label or variable before the value (Math-Verify's tests)
    Case("label before value", "Final Answer: The largest $n$ is 34.", "34", True),
    Case("label before value", "Final Answer: The maximum number of points that could be in the domain of $f(x)$ "
         "is 19.", "19", True),
    Case("label before value", "Final Answer: The volume of $ABCDEFGH$ is 120. I hope it is correct.", "120", True),
    Case("label before value", "The final answer is: the value of $a_1$ is $\\frac{1}{2}$.", "\\frac{1}{2}", True),
    Case("label before value", "Final Answer: $x$ equals 7", "7", True),
    # negation
    Case("negation", "The answer is not 5, it is 6", "6", True),
    Case("negation", "The answer is not 5, it is 6", "5", False),
    Case("negation", "The answer isn't 5, it's 6.", "6", True),
    Case("negation", "Answer: not 5 but 6", "6", True),
    Case("negation", "The answer is 6, not 5", "6", True),
    # percentages (inspect_ai's and Math-Verify's tests)
    Case("percent", "The answer is 33.5%", "0.335", True),
    Case("percent", "The answer is 33.5\\%", "0.335", True),
    Case("percent", "The answer is $\\frac{1}{2}\\%$", "0.005", True),
    Case("percent", "The answer is 1/2 percent", "0.005", True),
    Case("percent", "The answer is 0.335", "33.5\\%", True),
    Case("percent", "\\boxed{28 percent}", "$28\\%$", True),
    Case("percent", "The answer is 0.5", "50", False),
    # several boxes against a set gold (Math-Verify's tests), and neighbours
    Case("several boxes", "\\boxed{(1, 2)}, \\boxed{(2, 1)}, \\boxed{(-1, -20)}, \\boxed{(-20, -1)}",
         "(2,1),(1,2),(-1,-20),(-20,-1)", True),
    Case("several boxes", "\\boxed{1} and \\boxed{2} and \\boxed{3}", "{1,2,3}", True),
    Case("several boxes", "\\boxed{1},\\boxed{2},\\boxed{3}", "{1,2,3}", True),
    Case("several boxes", "\\boxed{1} and \\boxed{2}", "{1,2,3}", False),
    Case("several boxes", "\\boxed{1} and \\boxed{2}", "2", True),
]

#: pytest-jeval's scorer for each class.
JEVAL: dict[str, Callable[[str, str], bool | None]] = {
    "label before value": lambda reply, gold: score_math(reply, gold).correct,
    "negation": lambda reply, gold: score_numeric(reply, gold).correct,
    "percent": lambda reply, gold: (score_math(reply, gold).correct if "\\" in reply + gold or "$" in reply + gold
                                    else score_numeric(reply, gold).correct),
    "several boxes": lambda reply, gold: score_math(reply, gold).correct,
}

#: The new scorers (token F1, ANSWER: word / line, several letters): the cases the issue names.
SHAPES = [
    ("token_f1", lambda: score_token_f1("Paris", ["Paris, Texas", "Paris"]).correct, True),
    ("token_f1", lambda: score_token_f1("the the cat", "cat cat").value == 2 / 3, True),
    ("answer_word", lambda: score_answer_word("ANSWER: Yes.", "yes").correct, True),
    ("answer_word", lambda: score_answer_word("ANSWER: Yes then more text", "yes").correct, None),
    ("answer_line", lambda: score_answer_line("ANSWER: New York City\nThat is all.", "new york city").correct, True),
    ("mcq_multi", lambda: score_mcq_multi("ANSWER: A, C", "A,C").correct, True),
    ("mcq_multi", lambda: score_mcq_multi("ANSWER: A", "A, C").correct, False),
]


def math_verify_reader() -> Callable[[str, str], bool | None] | None:
    if importlib.util.find_spec("math_verify") is None:
        return None
    from math_verify import parse, verify

    def read(reply: str, gold: str) -> bool | None:
        try:
            return bool(verify(parse(gold if "$" in gold else f"${gold}$"), parse(reply)))
        except Exception:  # a parse the peer cannot make counts as no verdict
            return None

    return read


def main() -> None:
    readers: dict[str, Callable[[Case], bool | None]] = {"pytest-jeval": lambda c: JEVAL[c.kind](c.reply, c.gold)}
    mv = math_verify_reader()
    if mv is not None:
        readers["math-verify"] = lambda c: mv(c.reply, c.gold)
    missing = [name for name, module in (("inspect_ai", "inspect_ai"), ("lm-eval", "lm_eval"))
               if importlib.util.find_spec(module) is None]
    kinds = list(dict.fromkeys(c.kind for c in CASES))
    print(f"{'class':<20} {'cases':>5}  " + "  ".join(f"{name:>12}" for name in readers))
    wrong: dict[str, list[tuple[Case, bool | None]]] = {name: [] for name in readers}
    totals = dict.fromkeys(readers, 0)
    for kind in kinds:
        cases = [c for c in CASES if c.kind == kind]
        row = []
        for name, read in readers.items():
            verdicts = [(c, read(c)) for c in cases]
            right = sum(1 for c, v in verdicts if v is c.correct)
            totals[name] += right
            wrong[name] += [(c, v) for c, v in verdicts if v is not c.correct]
            row.append(f"{right:>9}/{len(cases):<2}")
        print(f"{kind:<20} {len(cases):>5}  " + "  ".join(row))
    print(f"{'all':<20} {len(CASES):>5}  " + "  ".join(f"{totals[n]:>9}/{len(CASES):<2}" for n in readers))
    shapes_right = sum(1 for _, check, want in SHAPES if check() is want)
    print(f"new scorers (token_f1, answer_word, answer_line, mcq_multi): {shapes_right}/{len(SHAPES)} cases as expected")
    if missing:
        print(f"not installed here, so not compared: {', '.join(missing)}")
    for name, cases in wrong.items():
        for case, verdict in cases:
            print(f"{name} reads wrong: [{case.kind}] reply {case.reply!r} gold {case.gold!r}: "
                  f"gave {verdict}, a careful reader says {case.correct}")


if __name__ == "__main__":
    main()
