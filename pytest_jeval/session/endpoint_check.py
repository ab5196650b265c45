"""The session-start endpoint check: every endpoint answers, accepts its key, and lists the model ids it is sent.

The reference says a model id must match one the server lists at ``GET /v1/models``; so the
check (run by :meth:`~pytest_jeval.session.runtime.RuntimeHooks.pytest_sessionstart` before any
sample) refuses a model, judge or user model whose id the endpoint does not list, naming the
ids it does list. An endpoint that lists none (or has no such route) is said so once, and the
run goes on. The bundled local server serves whatever name it is given; it is not asked.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pytest_jeval.calls.engines import EndpointCheck
from pytest_jeval.core.chat import Endpoint

if TYPE_CHECKING:
    from pytest_jeval.session.runtime import Runtime


@dataclasses.dataclass
class Target:
    """One endpoint the session checks: who uses it (for the message) and the model ids sent to it."""

    who: list[str] = dataclasses.field(default_factory=list)
    models: dict[str, str] = dataclasses.field(default_factory=dict)
    """Model id -> who sends it (``model 'x'``, ``the judge``)."""


def endpoint_targets(runtime: Runtime) -> dict[Endpoint, Target]:
    """Every endpoint the run calls, with the model ids it will be asked for (oracle and nop call no model)."""
    plan = runtime.plan
    targets: dict[Endpoint, Target] = {}

    def add(endpoint: Endpoint, who: str, model: str | None) -> None:
        target = targets.setdefault(endpoint, Target())
        if who not in target.who:
            target.who.append(who)
        if model is not None and endpoint.engine != "local":  # the local server serves any name it is given
            target.models.setdefault(model, who)

    if any(planned.calls_model for planned in plan.benchmarks.values()):
        for key, entry in plan.models.items():
            add(runtime.endpoint(key), f"model {key!r}", entry.name)
    judge = plan.suite.judge
    if judge is not None:
        endpoint = runtime.endpoint(judge.model, judge=True)
        for bench in plan.benchmarks:
            settings = plan.judge_settings(bench)
            add(endpoint, "the judge", settings.model if settings is not None else judge.model)
    user = runtime.user_endpoint() if plan.needs_user else None
    if user is not None and plan.suite.user is not None:
        add(user, "the [user] model", plan.suite.user.model)
    return targets


def check_problems(targets: dict[Endpoint, Target], checks: list[EndpointCheck]) -> tuple[list[str], list[str]]:
    """The problems that stop the run (a dead endpoint, a refused key, a model id the endpoint does not
    list at ``GET /v1/models``) and the notes it goes on with (an endpoint that lists no models)."""
    problems: list[str] = []
    notes: list[str] = []
    for (endpoint, target), found in zip(targets.items(), checks):
        who = ", ".join(target.who)
        if found.problem is not None:
            problems.append(f"{who}: {found.problem}")
            continue
        if not target.models:
            continue
        if found.models is None:
            notes.append(f"{endpoint.label} lists no models at GET /v1/models; the model id(s) "
                         f"{', '.join(repr(m) for m in target.models)} are not checked")
            continue
        more = len(found.models) - 20
        listed = ", ".join(found.models[:20]) + (f" (and {more} more)" if more > 0 else "")
        for model, sender in target.models.items():
            if model not in found.models:
                problems.append(f"{sender}: {endpoint.label} does not list the model {model!r} at GET /v1/models; "
                                f"it lists: {listed}")
    return problems, notes
