"""Exports of a finished run to outside services, at session end on the controller.

* :mod:`.wandb`: one Weights & Biases run per (benchmark, model) (``[run] wandb_*``);
* :mod:`.sheets`: one Google Sheets row per (benchmark, model) (``[run] sheets_*``);
* :mod:`.plugin`: checks the keys and the optional packages at configure time and runs
  the exports once the results writer hands over every written pair (``pytest_jeval_results_ready``).

:data:`EXPORTERS` is the family's registry: a package adds an export through the
``pytest_jeval.exporters`` entry-point group (an object with the :class:`Exporter` attributes),
and a suite turns it on with ``[run] exporters = ["name"]``.

The rules are in ``docs/exports.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pytest_jeval.core.registry import Registry
from pytest_jeval.results.writer import ResultsPair

if TYPE_CHECKING:
    from pytest_jeval.suite.plan import EvalPlan

ExportPair = ResultsPair
"""One finished (benchmark, model) pair, as the results writer hands it to ``pytest_jeval_results_ready``."""

Send = Callable[[Sequence[ExportPair]], str]
"""Send the pairs; the line to show in the terminal (raise to report a failure)."""


class ExportError(Exception):
    """An export that cannot run as the suite sets it up (its keys, its credentials)."""


@runtime_checkable
class Exporter(Protocol):
    """One export destination, registered in :data:`EXPORTERS` under its name."""

    title: str
    """Its name in messages (``W&B``, ``Google Sheets``)."""
    extra: str
    """The ``pytest-jeval[extra]`` that installs what it needs ("" for none)."""
    modules: Sequence[str]
    """The modules it needs (checked before any request)."""
    key: str
    """The suite key that turns it on, for messages (``wandb_project``; ``exporters`` for an installed one)."""

    def configure(self, plan: EvalPlan, named: bool) -> Send | None:
        """The sender of this export for ``plan``, or None when the suite does not ask for it; ``named``
        says the suite names it in ``[run] exporters``. Raise :class:`ExportError` for unusable settings."""


def _check(name: str, member: Any) -> Exporter:
    if not isinstance(member, Exporter):
        raise TypeError(f"{member!r} is not an exporter (title, extra, modules, configure(plan, named))")
    return member


EXPORTERS: Registry[Exporter] = Registry("exporters", kind="exporter", check=_check, builtins={
    "wandb": "pytest_jeval.exports.wandb:EXPORTER",
    "sheets": "pytest_jeval.exports.sheets:EXPORTER",
})
"""Export destinations by name: the built-ins, then the ``pytest_jeval.exporters`` entry points
(``name = "package.module:EXPORTER"``). A built-in runs when the suite sets its keys; an installed
one when the suite names it in ``[run] exporters``."""
