"""The evaluator registry: evaluators by name, what they return, and how they call a model.

An evaluator looks at one gold item (input, output, expected, context, criteria)
and returns a :class:`Judgment`: a decision, choice or level, plus, where it can,
a probability distribution over the allowed labels. Code evaluators compute the
judgment directly; LLM evaluators ask a model through a :data:`Chat` callable.

The built-in evaluators are the modules of :mod:`pytest_jeval.judge_bench.evaluators`
(every module there is imported on the first lookup, so a new family is one new file); an
installed package adds its own through the ``pytest_jeval.evaluators`` entry-point group.
:data:`EVALUATORS` is the family's :class:`~pytest_jeval.core.registry.Registry`. Register with
:func:`register`::

    @register
    class Shouting(CodeEvaluator):
        name = "shouting"
        description = "Is the output in capitals?"
        def judge(self, item, spec):
            return self.decided(item.output.isupper())
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pytest_jeval.core.chat import PromptLike, Reply
from pytest_jeval.core.registry import Registry, RegistryError
from pytest_jeval.scoring.judging.cases import CASE_KINDS, CaseSpec
from pytest_jeval.scoring.judging.probability import SOURCE_DETERMINISTIC, SOURCE_UNSCORED

Chat = Callable[[PromptLike], Reply]
"""Send one prompt to the judge model (with logprobs requested) and return its reply."""


class EvaluatorError(Exception):
    """An item the evaluator cannot judge because of its gold data (bad SQL gold, missing database)."""


class JudgeSetupError(Exception):
    """A judge benchmark that cannot be set up; ``key`` names the offending suite key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


class EvaluatorLoadError(JudgeSetupError):
    """An installed evaluator (``pytest_jeval.evaluators`` entry point) that cannot be loaded."""

    def __init__(self, message: str) -> None:
        super().__init__("evaluator", message)


@dataclasses.dataclass(frozen=True)
class GoldItem:
    """One row of a gold set, as an evaluator sees it."""

    input: str
    output: Any = None
    expected: Any = None
    context: Any = None
    criteria: str | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Other columns of the row (e.g. ``database``, ``source_language``)."""
    data_dir: str | None = None
    """Directory of the gold file, for relative paths in the row."""


@dataclasses.dataclass(frozen=True)
class Judgment:
    """What an evaluator decided about one item, in one run."""

    predicted: Any
    """The decision (bool), choice label or level; None when unscored."""
    distribution: dict[Any, float] | None = None
    """Probabilities over the allowed case values (normalised), or None."""
    probability_source: str = SOURCE_DETERMINISTIC
    """``logprobs``, or why there is no probability (``deterministic``, ``no_logprobs``, ...)."""
    allowed_mass: float | None = None
    """Probability mass the judge put on the allowed labels at its verdict token(s)."""
    raw: tuple[str, ...] = ()
    """The judge's reply texts (LLM evaluators)."""
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Evaluator-specific evidence (claims, per-chunk verdicts, both pairwise orders, ...)."""
    unscored_reason: str | None = None
    """Why ``predicted`` is None."""
    extra_fields: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Extra top-level record fields (e.g. pairwise ``position_consistent``)."""

    @property
    def unscored(self) -> bool:
        """True when the evaluator reached no judgment."""
        return self.predicted is None


class Evaluator:
    """Base class of all evaluators. Subclasses set the class attributes and implement ``run``."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    uses_model: ClassVar[bool] = False
    kinds: ClassVar[tuple[str, ...]] = ("boolean",)
    """Case kinds this evaluator can produce; the first is the default."""
    default_scale: ClassVar[tuple[int, int] | None] = None
    """Scale of a score case when the suite gives none."""
    choice_labels: ClassVar[tuple[str, ...]] = ()
    """Labels of a choice case."""
    gold_aliases: ClassVar[dict[str, str]] = {}
    """Other gold spellings of choice labels (lower case)."""
    required_columns: ClassVar[tuple[str, ...]] = ()
    """Gold-set fields an item must have besides ``input`` and ``gold`` (``output``, ``expected``, ...)."""

    def spec(self, kind: str | None, scale: Sequence[float] | None) -> CaseSpec:
        """The case spec for the suite's ``kind``/``scale``; JudgeSetupError naming the bad key."""
        kind = kind or self.kinds[0]
        if kind not in self.kinds:
            raise JudgeSetupError(
                "kind", f"evaluator {self.name!r} produces {' or '.join(self.kinds)} cases, not {kind!r}")
        if kind == "boolean":
            if scale is not None:
                raise JudgeSetupError("scale", f"a boolean case has no scale (evaluator {self.name!r})")
            return CaseSpec.boolean()
        if kind == "choice":
            if scale is not None:
                raise JudgeSetupError("scale", f"a choice case has no scale (evaluator {self.name!r})")
            return CaseSpec.choice(self.choice_labels)
        if scale is None:
            if self.default_scale is None:
                raise JudgeSetupError("scale", f"evaluator {self.name!r} needs scale = [low, high]")
            return CaseSpec.score(*self.default_scale)
        return CaseSpec.score(*check_scale(scale))

    def first_prompt(self, item: GoldItem, spec: CaseSpec) -> PromptLike | None:
        """The first prompt this evaluator sends for ``item`` (prefetched by the plugin); None for code evaluators."""
        return None

    def run(self, item: GoldItem, spec: CaseSpec, chat: Chat) -> Judgment:
        """Judge one item. ``chat`` sends a prompt to the judge model under test."""
        raise NotImplementedError

    # -- helpers -------------------------------------------------------------------
    @staticmethod
    def unscored(reason: str, raw: Sequence[str] = (), **details: Any) -> Judgment:
        """A judgment that could not be reached (reply outside the labels, ...)."""
        return Judgment(None, probability_source=SOURCE_UNSCORED, raw=tuple(raw), details=details,
                        unscored_reason=reason)


