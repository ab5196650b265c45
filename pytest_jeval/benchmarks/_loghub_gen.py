"""A generator of labelled log windows in the style of LogHub's HDFS and BGL logs (for ``loghub``).

Everything comes from one :class:`random.Random` seeded by the caller, so the same seed
gives the same items byte for byte; ``data/loghub.jsonl`` is ``generate()`` with the
default seed (``python -m pytest_jeval.benchmarks._loghub_gen OUT`` rewrites it).

* **HDFS** (``Date Time Pid Level Component: Content``, e.g. ``081109 203518 143 INFO
  dfs.DataNode$DataXceiver: Receiving block blk_-160899... src: /10.250.19.102:54106 dest:
  ...``): one item is the session of one block (allocation, three replicas received and
  stored, then reads and sometimes a deletion). Anomalies: a replica write that fails with an
  exception (``write_exception``), a deletion of a block the data node does not hold
  (``delete_missing``), a replica that is never stored and is re-replicated
  (``replica_lost``).
* **BGL** (``Timestamp Date Node Time NodeRepeat Type Component Level Content``, the raw BGL
  line without its first field, the alert label): one item is a window of consecutive lines
  of one midplane. Normal windows hold corrected errors and job chatter (``ddr error(s)
  detected and corrected``, ``CE sym``, ``generating core``); anomalies are a data TLB
  error interrupt (``kernel_dtlb``), a machine check (``kernel_mc``), a lost I/O control
  stream (``app_read``) and a failed Lustre mount (``mount_fail``), each a short burst of
  FATAL or FAILURE lines.

An item: ``id``, ``system`` (hdfs | bgl), ``lines`` (the log text, one string per line,
with no label in it), ``label`` (``anomalous`` | ``normal``), ``anomaly_type`` (None when
normal) and ``anomalous_lines`` (1-based line numbers of the injected lines).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

DEFAULT_SEED = 20240611
#: Items per (system, label) in the bundled set.
DEFAULT_PER_CLASS = 10

HDFS_ANOMALIES = ("write_exception", "delete_missing", "replica_lost")
BGL_ANOMALIES = ("kernel_dtlb", "kernel_mc", "app_read", "mount_fail")

Item = dict[str, Any]


# --------------------------------------------------------------------------- HDFS


def _ip(rng: random.Random) -> str:
    return f"10.{rng.choice((250, 251))}.{rng.randint(1, 254)}.{rng.randint(1, 254)}"


class _Clock:
    """HDFS ``yymmdd HHMMSS`` stamps that only move forward."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.seconds = rng.randint(20 * 3600, 23 * 3600)
        self.day = rng.choice(("081109", "081110", "081111"))

    def tick(self, low: int = 0, high: int = 3) -> str:
        self.seconds += self.rng.randint(low, high)
        s = self.seconds % 86400
        return f"{self.day} {s // 3600:02d}{s % 3600 // 60:02d}{s % 60:02d}"


