"""Case kinds and probabilities from logprobs: last verdict token, folding, normalisation, low mass, no logprobs."""

from __future__ import annotations

import math

import pytest

from pytest_jeval.core.chat import Reply, TokenLogprob
from pytest_jeval.scoring.judging.cases import CaseSpec, expected_level, probability_correct, round_half_up
from pytest_jeval.scoring.judging.probability import (
    LOW_MASS_THRESHOLD,
    LabelSet,
    count_distribution,
    label_distribution,
    read_line_verdicts,
    read_verdict,
)

YES_NO = LabelSet(("Yes", "No"), (True, False))
LETTERS = LabelSet(("A", "B", "C", "D", "E"), ("A", "B", "C", "D", "E"))
LEVELS = LabelSet(("0", "1", "2", "3", "4"), (0, 1, 2, 3, 4))


def tok(token: str, p: float = 1.0, *alts: tuple[str, float]) -> TokenLogprob:
    return TokenLogprob(token, math.log(p), tuple((a, math.log(q)) for a, q in alts))


def reply(*tokens: TokenLogprob) -> Reply:
    return Reply(text="".join(t.token for t in tokens), model="m", logprobs=tuple(tokens))


# -- case kinds ---------------------------------------------------------------------------------
def test_tolerance_rule() -> None:
    assert CaseSpec.boolean().tolerance == 0
    assert CaseSpec.choice("ABCDE").tolerance == 0
    assert CaseSpec.score(0, 1).tolerance == 0
    assert CaseSpec.score(0, 3).tolerance == 0
    assert CaseSpec.score(0, 4).tolerance == 1
    assert CaseSpec.score(1, 5).tolerance == 1
    s = CaseSpec.score(0, 4)
    assert s.is_correct(3, 4) and s.is_correct(4, 3) and not s.is_correct(2, 4)
    assert not CaseSpec.score(0, 1).is_correct(0, 1)
    assert CaseSpec.boolean().is_correct(False, False) and not CaseSpec.boolean().is_correct(None, False)


def test_gold_parsing() -> None:
    b = CaseSpec.boolean()
    assert [b.parse_gold(v) for v in (True, "yes", "No", 1, 0, "pass", "FALSE")] == [True, True, False, True, False, True, False]
    with pytest.raises(ValueError):
        b.parse_gold("maybe")
    c = CaseSpec.choice(("A", "B", "C", "D", "E"))
    assert c.parse_gold("b") == "B" and c.parse_gold("subset", {"subset": "A"}) == "A"
    with pytest.raises(ValueError):
        c.parse_gold("F")
    s = CaseSpec.score(0, 4)
    assert s.parse_gold("3") == 3 and s.parse_gold(2.5) == 3 and s.parse_gold(0) == 0
    assert CaseSpec.score(0, 1).parse_gold([1, 0, 1, 1]) == 1  # share of ones 0.75 -> level 1
    with pytest.raises(ValueError):
        s.parse_gold(5)
    with pytest.raises(ValueError):
        s.parse_gold(None)


def test_levels_from_fractions_round_half_up() -> None:
    assert [round_half_up(x) for x in (0.5, 1.5, 2.5, 2.49)] == [1, 2, 3, 2]
    s = CaseSpec.score(0, 4)
    assert [s.level_from_fraction(x) for x in (0.0, 0.125, 0.5, 0.8, 1.0)] == [0, 1, 2, 3, 4]
    assert CaseSpec.score(0, 1).level_from_fraction(0.5) == 1


def test_probability_of_being_correct_and_expected_level() -> None:
    dist = {0: 0.1, 1: 0.0, 2: 0.2, 3: 0.3, 4: 0.4}
    assert probability_correct(CaseSpec.score(0, 4), 4, dist) == pytest.approx(0.7)  # levels 3 and 4
    assert probability_correct(CaseSpec.choice("AB"), "A", {"A": 0.8, "B": 0.2}) == pytest.approx(0.8)
    assert probability_correct(CaseSpec.boolean(), True, None) is None
    assert expected_level(dist) == pytest.approx(0.2 * 2 + 0.3 * 3 + 0.4 * 4)


# -- verdicts and probabilities -----------------------------------------------------------------
def test_last_verdict_token_decides() -> None:
    r = reply(tok("Yes", 0.9, ("Yes", 0.9), ("No", 0.1)), tok(", at first. But on reflection:"),
              tok(" No", 0.7, (" No", 0.7), (" Yes", 0.3)))
    v = read_verdict(r, YES_NO)
    assert v.value is False and v.source == "logprobs"
    assert v.distribution == pytest.approx({True: 0.3, False: 0.7})


