"""The scorer registry: what every registered scorer promises, the generic ones among them, and an
unknown name as a KeyError that names the registered ones."""

from __future__ import annotations

import pytest

from pytest_jeval.scoring.registry import SCORERS, RecordScorer, call_scorer, get_scorer, scorer_names
from pytest_jeval.suite.catalog import builtin_benchmarks

#: Scorers as of this writing, the generic ones and two that benchmark modules register: none may
#: disappear (new ones are welcome).
MINIMUM = {"numeric", "mcq", "math", "gaia", "exact", "contains", "judge", "humaneval"}


def test_registry_names() -> None:
    builtin_benchmarks()  # the benchmark modules register their own scorers (gaia, humaneval) when imported
    assert MINIMUM <= set(scorer_names()), sorted(MINIMUM - set(scorer_names()))
    with pytest.raises(KeyError, match="unknown scorer 'nope'; the registered scorers are: "):
        get_scorer("nope")


def test_every_registered_scorer_is_a_record_scorer_under_its_name() -> None:
    builtin_benchmarks()  # the benchmark modules register their own scorers when imported
    assert scorer_names() == SCORERS.names()
    for name, scorer in SCORERS.items():
        assert isinstance(scorer, RecordScorer) and callable(scorer.fn), name
        assert get_scorer(name) is scorer, name
        assert all(isinstance(flag, bool) for flag in (scorer.needs_sample, scorer.uses_judge, scorer.runs_code))
        if scorer.needs_sample:  # one that needs the sample refuses a record without it, naming itself
            with pytest.raises(ValueError, match=f"scorer {name!r} needs the sample"):
                call_scorer(name, {"record_id": "r"})