def _hdfs_session(rng: random.Random, anomaly: str | None) -> tuple[list[str], list[int]]:
    blk = f"blk_{rng.choice(('', '-'))}{rng.randint(10**17, 10**19 - 1)}"
    clock = _Clock(rng)
    nodes = [_ip(rng) for _ in range(3)]
    size = rng.choice((67108864, 67108864, 3542, 91178, 26542))
    job = f"job_2008110{rng.randint(90, 99)}{rng.randint(1000, 2359)}_{rng.randint(1, 9999):04d}"
    part = rng.randint(0, 999)
    name_pid = rng.choice((19, 26, 33, 35))
    lines: list[str] = []
    bad: list[int] = []

    def add(level: str, component: str, content: str, pid: int | None = None, anomalous: bool = False,
            wait: tuple[int, int] = (0, 2)) -> None:
        lines.append(f"{clock.tick(*wait)} {pid if pid is not None else rng.randint(100, 9999)} {level} "
                     f"{component}: {content}")
        if anomalous:
            bad.append(len(lines))

    add("INFO", "dfs.FSNamesystem",
        f"BLOCK* NameSystem.allocateBlock: /user/root/rand/_temporary/_task_{job}_m_{part:06d}_0/"
        f"part-{part:05d}. {blk}",
        pid=name_pid)
    lost = rng.randrange(3) if anomaly in ("write_exception", "replica_lost") else -1
    for i, node in enumerate(nodes):
        src = nodes[i - 1] if i else _ip(rng)
        add("INFO", "dfs.DataNode$DataXceiver",
            f"Receiving block {blk} src: /{src}:{rng.randint(30000, 60000)} dest: /{node}:50010")
    for i, node in enumerate(nodes):
        pid = rng.randint(100, 9999)
        if i == lost and anomaly == "write_exception":
            add("INFO", "dfs.DataNode$DataXceiver",
                f"writeBlock {blk} received exception java.io.IOException: Connection reset by peer",
                pid=pid, anomalous=True)
            add("INFO", "dfs.DataNode$PacketResponder",
                f"PacketResponder {blk} {2 - i} Exception java.io.InterruptedIOException: Interruped while "
                f"waiting for IO on channel java.nio.channels.SocketChannel[connected local=/{node}:50010 "
                f"remote=/{nodes[i - 1]}:{rng.randint(30000, 60000)}]. 60000 millis timeout left.",
                pid=pid, anomalous=True)
            continue
        if i == lost and anomaly == "replica_lost":
            continue
        add("INFO", "dfs.DataNode$PacketResponder", f"PacketResponder {2 - i} for block {blk} terminating", pid=pid)
        add("INFO", "dfs.DataNode$PacketResponder", f"Received block {blk} of size {size} from /{nodes[i - 1]}",
            pid=pid)
        add("INFO", "dfs.FSNamesystem",
            f"BLOCK* NameSystem.addStoredBlock: blockMap updated: {node}:50010 is added to {blk} size {size}",
            pid=name_pid)
    if anomaly == "replica_lost":
        target = _ip(rng)
        add("INFO", "dfs.FSNamesystem",
            f"BLOCK* ask {nodes[0]}:50010 to replicate {blk} to datanode(s) {target}:50010", pid=name_pid,
            anomalous=True, wait=(40, 200))
        add("WARN", "dfs.DataNode", f"{nodes[0]}:50010:Failed to transfer {blk} to {target}:50010 got "
            "java.net.SocketException: Connection reset", anomalous=True)
    for _ in range(rng.randint(0, 3)):
        reader = rng.choice(nodes)
        add("INFO", "dfs.DataNode$DataXceiver", f"{reader}:50010 Served block {blk} to /{_ip(rng)}", wait=(1, 90))
    if anomaly == "delete_missing" or rng.random() < 0.5:
        holder = rng.choice(nodes)
        add("INFO", "dfs.FSNamesystem", f"BLOCK* NameSystem.delete: {blk} is added to invalidSet of {holder}:50010",
            pid=name_pid, wait=(60, 600))
        if anomaly == "delete_missing":
            add("WARN", "dfs.FSDataset",
                f"Unexpected error trying to delete block {blk}. BlockInfo not found in volumeMap.", anomalous=True)
        else:
            sub = rng.randint(0, 63)
            add("INFO", "dfs.FSDataset", f"Deleting block {blk} file /mnt/hadoop/dfs/data/current/subdir{sub}/{blk}")
    return lines, bad


# --------------------------------------------------------------------------- BGL

_BGL_NORMAL = (
    ("RAS", "KERNEL", "INFO", "instruction cache parity error corrected"),
    ("RAS", "KERNEL", "INFO", "{n} ddr error(s) detected and corrected on rank 0, symbol {s}, bit {b}"),
    ("RAS", "KERNEL", "INFO", "total of {n} ddr error(s) detected and corrected"),
    ("RAS", "KERNEL", "INFO", "CE sym {s}, at 0x{addr}, mask 0x{mask}"),
    ("RAS", "KERNEL", "INFO", "generating core.{core}"),
    ("RAS", "APP", "INFO", "ciod: Received signal 15, code=0, errno=0, address=0x00000000"),
    ("RAS", "KERNEL", "INFO", "double-hummer alignment exceptions"),
    ("RAS", "MMCS", "INFO", "idoproxydb hit ASSERT condition: ASSERT expression=0 Source file=idotransportmgr.cpp"),
    ("RAS", "KERNEL", "WARNING", "ddr: activating redundant bit steering for next allocation: rank=0 symbol={s}"),
)

_BGL_BURSTS: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    "kernel_dtlb": (
        ("RAS", "KERNEL", "FATAL", "data TLB error interrupt"),
        ("RAS", "KERNEL", "FATAL", "program interrupt: fp cr field .............0"),
        ("RAS", "KERNEL", "FATAL", "r{r1}=0x{addr}    r{r2}=0x{mask}"),
    ),
    "kernel_mc": (
        ("RAS", "KERNEL", "FATAL", "machine check interrupt (bit=0x{b:02x}): L2 dcache unit data parity error"),
        ("RAS", "KERNEL", "FATAL", "machine check status register: 0x{addr}"),
        ("RAS", "KERNEL", "FATAL", "rts: kernel terminated for reason 1004"),
    ),
    "app_read": (
        ("RAS", "APP", "FATAL", "ciod: failed to read message prefix on control stream (CioStream socket to "
                                "172.16.96.{b}:{port})"),
        ("RAS", "APP", "FATAL", "ciod: Error reading message prefix after LOAD_MESSAGE on CioStream socket to "
                                "172.16.96.{b}:{port}: Link has been severed"),
    ),
    "mount_fail": (
        ("RAS", "APP", "FAILURE", "Lustre mount FAILED : bglio{io} : block_id : location"),
        ("RAS", "KERNEL", "FATAL", "rts: kernel terminated for reason 1001rts: bad message header: invalid cpu, "
                                   "type=42315, cpu=105, index=1207960804, total=1204"),
    ),
}