def test_variants_fold_into_one_label_and_normalise() -> None:
    r = reply(tok("Answer:"), tok(" Yes.", 0.5, (" Yes.", 0.5), ("yes", 0.2), ("YES", 0.1), (" No", 0.1), ("Maybe", 0.1)))
    v = read_verdict(r, YES_NO)
    assert v.word == "Yes" and v.allowed_mass == pytest.approx(0.9)
    assert v.distribution == pytest.approx({True: 0.8 / 0.9, False: 0.1 / 0.9})
    assert v.low_mass is False


def test_chosen_token_counts_when_missing_from_top() -> None:
    dist, mass = label_distribution(TokenLogprob(" B", math.log(0.6), ((" A", math.log(0.3)),)), LETTERS)
    assert mass == pytest.approx(0.9) and dist["B"] == pytest.approx(0.6 / 0.9) and dist["C"] == 0.0


def test_low_mass_is_flagged() -> None:
    r = reply(tok("Yes", 0.3, ("Yes", 0.3), ("No", 0.1), ("I", 0.6)))
    v = read_verdict(r, YES_NO)
    assert v.allowed_mass == pytest.approx(0.4) and v.allowed_mass < LOW_MASS_THRESHOLD and v.low_mass is True
    assert v.distribution == pytest.approx({True: 0.75, False: 0.25})


def test_no_logprobs_gives_null_probability_with_source() -> None:
    v = read_verdict(Reply(text="Verdict: Yes", model="m", logprobs=None), YES_NO)
    assert v.value is True and v.distribution is None and v.allowed_mass is None
    assert v.source == "no_logprobs" and v.low_mass is None


def test_reply_outside_labels_is_unscored() -> None:
    v = read_verdict(Reply(text="I cannot decide; it is unclear.", model="m"), YES_NO)
    assert v.value is None and v.word is None and v.source == "unscored"


def test_single_capital_letters_are_case_sensitive_and_digits_whole() -> None:
    assert read_verdict(Reply(text="It is a subset, so (A).", model="m"), LETTERS).value == "A"
    assert read_verdict(Reply(text="a b c d e", model="m"), LETTERS).value is None
    assert read_verdict(Reply(text="Score: 3", model="m"), LEVELS).value == 3
    assert read_verdict(Reply(text="It is 3.5 or 12", model="m"), LEVELS).value is None


def test_verdict_split_across_tokens_has_no_probability() -> None:
    r = reply(tok("Verdict: "), tok("Y", 0.9, ("Y", 0.9)), tok("es", 1.0))
    v = read_verdict(r, YES_NO)
    assert v.value is True and v.distribution is None and v.source == "verdict_token_split"


def test_tokens_that_do_not_join_fall_back_to_last_label_token() -> None:
    r = Reply(text="Verdict: No", model="m",
              logprobs=(TokenLogprob("Ver", 0.0),
                        TokenLogprob("\u0120No", math.log(0.8), (("\u0120No", math.log(0.8)), ("\u0120Yes", math.log(0.2))))))
    v = read_verdict(r, YES_NO)
    assert v.value is False and v.source == "logprobs" and v.distribution[False] == pytest.approx(0.8)


def test_line_verdicts_one_per_line() -> None:
    r = reply(tok("Sky is blue -> "), tok("Yes", 0.9, ("Yes", 0.9), ("No", 0.1)), tok("\nGrass is red -> "),
              tok("No", 0.6, ("No", 0.6), ("Yes", 0.4)), tok("\n"))
    lines = read_line_verdicts(r, YES_NO)
    assert [before for before, _ in lines] == ["Sky is blue ->", "Grass is red ->"]
    assert [v.value for _, v in lines] == [True, False]
    assert lines[1][1].distribution == pytest.approx({True: 0.4, False: 0.6})


def test_count_distribution_is_poisson_binomial() -> None:
    assert count_distribution([]) == [1.0]
    assert count_distribution([0.5, 0.5]) == pytest.approx([0.25, 0.5, 0.25])
    assert count_distribution([0.9, 0.2, 0.5]) == pytest.approx(
        [0.1 * 0.8 * 0.5, 0.9 * 0.8 * 0.5 + 0.1 * 0.2 * 0.5 + 0.1 * 0.8 * 0.5,
         0.9 * 0.2 * 0.5 + 0.9 * 0.8 * 0.5 + 0.1 * 0.2 * 0.5, 0.9 * 0.2 * 0.5])