class CodeEvaluator(Evaluator):
    """A free evaluator computed in code: no model call, no probability."""

    def run(self, item: GoldItem, spec: CaseSpec, chat: Chat) -> Judgment:
        """Run :meth:`judge` (code evaluators never call ``chat``)."""
        return self.judge(item, spec)

    def judge(self, item: GoldItem, spec: CaseSpec) -> Judgment:
        """Judge one item in code."""
        raise NotImplementedError

    @staticmethod
    def decided(predicted: Any, **details: Any) -> Judgment:
        """A deterministic judgment: the probability stays None (source ``deterministic``)."""
        return Judgment(predicted, details=details)


def check_scale(scale: Sequence[float]) -> tuple[int, int]:
    """``[low, high]`` as integers with ``0 <= low < high <= 10``; JudgeSetupError otherwise."""
    if len(scale) != 2:
        raise JudgeSetupError("scale", f"scale must be [low, high], got {list(scale)!r}")
    low, high = scale
    if float(low) != int(low) or float(high) != int(high):
        raise JudgeSetupError("scale", f"scale bounds must be whole numbers, got {list(scale)!r}")
    low, high = int(low), int(high)
    if not 0 <= low < high <= 10:
        raise JudgeSetupError("scale", f"scale must satisfy 0 <= low < high <= 10, got [{low}, {high}]")
    return low, high


ENTRY_POINT_GROUP = "pytest_jeval.evaluators"
"""The entry-point group through which installed packages add evaluators (a module or an Evaluator class)."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


def check_evaluator(cls: type[Evaluator]) -> None:
    """ValueError unless ``cls`` is a complete evaluator: a usable name, a description, valid kinds and scale."""
    if not (isinstance(cls, type) and issubclass(cls, Evaluator)):
        raise ValueError(f"{cls!r} is not an Evaluator subclass")
    where = f"{cls.__module__}.{cls.__qualname__}"
    if not isinstance(cls.name, str) or not _NAME.match(cls.name):
        raise ValueError(f"{where}: name {cls.name!r} must be letters, digits, '_', '.' or '-'")
    if not isinstance(cls.description, str) or not cls.description.strip():
        raise ValueError(f"{where}: evaluator {cls.name!r} has no description")
    kinds = tuple(cls.kinds)
    if not kinds or len(set(kinds)) != len(kinds) or not set(kinds) <= set(CASE_KINDS):
        raise ValueError(f"{where}: kinds {kinds!r} must be distinct values of {', '.join(CASE_KINDS)}")
    if "choice" in kinds and len(set(cls.choice_labels)) < 2:
        raise ValueError(f"{where}: a choice evaluator needs at least two distinct choice_labels")
    if cls.default_scale is not None:
        try:
            check_scale(cls.default_scale)
        except JudgeSetupError as exc:
            raise ValueError(f"{where}: default_scale: {exc}") from None


def _checked(name: str, cls: Any) -> type[Evaluator]:
    check_evaluator(cls)
    if cls.name != name:
        raise ValueError(f"the entry point's name must be the evaluator's name {cls.name!r}")
    return cls  # type: ignore[no-any-return]


EVALUATORS: Registry[type[Evaluator]] = Registry(
    "evaluators", kind="evaluator", check=_checked,
    # content: every public module of the built-in evaluators' package registers its classes
    modules=("pytest_jeval.judge_bench.evaluators",))
"""Evaluator classes by name: the built-ins (:mod:`pytest_jeval.judge_bench.evaluators`, one module per
family), then the ``pytest_jeval.evaluators`` entry points (a module that registers, or an Evaluator class)."""


def register(cls: type[Evaluator]) -> type[Evaluator]:
    """Class decorator: make an evaluator available by its ``name``.

    ValueError for an incomplete evaluator (see :func:`check_evaluator`) or a name another
    class already holds; registering the same class again (a re-imported module) replaces it.
    """
    check_evaluator(cls)
    try:
        EVALUATORS.register(cls.name, cls)
    except RegistryError as exc:
        raise ValueError(str(exc)) from None
    return cls


def load_evaluators() -> None:
    """Load every evaluator now: the built-in modules, then the installed entry points.

    EvaluatorLoadError (a JudgeSetupError on key ``evaluator``) names a broken entry point.
    """
    try:
        dict(EVALUATORS.items())
    except RegistryError as exc:
        raise EvaluatorLoadError(str(exc)) from None


def get_evaluator(name: str) -> Evaluator:
    """A fresh evaluator by name; JudgeSetupError(key="evaluator") for an unknown one."""
    try:
        return EVALUATORS.get(name)()
    except RegistryError as exc:
        if name in EVALUATORS.installed():
            raise EvaluatorLoadError(str(exc)) from None
        raise JudgeSetupError("evaluator", str(exc)) from None


def evaluator_names() -> list[str]:
    """Names of all registered evaluators, sorted."""
    return EVALUATORS.names()


def evaluator_classes() -> dict[str, type[Evaluator]]:
    """All registered evaluator classes by name."""
    load_evaluators()
    return {name: EVALUATORS.get(name) for name in EVALUATORS.names()}
