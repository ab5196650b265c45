"""The unit of a benchmark: one dataset record turned into a question with a gold answer."""

from __future__ import annotations

import dataclasses
from typing import Any

REFUSED = "refused"
"""The ``Sample.metadata`` key of a sample the benchmark cannot run here, holding the reason: the item is
collected but skipped with that reason, and nothing is sent for it (a database task whose SQL SQLite
cannot run, a task that needs a live endpoint)."""

#: The default of ``Sample.metadata``: a new dict for each sample, as ``default_factory=dict`` gives.
_NEW_DICT: dict[str, Any] = {}


@dataclasses.dataclass(frozen=True)
class Sample:
    """One benchmark record, ready to be asked.

    ``id`` is the stable record id: the dataset's own id column when there is one,
    else ``<benchmark>-<row index in the source split>``. It never depends on the
    seed, on shuffling or on ``max_samples``.
    """

    id: str
    """Stable record id (also part of the pytest item id)."""
    input: str
    """The question or task text shown to the model (before prompt templating)."""
    target: Any = None
    """The gold answer in whatever form the benchmark's scorer expects."""
    choices: tuple[str, ...] = ()
    """Answer options for multiple-choice benchmarks, in the order shown to the model."""
    subject: str | None = None
    """Grouping for the summary's ``per_subject`` block."""
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False)
    """Anything else the prompt or scorer needs (JSON builtins only)."""
    index: int = -1
    """Row index in the source split."""

    def __init__(self, id: str, input: str, target: Any = None, choices: tuple[str, ...] = (),
                 subject: str | None = None, metadata: dict[str, Any] = _NEW_DICT, index: int = -1) -> None:
        # What the generated __init__ does, in half its time: choosing a subset makes a Sample for every row.
        self.__dict__.update(id=id, input=input, target=target, choices=choices, subject=subject,
                             metadata={} if metadata is _NEW_DICT else metadata, index=index)

    def __repr__(self) -> str:
        text = " ".join(self.input.split())
        if len(text) > 60:
            text = text[:57] + "..."
        return f"Sample(id={self.id!r}, input={text!r})"


def repeat_nonce(sample: Sample) -> int:
    """The repeat index of a repeated sample (``<id>@<n>``: n - 1; 0 otherwise): the ``nonce`` of its
    requests, so that k repeats are k requests and never one cached answer."""
    return int(sample.metadata.get("repeat", 1)) - 1
