"""Generation settings per model, what an endpoint accepts, and the one request builder.

OpenAI's reasoning models (``gpt-5*``, ``o1*``, ``o3*``, ``o4*``) answer HTTP 400 to
``max_tokens`` (they take ``max_completion_tokens``) and to any ``temperature`` but
their default 1. :func:`adapt` picks what to send from the model name, unless the
model entry says so itself (``token_param``, ``temperature = "omit"`` or a number).

:func:`build_request` is the only place a :class:`ChatRequest` is made from a prompt
and settings: the prefetch, the ``model`` and ``judge`` fixtures and benchmark code
calling ``model.chat`` all go through it, so a prefetched request and the one the
item sends are equal and share one cache key.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Literal

from pytest_jeval.core.chat import ChatRequest, Messages, PromptLike, as_messages

TokenParam = Literal["max_tokens", "max_completion_tokens"]

#: Model ids (the last ``/`` segment, so ``openai/o3-mini`` on a router counts) of the
#: OpenAI reasoning families: ``gpt-5``, ``gpt-5-mini``, ``gpt-5.1``, ``o1``, ``o3-mini``, ``o4-mini``, ...
_REASONING = re.compile(r"^(?:gpt-5|o1|o3|o4)(?:$|[-._:])", re.IGNORECASE)


#: Request parameters the OpenAI API refuses for its reasoning models (HTTP 400
#: ``unsupported_parameter``); they are left out of requests to those models.
REASONING_UNSUPPORTED = frozenset(
    {"logprobs", "top_logprobs", "top_p", "stop", "presence_penalty", "frequency_penalty", "logit_bias"}
)


def is_reasoning_model(name: str) -> bool:
    """True for a model id of OpenAI's reasoning families (gpt-5*, o1*, o3*, o4*)."""
    return bool(_REASONING.match(name.rsplit("/", 1)[-1]))


@dataclasses.dataclass(frozen=True)
class RequestSettings:
    """What every request to one model carries, after adapting to what the model accepts."""

    model: str
    """The model id sent to the endpoint."""
    temperature: float | None
    """The temperature sent; None means the parameter is left out (the server's default)."""
    max_tokens: int
    """The output token limit."""
    token_param: TokenParam = "max_tokens"
    """The request parameter that carries :attr:`max_tokens`."""
    drop_temperature: bool = False
    """Leave out a ``temperature`` a call asks for too (the model accepts only its default)."""
    stream: bool = False
    system_prompt: str | None = None
    unsupported: frozenset[str] = frozenset()
    """Request parameters left out of every request (the model refuses them), even where a call asks for them."""
    params: tuple[tuple[str, Any], ...] = ()
    """Parameters every request carries (the suite's ``top_p``, ``stop``, ``seed``, penalties), as sorted pairs;
    a call's own keyword of the same name wins, and those in :attr:`unsupported` are never sent."""
    adapted: tuple[str, ...] = ()
    """What was changed from the suite's settings, or kept against what the model is known to
    accept, in words (shown once in the terminal)."""
    seed: int | None = None
    """Sent as every request's ``seed`` (plus the request's ``nonce``, so each repeat has its own); None sends none."""


