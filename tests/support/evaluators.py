"""Running one evaluator on one gold item, and a scripted judge chat, for the evaluator tests."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_jeval.core.chat import Reply, TokenLogprob
from pytest_jeval.judge_bench import GoldItem, get_evaluator
from pytest_jeval.scoring.judging.registry import Judgment

DATA = Path(__file__).resolve().parents[2] / "pytest_jeval" / "judge_bench" / "data"
"""The bundled gold sets."""


def judge(name: str, kind: str | None = None, scale: list[float] | None = None,
          chat: Callable[[Any], Reply] | None = None, **item: Any) -> Judgment:
    """Run evaluator ``name`` on one gold item made of ``item``'s fields (the rest go to its extras)."""
    ev = get_evaluator(name)
    spec = ev.spec(kind, scale)
    fields = {k: item.pop(k) for k in ("input", "output", "expected", "context", "criteria", "data_dir") if k in item}
    fields.setdefault("input", "q")
    return ev.run(GoldItem(extra=item, **fields), spec, chat)  # type: ignore[arg-type]


def scripted(*texts: str, p: dict[str, float] | None = None) -> tuple[Callable[[Any], Reply], list[Any]]:
    """A chat that answers ``texts`` in turn; ``p`` gives top logprobs at every label-like last token."""
    prompts: list[Any] = []

    def chat(prompt: Any) -> Reply:
        text = texts[len(prompts) % len(texts)]
        prompts.append(prompt)
        if p is None:
            return Reply(text=text, model="m")
        head, _, last = text.rpartition(" ")
        top = tuple((k, math.log(v)) for k, v in p.items())
        tokens = ((TokenLogprob(head + " ", 0.0),) if head else ()) + (TokenLogprob(last, dict(top).get(last, -1.0), top),)
        return Reply(text=text, model="m", logprobs=tokens)

    return chat, prompts