def _bgl_window(rng: random.Random, anomaly: str | None) -> tuple[list[str], list[int]]:
    rack = f"R{rng.randint(0, 7)}{rng.randint(0, 7)}-M{rng.randint(0, 1)}"
    start = rng.randint(1117838570, 1136000000)
    elapsed = rng.randint(0, 999999)  # microseconds since ``start``, only moving forward
    size = rng.randint(10, 16)
    burst_at = rng.randint(3, size - 4) if anomaly else -1
    lines: list[str] = []
    bad: list[int] = []

    def fields() -> dict[str, Any]:
        return {"n": rng.randint(1, 12), "s": rng.randint(0, 35), "b": rng.randint(0, 255),
                "addr": f"{rng.getrandbits(32):08x}", "mask": f"{rng.getrandbits(8):02x}",
                "core": rng.randint(100, 4000), "r1": rng.randint(0, 15), "r2": rng.randint(16, 31),
                "port": rng.randint(30000, 40000), "io": rng.randint(1, 99)}

    def add(event: tuple[str, str, str, str], anomalous: bool) -> None:
        nonlocal elapsed
        elapsed += rng.randint(1000, 4_000_000)
        epoch, micro = start + elapsed // 1_000_000, elapsed % 1_000_000
        node = f"{rack}-N{rng.randint(0, 15)}-C:J{rng.randint(2, 17):02d}-U{rng.choice((1, 11))}"
        t = time.gmtime(epoch)
        date = f"{t.tm_year}.{t.tm_mon:02d}.{t.tm_mday:02d}"
        stamp = (f"{t.tm_year}-{t.tm_mon:02d}-{t.tm_mday:02d}-{t.tm_hour:02d}.{t.tm_min:02d}.{t.tm_sec:02d}."
                 f"{micro:06d}")
        kind, component, level, template = event
        lines.append(f"{epoch} {date} {node} {stamp} {node} {kind} {component} {level} {template.format(**fields())}")
        if anomalous:
            bad.append(len(lines))

    while len(lines) < size:
        if len(lines) == burst_at and anomaly is not None:
            for event in _BGL_BURSTS[anomaly]:
                add(event, True)
            continue
        add(rng.choice(_BGL_NORMAL), False)
    return lines, bad


# --------------------------------------------------------------------------- items


def generate(seed: int = DEFAULT_SEED, per_class: int = DEFAULT_PER_CLASS) -> list[Item]:
    """``per_class`` normal and ``per_class`` anomalous items per system (HDFS then BGL), from ``seed``.

    The anomaly types cycle in order; normal and anomalous items alternate. Ids are
    ``<system>-<nnn>`` by position, so they depend on ``per_class`` but never on anything else.
    """
    rng = random.Random(seed)
    items: list[Item] = []
    for system, kinds, make in (("hdfs", HDFS_ANOMALIES, _hdfs_session), ("bgl", BGL_ANOMALIES, _bgl_window)):
        for i in range(2 * per_class):
            anomaly = kinds[(i // 2) % len(kinds)] if i % 2 else None
            lines, bad = make(rng, anomaly)
            items.append({
                "id": f"{system}-{i + 1:03d}",
                "system": system,
                "lines": lines,
                "label": "anomalous" if anomaly else "normal",
                "anomaly_type": anomaly,
                "anomalous_lines": bad,
            })
    return items


def write_jsonl(items: list[Item], path: Path) -> None:
    """Write items one JSON object per line (sorted keys, so the bytes depend only on the items)."""
    path.write_text("".join(json.dumps(item, sort_keys=True) + "\n" for item in items), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """``python -m pytest_jeval.benchmarks._loghub_gen OUT [SEED]``: write the generated set to OUT."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m pytest_jeval.benchmarks._loghub_gen OUT.jsonl [SEED]", file=sys.stderr)
        return 2
    seed = int(args[1]) if len(args) > 1 else DEFAULT_SEED
    items = generate(seed)
    write_jsonl(items, Path(args[0]))
    print(f"wrote {len(items)} items to {args[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