def adapt(
    model: str,
    *,
    temperature: float,
    max_tokens: int,
    token_param: str | None = None,
    temperature_override: float | str | None = None,
    stream: bool = False,
    system_prompt: str | None = None,
    seed: int | None = None,
    params: Mapping[str, Any] | None = None,
) -> RequestSettings:
    """The settings to send to ``model``.

    ``temperature`` and ``max_tokens`` are the suite's resolved values. ``token_param``
    and ``temperature_override`` come from the model entry: an explicit ``token_param``
    is used as it is; ``temperature_override = "omit"`` leaves the temperature out, a
    number sends the resolved temperature even to a reasoning model. Without them, a
    reasoning model gets ``max_completion_tokens`` and no temperature unless it is 1.
    ``params`` (the suite's ``top_p``, ``stop``, ``seed``, penalties) go with every request, but
    those the model refuses (:data:`REASONING_UNSUPPORTED`), which are left out and said so.
    """
    reasoning = is_reasoning_model(model)
    notes: list[str] = []
    param: TokenParam
    if token_param is not None:
        param = "max_completion_tokens" if token_param == "max_completion_tokens" else "max_tokens"
        if reasoning and param == "max_tokens":
            notes.append("sent max_tokens as the model entry says (the OpenAI API wants max_completion_tokens)")
    elif reasoning:
        param = "max_completion_tokens"
        notes.append("sent max_completion_tokens instead of max_tokens")
    else:
        param = "max_tokens"
    sent: float | None = temperature
    drop = False
    if temperature_override == "omit":
        sent, drop = None, True
    elif temperature_override is None and reasoning:
        drop = True
        if temperature != 1:
            sent = None
            notes.append(f"temperature {temperature:g} omitted (the model accepts only 1)")
    elif reasoning and temperature != 1:
        notes.append(f"temperature {temperature:g} sent as the model entry says (the OpenAI API accepts only 1)")
    unsupported: frozenset[str] = frozenset()
    if reasoning and token_param is None:
        # An explicit token_param says the entry knows the endpoint's dialect: send what is asked.
        unsupported = REASONING_UNSUPPORTED
        notes.append("logprobs, top_p, stop, penalties and logit_bias left out where asked (the model refuses them)")
        refused = sorted(k for k in (params or {}) if k in unsupported)
        if refused:
            notes.append(f"the suite's {', '.join(refused)} not sent (the model refuses them)")
    return RequestSettings(
        model=model,
        temperature=sent,
        max_tokens=max_tokens,
        token_param=param,
        drop_temperature=drop,
        unsupported=unsupported,
        stream=stream,
        system_prompt=system_prompt,
        params=tuple(sorted((k, v) for k, v in (params or {}).items() if k not in unsupported)),
        adapted=tuple(notes),
        seed=seed,
    )


def build_request(
    settings: RequestSettings,
    prompt: PromptLike,
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    logprobs: bool = False,
    top_logprobs: int | None = None,
    nonce: int = 0,
    tools: Messages | None = None,
    tool_choice: str | dict[str, Any] | None = None,
    parallel_tool_calls: bool | None = None,
    **extra: Any,
) -> ChatRequest:
    """The :class:`ChatRequest` for ``prompt`` under ``settings``, with per-call options.

    ``temperature`` and ``max_tokens`` override the settings for this call (a
    temperature is left out where the model accepts only its default); any other
    keyword (``stop``, ``top_p``, ``seed``, ...) is sent as a request parameter, except those
    the model refuses (:attr:`RequestSettings.unsupported`), which are left out. ``tools``
    (OpenAI function entries), ``tool_choice`` and ``parallel_tool_calls`` make an agent turn;
    the system prompt is added only to a conversation that has none. With :attr:`RequestSettings.seed`
    the request sends ``seed`` = that seed + ``nonce`` unless the call names its own.
    """
    if settings.params:
        extra = {**dict(settings.params), **extra}
    if settings.seed is not None and "seed" not in extra:
        extra["seed"] = settings.seed + nonce
    if settings.unsupported:
        if "logprobs" in settings.unsupported:
            logprobs, top_logprobs = False, None
        extra = {k: v for k, v in extra.items() if k not in settings.unsupported}
    if settings.drop_temperature:
        sent = settings.temperature
    else:
        sent = settings.temperature if temperature is None else float(temperature)
    return ChatRequest(
        model=settings.model,
        messages=as_messages(prompt, settings.system_prompt),
        temperature=sent,
        max_tokens=settings.max_tokens if max_tokens is None else int(max_tokens),
        token_param=settings.token_param,
        logprobs=logprobs,
        top_logprobs=top_logprobs,
        stream=settings.stream and not logprobs,
        extra=tuple(sorted(extra.items())),
        nonce=nonce,
        tools=list(tools) if tools else None,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel_tool_calls,
    )
