"""The run budget: no new call once the next could take the run past ``max_cost_usd`` or ``max_total_tokens``.

Where it sits: :meth:`~pytest_jeval.calls.scheduler.CallCore.call`, the one place every model, judge and
user-simulator call passes, after the response cache (a cached reply costs nothing) and after the
endpoint's concurrency slot is taken, right before the request is sent. The check there is a few
float operations and one read of a small shared array; with no budget set the scheduler holds no
:class:`Budget` and pays one ``is None`` test per call.

How a call is admitted: its worst case is reserved first, ``prompt + max_tokens`` tokens (the prompt
estimated from its characters, at the largest tokens-per-character ratio this process has seen, at
least one token per three characters) priced at its model's list price. A call starts only while
spent + reserved + its worst case stays within every limit; otherwise it raises
:class:`~pytest_jeval.core.chat.BudgetExhausted` without being sent. When it returns, its reservation
is replaced by what it used (its reported token counts; the reservation when the endpoint reports
none). Calls already sent always finish.

The processes of one run (the controller, each xdist worker, each one's call helper) share the figures
through a :class:`Ledger`: a small file of float64 slots, mapped in memory. Slot 0 holds what the
records kept from earlier runs cost (``--jeval-resume``); each process writes only its own slot
``(spent cost, spent tokens, reserved cost, reserved tokens)`` and reads the sum of all of them. A
process that cannot open the file (a worker on another host) keeps a private ledger and gets its share
of the limits (the limits divided by the workers).
"""

from __future__ import annotations

import dataclasses
import json
import math
import mmap
import os
import struct
import threading
from collections.abc import Mapping

from pytest_jeval.core.chat import BudgetExhausted, ChatRequest, Reply

__all__ = ["SLOT_FIELDS", "Budget", "BudgetSpec", "Ledger", "Reservation", "create_ledger", "read_totals",
           "set_baseline"]

SLOT_FIELDS = 4
"""float64 values per slot: spent cost, spent tokens, reserved cost, reserved tokens."""
_SLOT = struct.Struct("<4d")
#: Slots a ledger file holds: the baseline, the controller, and up to 254 workers.
MAX_SLOTS = 256
#: The fewest characters one prompt token is taken to cover, before any reply says otherwise.
CHARS_PER_TOKEN = 3.0


@dataclasses.dataclass(frozen=True)
class BudgetSpec:
    """A run's budget as one process needs it (picklable: it travels to the call helper)."""

    max_cost_usd: float | None
    max_total_tokens: int | None
    prices: Mapping[str, tuple[float, float]]
    """Model id -> USD per million (prompt, completion) tokens, for every model the run calls."""
    ledger: str | None = None
    """The run's shared ledger file; None keeps the figures in this process only."""
    slot: int = 1
    """This process's slot (0 is the baseline of records kept from earlier runs)."""
    share: int = 1
    """Divides the limits when this process cannot reach the shared ledger (the workers of the run)."""
    slots: int = 2
    """The ledger slots in use, summed at each check: the baseline, the controller and each worker."""

    def describe(self) -> str:
        """The limits in words (``$2.00``, ``100000 tokens``)."""
        parts = []
        if self.max_cost_usd is not None:
            parts.append(f"max_cost_usd = {self.max_cost_usd:g}")
        if self.max_total_tokens is not None:
            parts.append(f"max_total_tokens = {self.max_total_tokens}")
        return " and ".join(parts)


