"""What one benchmark item is about, and what happened while it ran (in ``item.stash[case_key]``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_jeval.core.chat import Reply
from pytest_jeval.core.episode import Episode
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score


@dataclasses.dataclass
class ItemCase:
    """What one benchmark item is about, and what happened while it ran."""

    benchmark: str
    """The benchmark entry's key (its ``label``, else its ``name``)."""
    model: str
    """The model entry's key (its ``label``, else its ``name``)."""
    sample: Sample
    replies: list[Reply] = dataclasses.field(default_factory=list)
    """Replies of the model under test, in order."""
    judge_replies: list[Reply] = dataclasses.field(default_factory=list)
    score: Score | None = None
    error: str | None = None
    resumed: dict[str, Any] | None = None
    """The stored record when ``--jeval-resume`` skips this item."""
    episode: Episode | None = None
    """The agent episode of an agent benchmark's item, once it has run."""
    judge_repeats: list[list[str | None]] = dataclasses.field(default_factory=list)
    """With ``judge_repeats = k``: for each judge call, in order, the replies to its k - 1 extra asks (None where
    one failed); the first ask's reply is the one the scorer used."""