class Ledger:
    """Spent and reserved figures of every process of a run, in a shared file (or in memory)."""

    def __init__(self, path: str | None, slot: int, slots: int = MAX_SLOTS) -> None:
        self.slot = slot
        self._map: mmap.mmap | bytearray
        self.shared = False
        if path is not None and 0 < slot < MAX_SLOTS:
            try:
                fd = os.open(path, os.O_RDWR)
            except OSError:
                fd = -1
            if fd >= 0:
                try:
                    self._map = mmap.mmap(fd, MAX_SLOTS * _SLOT.size)
                    self.shared = True
                finally:
                    os.close(fd)
        if not self.shared:
            self.slot = 1
            self._map = bytearray(2 * _SLOT.size)
        used = min(max(slots, self.slot + 1), len(self._map) // _SLOT.size)
        self._all = struct.Struct(f"<{SLOT_FIELDS * used}d")  # the slots in use, read in one call
        spent_cost, spent_tokens, _, _ = self.read_slot(self.slot)
        self.write(spent_cost, spent_tokens, 0.0, 0.0)  # reservations of a process that died are void

    @property
    def slots(self) -> int:
        """How many slots this ledger sums."""
        return len(self._map) // _SLOT.size

    def read_slot(self, slot: int) -> tuple[float, float, float, float]:
        """One slot's four figures."""
        values: tuple[float, float, float, float] = _SLOT.unpack_from(self._map, slot * _SLOT.size)
        return values

    def write(self, spent_cost: float, spent_tokens: float, reserved_cost: float, reserved_tokens: float) -> None:
        """Store this process's figures in its slot."""
        _SLOT.pack_into(self._map, self.slot * _SLOT.size, spent_cost, spent_tokens, reserved_cost, reserved_tokens)

    def totals(self) -> tuple[float, float, float, float]:
        """The four figures summed over the slots in use (the baseline, the controller, the run's workers)."""
        values = self._all.unpack_from(self._map, 0)
        return sum(values[0::4]), sum(values[1::4]), sum(values[2::4]), sum(values[3::4])

    def close(self) -> None:
        """Unmap the file."""
        if isinstance(self._map, mmap.mmap):
            self._map.close()


def create_ledger(path: str, *, baseline_cost: float = 0.0, baseline_tokens: int = 0) -> None:
    """Write a new ledger file at ``path``: every slot zero, slot 0 the baseline."""
    data = bytearray(MAX_SLOTS * _SLOT.size)
    _SLOT.pack_into(data, 0, baseline_cost, float(baseline_tokens), 0.0, 0.0)
    with open(path, "wb") as fh:
        fh.write(data)


def read_totals(path: str) -> tuple[float, float]:
    """What the run has spent, as the ledger file at ``path`` holds it: (USD, tokens), the baseline included."""
    with open(path, "rb") as fh:
        data = fh.read()
    cost = tokens = 0.0
    for spent_cost, spent_tokens, _, _ in _SLOT.iter_unpack(data[: len(data) - len(data) % _SLOT.size]):
        cost += spent_cost
        tokens += spent_tokens
    return cost, tokens


def set_baseline(path: str, cost: float, tokens: int) -> None:
    """Replace the baseline (slot 0) of the ledger at ``path``: what the records kept from earlier runs cost."""
    with open(path, "r+b") as fh:
        fh.write(_SLOT.pack(cost, float(tokens), 0.0, 0.0))


@dataclasses.dataclass(frozen=True)
class Reservation:
    """What an admitted call holds until it returns."""

    model: str
    chars: int
    """The prompt's characters (:func:`prompt_chars`)."""
    tokens: float
    cost: float


def prompt_chars(request: ChatRequest) -> int:
    """The characters of a request's messages (and tool definitions): what its prompt tokens grow with."""
    chars = 0
    for message in request.messages:
        content = message.get("content")
        chars += len(content) if isinstance(content, str) else len(json.dumps(content)) if content else 0
        calls = message.get("tool_calls")
        chars += len(json.dumps(calls)) if calls else 0
        chars += 8  # the role and the message framing
    if request.tools:
        chars += len(json.dumps(request.tools))
    return chars


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class Budget:
    """Admits, settles and releases calls against a :class:`BudgetSpec` (one per call core)."""

    def __init__(self, spec: BudgetSpec) -> None:
        self.spec = spec
        self.ledger = Ledger(spec.ledger, spec.slot, spec.slots)
        share = 1 if self.ledger.shared else max(1, spec.share)
        self.max_cost = spec.max_cost_usd / share if spec.max_cost_usd is not None else None
        self.max_tokens = spec.max_total_tokens / share if spec.max_total_tokens is not None else None
        self._top_price = max((max(p) for p in spec.prices.values()), default=0.0)
        self._tokens_per_char: dict[str, float] = {}
        self._lock = threading.Lock()
        self.spent_cost = self.spent_tokens = self.reserved_cost = self.reserved_tokens = 0.0
        spent_cost, spent_tokens, _, _ = self.ledger.read_slot(self.ledger.slot)
        self.spent_cost, self.spent_tokens = spent_cost, spent_tokens
        self.refused = 0

    def _price(self, model: str) -> tuple[float, float]:
        found = self.spec.prices.get(model)
        return found if found is not None else (self._top_price, self._top_price)  # an unlisted model: the dearest

    def estimate(self, request: ChatRequest) -> Reservation:
        """The worst case of ``request``: its estimated prompt and its whole ``max_tokens``, priced."""
        ratio = max(1.0 / CHARS_PER_TOKEN, self._tokens_per_char.get(request.model, 0.0))
        chars = prompt_chars(request)
        prompt = math.ceil(chars * ratio)
        price_in, price_out = self._price(request.model)
        cost = (prompt * price_in + request.max_tokens * price_out) / 1_000_000
        return Reservation(request.model, chars, float(prompt + request.max_tokens), cost)

    def admit(self, request: ChatRequest) -> Reservation:
        """Reserve ``request``'s worst case, or raise :class:`BudgetExhausted` (the call is then not sent)."""
        reservation = self.estimate(request)
        with self._lock:
            spent_cost, spent_tokens, reserved_cost, reserved_tokens = self.ledger.totals()
            over = []
            if self.max_cost is not None and spent_cost + reserved_cost + reservation.cost > self.max_cost:
                over.append(f"max_cost_usd {self.spec.max_cost_usd:g}: ${spent_cost:.4f} spent, "
                            f"${reserved_cost:.4f} in flight, this call up to ${reservation.cost:.4f}")
            if self.max_tokens is not None and spent_tokens + reserved_tokens + reservation.tokens > self.max_tokens:
                over.append(f"max_total_tokens {self.spec.max_total_tokens}: {spent_tokens:.0f} spent, "
                            f"{reserved_tokens:.0f} in flight, this call up to {reservation.tokens:.0f}")
            if over:
                self.refused += 1
                raise BudgetExhausted("budget exhausted: the next call could exceed the run budget ("
                                      + "; ".join(over) + "); raise it and rerun with --jeval-resume")
            self.reserved_cost += reservation.cost
            self.reserved_tokens += reservation.tokens
            self._store()
        return reservation

    def settle(self, reservation: Reservation, reply: Reply) -> None:
        """Replace ``reservation`` by what the call used."""
        prompt, completion = _count(reply.prompt_tokens), _count(reply.completion_tokens)
        if prompt is not None and completion is not None:
            price_in, price_out = self._price(reservation.model)
            tokens = float(prompt + completion)
            cost = (prompt * price_in + completion * price_out) / 1_000_000
        else:
            tokens, cost = reservation.tokens, reservation.cost
        with self._lock:
            if prompt and reservation.chars > 0:  # learn this model's tokens per character
                ratio = self._tokens_per_char.get(reservation.model, 0.0)
                self._tokens_per_char[reservation.model] = max(ratio, prompt / reservation.chars)
            self.reserved_cost -= reservation.cost
            self.reserved_tokens -= reservation.tokens
            self.spent_cost += cost
            self.spent_tokens += tokens
            self._store()

    def release(self, reservation: Reservation) -> None:
        """Drop ``reservation`` of a call that failed (what a failed call used is not reported)."""
        with self._lock:
            self.reserved_cost -= reservation.cost
            self.reserved_tokens -= reservation.tokens
            self._store()

    def _store(self) -> None:
        self.ledger.write(self.spent_cost, self.spent_tokens, max(0.0, self.reserved_cost),
                          max(0.0, self.reserved_tokens))

    def totals(self) -> tuple[float, float]:
        """What the run has spent so far, as this process sees it: (USD, tokens)."""
        spent_cost, spent_tokens, _, _ = self.ledger.totals()
        return spent_cost, spent_tokens
