"""Week 13 (CUDA semantics without a GPU): programs of stream operations, and pictures of their timelines.

A *program* is what a piece of PyTorch code asks of the GPU and of the host, in the order the host asks
it: a list of `Op`s. `Program` builds one with methods named after the PyTorch calls they stand for:

    p = Program()
    p.h2d("x", "x_host", stream=0, us=40, pinned=True, non_blocking=True)   # x = x_host.to("cuda", non_blocking=True)
    p.launch("matmul", stream=0, us=120, reads=["x", "w"], writes=["y"])     # y = x @ w
    p.record("e", stream=0)                                                 # e.record(torch.cuda.current_stream())
    p.wait("e", stream=1)                                                   # side.wait_event(e)
    p.launch("relu", stream=1, us=30, reads=["y"], writes=["z"])            # with torch.cuda.stream(side): z = y.relu()
    p.item("z", stream=1)                                                   # z.sum().item(): the host waits
    ops = p.ops

The kinds of `Op`, the PyTorch call each stands for, and the fields it uses:

- `launch`: a kernel (any op on CUDA tensors); stream, us, reads, writes, name
- `copy`: `.to()` / `.copy_()` between host and device; stream, us, direction ("h2d" or "d2h"), pinned,
  non_blocking, reads, writes
- `record`: `event.record(stream)`; event, stream
- `wait`: `stream.wait_event(event)`; event, stream
- `sync_event`: `event.synchronize()`; event
- `sync_stream`: `stream.synchronize()`; stream
- `sync_device`: `torch.cuda.synchronize()`
- `host`: Python work on the host (it may read and write host buffers); us, reads, writes, name
- `item`: `.item()`, `.cpu()`, `.tolist()`, `print(t)`; stream, tensor
- `alloc`: `torch.empty(...)` on the current stream; tensor, stream, nbytes
- `free`: the last reference to a tensor goes away; tensor
- `record_stream`: `tensor.record_stream(stream)`; tensor, stream

Streams are integers (0 is the default stream); events and tensors are names. `p.wait_stream(a, b)`
(`a.wait_stream(b)`) adds the record and the wait PyTorch makes for it.

Also here: `describe(op)` and `describe_program(ops)` (for messages), `random_program` (for tests and
benchmarks), `sanitizer_races(ops)` (what PyTorch's own CUDA sanitizer, `torch.cuda._sanitizer`, reports
for a program: its race detector is plain Python and runs without a GPU), the vocabulary of the
graph-capture task (`SYNCHRONIZES`, ...), `plot_timeline` (one lane per stream, and one for the host), and
`recorded_example()`: the walkthrough's two programs with their timelines as recorded once with the
reference simulator, so the walkthrough can draw them without one. On a GPU, `time_example_on_gpu` runs
that step for real, `capture_refuses_item` tries a capture that synchronizes, and `capture_cases_on_gpu`
tries the captures behind the graph task's rules for copies and waits (`CAPTURE_CASES`: each as a program
of this model and as PyTorch code; the GPU cells of the walkthrough and the lab use them).

Depends only on the standard library and matplotlib. It holds no lab answers.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from labkit.testing import LabCheckFailure, fail

__all__ = ["Op", "Program", "KINDS", "DEVICE_KINDS", "LAUNCH_US", "describe", "describe_program", "random_program",
           "sanitizer_races", "SYNCHRONIZES", "PAGEABLE", "DEFAULT_STREAM", "NOT_CAPTURED", "UNJOINED",
           "plot_timeline", "example_programs", "recorded_example", "check_times", "check_pairs", "check_blocks",
           "time_example_on_gpu", "capture_refuses_item", "UNCAPTURED_WAIT", "LEGACY_WAIT", "CAPTURE_CASES",
           "capture_cases_on_gpu"]

LAUNCH_US = 5.0  # what one asynchronous call (a kernel launch, a copy, .item()) costs the host, in microseconds

KINDS = ("launch", "copy", "record", "wait", "sync_event", "sync_stream", "sync_device", "host", "item",
         "alloc", "free", "record_stream")
DEVICE_KINDS = ("launch", "copy")  # the kinds that run on a stream and take time there

# why an operation cannot be inside a CUDA graph capture (the graph task's vocabulary)
SYNCHRONIZES = "synchronizes"  # the host would wait for the GPU: illegal while a stream is capturing
PAGEABLE = "pageable copy"  # a copy of pageable host memory on a capturing stream: PyTorch refuses it
DEFAULT_STREAM = "default stream"  # work on stream 0, which can never join a capture: it runs now, outside the graph
NOT_CAPTURED = "not captured"  # work on a stream that never joined the capture: it runs now, once, not on replay
UNJOINED = "unjoined"  # the last work of a side stream that joined the capture, which the capture never waits for
UNCAPTURED_WAIT = "waits for uncaptured work"  # a capturing stream waits for an event recorded outside the capture
LEGACY_WAIT = "default stream waits for the capture"  # stream 0 waits for an event recorded inside the capture


@dataclass(frozen=True)
class Op:
    """One operation of a program. Only the fields of its kind (see the module's table) mean anything."""

    kind: str
    stream: int | None = None
    us: float = 0.0
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    name: str = ""
    event: str | None = None
    tensor: str | None = None
    direction: str = ""  # "h2d" or "d2h", for a copy
    pinned: bool = True
    non_blocking: bool = True
    nbytes: int = 0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind {self.kind!r}: one of {KINDS}")
        object.__setattr__(self, "reads", tuple(self.reads))
        object.__setattr__(self, "writes", tuple(self.writes))

    def __repr__(self):
        return f"Op({describe(self)})"


@dataclass
class Program:
    """Builds a list of `Op`s with PyTorch's names for them (see the module's docstring)."""

    ops: list[Op] = field(default_factory=list)

    def _add(self, **kw) -> Program:
        self.ops.append(Op(**kw))
        return self

    def launch(self, name: str, stream: int = 0, us: float = 10.0, reads: Iterable[str] = (),
               writes: Iterable[str] = ()) -> Program:
        return self._add(kind="launch", name=name, stream=stream, us=float(us), reads=tuple(reads),
                         writes=tuple(writes))

    def h2d(self, dst: str, src: str, stream: int = 0, us: float = 10.0, pinned: bool = True,
            non_blocking: bool = True) -> Program:
        """`dst = src.to("cuda", non_blocking=...)`, src a host tensor (pinned or pageable)."""
        return self._add(kind="copy", direction="h2d", stream=stream, us=float(us), pinned=pinned,
                         non_blocking=non_blocking, reads=(src,), writes=(dst,), name=f"{src}->{dst}")

    def d2h(self, dst: str, src: str, stream: int = 0, us: float = 10.0, pinned: bool = True,
            non_blocking: bool = True) -> Program:
        """`dst.copy_(src, non_blocking=...)`, dst a host tensor (pinned or pageable), src on the GPU."""
        return self._add(kind="copy", direction="d2h", stream=stream, us=float(us), pinned=pinned,
                         non_blocking=non_blocking, reads=(src,), writes=(dst,), name=f"{src}->{dst}")

    def record(self, event: str, stream: int = 0) -> Program:
        return self._add(kind="record", event=event, stream=stream)

    def wait(self, event: str, stream: int = 0) -> Program:
        return self._add(kind="wait", event=event, stream=stream)

    def wait_stream(self, stream: int, other: int) -> Program:
        """`stream.wait_stream(other)`: PyTorch records an event on `other` and makes `stream` wait for it."""
        event = f"_wait_stream_{len(self.ops)}"
        return self.record(event, other).wait(event, stream)

    def sync_event(self, event: str) -> Program:
        return self._add(kind="sync_event", event=event)

    def sync_stream(self, stream: int) -> Program:
        return self._add(kind="sync_stream", stream=stream)

    def synchronize(self) -> Program:
        return self._add(kind="sync_device")

    def host(self, us: float = 10.0, reads: Iterable[str] = (), writes: Iterable[str] = (), name: str = "python") \
            -> Program:
        return self._add(kind="host", us=float(us), reads=tuple(reads), writes=tuple(writes), name=name)

    def item(self, tensor: str, stream: int = 0) -> Program:
        return self._add(kind="item", tensor=tensor, stream=stream)

    def alloc(self, tensor: str, stream: int = 0, nbytes: int = 512) -> Program:
        return self._add(kind="alloc", tensor=tensor, stream=stream, nbytes=int(nbytes))

    def free(self, tensor: str) -> Program:
        return self._add(kind="free", tensor=tensor)

    def record_stream(self, tensor: str, stream: int) -> Program:
        return self._add(kind="record_stream", tensor=tensor, stream=stream)


# how each kind reads in PyTorch's words; `{reads}`/`{writes}` are the joined names, `{how}` a copy's memory and mode
_WORDS = {
    "launch": "s{stream}: {kernel}({reads}) -> {writes}, {us:g} us",
    "copy": "s{stream}: copy {direction} {reads} -> {writes} ({how}), {us:g} us",
    "record": "{event}.record(s{stream})",
    "wait": "s{stream}.wait_event({event})",
    "sync_event": "{event}.synchronize()",
    "sync_stream": "s{stream}.synchronize()",
    "sync_device": "torch.cuda.synchronize()",
    "host": "host: {python}{touched}, {us:g} us",
    "item": "{tensor}.item() (s{stream})",
    "alloc": "{tensor} = torch.empty({nbytes} bytes) on s{stream}",
    "free": "del {tensor}",
    "record_stream": "{tensor}.record_stream(s{stream})",
}


def describe(op: Op) -> str:
    """One line in PyTorch's words: `s1: relu(y) -> z, 30 us`."""
    touched = (f" reads {', '.join(op.reads)}" if op.reads else "") + \
              (f" writes {', '.join(op.writes)}" if op.writes else "")
    how = ("pinned" if op.pinned else "pageable") + (", non_blocking" if op.non_blocking else ", blocking")
    fields = {**vars(op), "reads": ", ".join(op.reads), "writes": ", ".join(op.writes) or "-"}
    return _WORDS[op.kind].format(**fields, kernel=op.name or "kernel", python=op.name or "python", how=how,
                                  touched=touched)


def _line(i: int, op: Op, marks: dict[int, str]) -> str:
    return f"  {i:3d}  {describe(op)}{'   <- ' + marks[i] if i in marks else ''}"


def describe_program(ops: Sequence[Op], marks: dict[int, str] | None = None) -> str:
    """The program, one numbered line per op (with an optional note after some of them)."""
    return "\n".join(_line(i, op, marks or {}) for i, op in enumerate(ops))


def random_program(n: int, seed: int = 0, streams: Sequence[int] = (0, 1), tensors: int = 6,
                   host_buffers: int = 2, kinds: Sequence[str] | None = None, memory: bool = False) -> list[Op]:
    """`n` random operations over a few streams, tensors, pinned host buffers and events: the kind of
    program a data pipeline and a model make together. `kinds` limits the kinds drawn (default: all but
    the memory ones); `memory=True` adds allocations, frees and record_stream calls (each tensor name is
    allocated once: x0, x1, ...)."""
    rng = random.Random(seed)
    kinds = list(kinds or ("launch", "launch", "launch", "copy", "record", "wait", "sync_event", "sync_stream",
                           "sync_device", "host", "item"))
    names = [f"t{k}" for k in range(tensors)]
    bufs = [f"h{k}" for k in range(host_buffers)]
    events = ["e0", "e1", "e2"]
    p = Program()
    live: dict[str, int] = {}  # tensor -> stream it was allocated on
    made = 0
    for _ in range(n):
        if memory and (rng.random() < 0.3 or not live):
            roll = rng.random()
            if roll < 0.5 or not live:
                name, made = f"x{made}", made + 1
                s = rng.choice(streams)
                p.alloc(name, s, rng.choice([512, 1024, 4096, 1 << 20]))
                live[name] = s
            elif roll < 0.8:
                name = rng.choice(sorted(live))
                p.free(name)
                del live[name]
            else:
                p.record_stream(rng.choice(sorted(live)), rng.choice(streams))
            continue
        kind = rng.choice(kinds)
        pool = sorted(live) if memory and live else names
        s = rng.choice(streams)
        if kind == "launch":
            p.launch(rng.choice(["mm", "add", "relu", "sum", "copy_"]), s, rng.choice([2, 5, 10, 40, 100]),
                     rng.sample(pool, min(len(pool), rng.randint(0, 2))), rng.sample(pool, min(len(pool), 1)))
        elif kind == "copy":
            pinned, blocking = rng.random() < 0.8, rng.random() < 0.2
            if rng.random() < 0.5:
                p.h2d(rng.choice(pool), rng.choice(bufs), s, rng.choice([5, 20, 60]), pinned, not blocking)
            else:
                p.d2h(rng.choice(bufs), rng.choice(pool), s, rng.choice([5, 20, 60]), pinned, not blocking)
        elif kind == "record":
            p.record(rng.choice(events), s)
        elif kind == "wait":
            p.wait(rng.choice(events), s)
        elif kind == "sync_event":
            p.sync_event(rng.choice(events))
        elif kind == "sync_stream":
            p.sync_stream(s)
        elif kind == "sync_device":
            p.synchronize()
        elif kind == "host":
            p.host(rng.choice([1, 10, 50]), rng.sample(bufs, rng.randint(0, 1)), rng.sample(bufs, rng.randint(0, 1)))
        elif kind == "item":
            p.item(rng.choice(pool), s)
        else:
            raise ValueError(f"random_program draws no {kind!r}")
    return p.ops


def _window(ops: Sequence[Op], marks: dict[int, str], context: int = 6) -> str:
    """The program around the marked ops (all of it when short)."""
    if len(ops) <= 24:
        return describe_program(ops, marks)
    keep = sorted({j for i in marks for j in range(max(0, i - context), min(len(ops), i + 2))})
    lines, last = [], -1
    for j in keep:
        if j != last + 1:
            lines.append("  ...")
        lines.append(_line(j, ops[j], marks))
        last = j
    return "\n".join(lines + (["  ..."] if last < len(ops) - 1 else []))


def check_times(what: str, got: Any, expected: Sequence[tuple[float, float]], ops: Sequence[Op], *,
                cause: str = "") -> None:
    """`got` is one (start, end) pair of floats per op, each within 1e-6 us of `expected`; a failure names the
    first op that differs and shows the program around it."""
    if not isinstance(got, (list, tuple)) or len(got) != len(ops):
        fail(what, f"a list of {len(ops)} (start, end) pairs, one per op", got if not isinstance(got, (list, tuple))
             else f"{len(got)} entries", cause)
    for i, (g, e) in enumerate(zip(got, expected)):
        ok = isinstance(g, (tuple, list)) and len(g) == 2 and all(type(x) is float for x in g)
        if not ok:
            fail(f"{what}: entry {i} ({describe(ops[i])})", "a (start, end) tuple of two Python floats", g, cause)
        if abs(g[0] - e[0]) > 1e-6 or abs(g[1] - e[1]) > 1e-6:
            raise LabCheckFailure(f"{what}: op {i} ({describe(ops[i])})\n  expected: {tuple(e)}\n  got:      "
                                  f"{tuple(g)}" + (f"\n  likely cause: {cause}" if cause else "") +
                                  "\n  the program:\n" + _window(ops, {i: f"expected {tuple(e)}, got {tuple(g)}"}))


def check_pairs(what: str, got: Any, expected: Sequence[tuple], ops: Sequence[Op], *, cause: str = "") -> None:
    """`got` is the list `expected` is (tuples, in the same order: races `(i, j, memory)` or capture breaks
    `(i, reason)`); a failure lists what is missing and what is extra, marked in the program."""
    if not isinstance(got, list) or not all(isinstance(x, tuple) for x in got):
        fail(what, "a list of tuples", got, cause)
    if list(got) == list(expected):
        return
    missing = [x for x in expected if x not in got]
    extra = [x for x in got if x not in expected]
    marks: dict[int, str] = {}
    for tag, items in (("missing", missing), ("extra", extra)):
        for x in items:
            if x and isinstance(x[0], int) and 0 <= x[0] < len(ops):
                marks[x[0]] = marks.get(x[0], "") + f" {tag} {x}"
            if len(x) > 2 and isinstance(x[1], int) and 0 <= x[1] < len(ops):
                marks[x[1]] = marks.get(x[1], "") + f" {tag} {x}"
    order = "" if missing or extra else "\n  (the same items, in another order: sort them as the task says)"
    raise LabCheckFailure(f"{what}\n  expected: {list(expected)}\n  got:      {got}\n  missing: {missing}\n  "
                          f"extra:   {extra}{order}" + (f"\n  likely cause: {cause}" if cause else "") +
                          "\n  the program:\n" + _window(ops, {k: v.strip() for k, v in marks.items()}))


def check_blocks(what: str, got: Any, expected: dict[str, int], ops: Sequence[Op], *, cause: str = "") -> None:
    """`got` maps every allocated tensor to the block `expected` gives it."""
    if not isinstance(got, dict) or set(got) != set(expected):
        fail(what, f"a dict with one entry per allocated tensor: {sorted(expected)}",
             sorted(got) if isinstance(got, dict) else got, cause)
    wrong = {t: (expected[t], got[t]) for t in expected if got[t] != expected[t] or type(got[t]) is not int}
    if wrong:
        first = min(wrong, key=lambda t: next(i for i, op in enumerate(ops) if op.kind == "alloc" and op.tensor == t))
        at = next(i for i, op in enumerate(ops) if op.kind == "alloc" and op.tensor == first)
        raise LabCheckFailure(f"{what}: tensor {first} (op {at})\n  expected block: {expected[first]!r}\n  got:  "
                              f"          {got[first]!r}\n  ({len(wrong)} tensor(s) differ)" +
                              (f"\n  likely cause: {cause}" if cause else "") + "\n  the program:\n" +
                              _window(ops, {at: f"expected block {expected[first]!r}, got {got[first]!r}"}))


def plot_timeline(ops: Sequence[Op], times: Sequence[tuple[float, float]], ax=None, title: str | None = None):
    """One lane per stream and one for the host: each device op a bar from its start to its end, each host
    op (Python work, and the time the host spends waiting: in a synchronizing call, or while a pageable or
    blocking copy runs) a bar on the host lane."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(10, 2.6))
    streams = sorted({op.stream for op in ops if op.kind in DEVICE_KINDS})
    lanes = {("s", s): k + 1 for k, s in enumerate(streams)}
    colors = {"launch": "#4C72B0", "copy": "#DD8452", "host": "#55A868", "wait": "#C44E52"}
    for op, (start, end) in zip(ops, times):
        if op.kind == "copy" and not (op.pinned and op.non_blocking) and end > start:
            # the host waits for a pageable or blocking copy (at least while it runs)
            ax.broken_barh([(start, end - start)], (-0.35, 0.7), facecolors=colors["wait"], edgecolor="white")
            ax.text((start + end) / 2, 0, "wait", ha="center", va="center", fontsize=7, color="white", clip_on=True)
        if op.kind in DEVICE_KINDS:
            y, color = lanes[("s", op.stream)], colors[op.kind]
            label = op.name if op.kind == "launch" else op.direction
        elif op.kind == "host":
            y, color, label = 0, colors["host"], op.name
        elif op.kind in ("sync_event", "sync_stream", "sync_device", "item") and end > start:
            y, color, label = 0, colors["wait"], "wait" if op.kind != "item" else "item"
        else:
            continue
        ax.broken_barh([(start, max(end - start, 1e-9))], (y - 0.35, 0.7), facecolors=color, edgecolor="white")
        if end - start > 0:
            ax.text((start + end) / 2, y, label, ha="center", va="center", fontsize=7, color="white", clip_on=True)
    ax.set_yticks([0] + [lanes[("s", s)] for s in streams], ["host"] + [f"stream {s}" for s in streams])
    ax.invert_yaxis()
    ax.set_xlabel("time (us)")
    if title:
        ax.set_title(title)
    return ax


def sanitizer_races(ops: Sequence[Op], memory: dict[str, str] | None = None) -> list[tuple[int, int, str]]:
    """The races that PyTorch's CUDA sanitizer (`torch.cuda._sanitizer.EventHandler`, what
    TORCH_CUDA_SANITIZER=1 runs) finds in a program, as `(earlier op, later op, memory)` triples, sorted.
    The program is fed to the sanitizer's own handlers, an idealised feed of what CUDA's trace hooks
    report: a launch, a copy or an `item` is a kernel launch on its stream; an `item`, and a blocking copy
    (`non_blocking=False`, pinned or pageable), then synchronize their stream (PyTorch's blocking copy,
    `c10::cuda::memcpy_and_sync`, reports a stream synchronization to the trace hooks and calls
    `cudaStreamSynchronize`); events and synchronizations map one to one; every name is memory. A pageable
    `non_blocking` copy synchronizes nothing here, as in a real run: it is a `cudaMemcpyAsync`, which CUDA
    says only *may* be synchronous for pageable memory, and whatever wait the driver makes does not go
    through PyTorch. (In a real run the sanitizer tracks only CUDA tensors, so a copy's host buffer is not
    memory to it.) It sees no host work: a program with `host` ops raises ValueError.
    `memory` maps names to the memory they live in (default: each name its own)."""
    import logging

    from torch.cuda import _sanitizer

    memory = memory or {}
    handler = _sanitizer.EventHandler()
    pointers: dict[str, int] = {}
    events: dict[str, int] = {}
    streams: set[int] = {0}
    op_of_seq: dict[int, int] = {}
    found: set[tuple[int, int, str]] = set()

    def pointer(name):
        block = memory.get(name, name)
        return pointers.setdefault(block, 0x7000_0000 + 512 * len(pointers))

    def event(name):
        if name not in events:
            events[name] = 1 + len(events)
            handler._handle_event_creation(events[name])
        return events[name]

    def stream(s):
        if s not in streams:
            streams.add(s)
            handler._handle_stream_creation(s)
        return s

    block_of = {}
    quiet = logging.getLogger(_sanitizer.__name__)
    level, quiet.level = quiet.level, logging.ERROR  # it logs each stream it meets first in a launch
    try:
        for i, op in enumerate(ops):
            k = op.kind
            if k in ("launch", "copy", "item"):
                reads = [op.tensor] if k == "item" else list(op.reads)
                writes = [] if k == "item" else list(op.writes)
                w = {pointer(t) for t in writes}
                r = {pointer(t) for t in reads} - w
                for t in reads + writes:
                    block_of[pointer(t)] = memory.get(t, t)
                errors = handler._handle_kernel_launch(stream(op.stream), r, w, set(), op.name or k,
                                                       {p: [] for p in r | w})
                op_of_seq[handler.seq_num] = i
                for e in errors:
                    found.add((op_of_seq[e.previous_access.seq_num], i, block_of[e.data_ptr]))
                if k == "item" or (k == "copy" and not op.non_blocking):
                    handler._handle_stream_synchronization(stream(op.stream))
            elif k == "record":
                handler._handle_event_record(event(op.event), stream(op.stream))
            elif k == "wait":
                handler._handle_event_wait(event(op.event), stream(op.stream))
            elif k == "sync_event":
                handler._handle_event_synchronization(event(op.event))
            elif k == "sync_stream":
                handler._handle_stream_synchronization(stream(op.stream))
            elif k == "sync_device":
                handler._handle_device_synchronization()
            elif k == "host":
                raise ValueError(f"op {i} ({describe(op)}): the CUDA sanitizer does not see host work")
    finally:
        quiet.level = level
    return sorted(found, key=lambda r: (r[0], r[1], str(r[2])))


def recorded_example() -> dict[str, tuple[list[Op], list[tuple[float, float]]]]:
    """The walkthrough's data-loading step in two versions, each with its timeline as recorded once with the
    reference simulator at LAUNCH_US = 5: {"before": (ops, times), "after": (ops, times)}. Before: pageable
    host memory and blocking copies on the default stream; after: pinned buffers, non_blocking copies on a
    side stream, and events. The lab's last cell checks that your `simulate` reproduces both."""
    before, after = example_programs()
    return {"before": (before, [(float(a), float(b)) for a, b in _BEFORE_TIMES]),
            "after": (after, [(float(a), float(b)) for a, b in _AFTER_TIMES])}


def example_programs() -> tuple[list[Op], list[Op]]:
    """The walkthrough's step, loading three batches and running a forward pass on each: (before, after).
    Before: one pageable host buffer, blocking copies, all on the default stream. After: two pinned buffers
    used in turn, non_blocking copies on stream 1, an event per copy that stream 0 waits for before the
    forward pass, and the host waiting for the copy out of a buffer before it refills that buffer."""
    slow = Program()
    for k in range(3):
        slow.host(20, writes=["h"], name=f"load {k}")  # the data loader fills a host buffer
        slow.h2d("x", "h", stream=0, us=60, pinned=False, non_blocking=False)
        slow.launch(f"forward {k}", 0, 80, reads=["x", "w"], writes=["y"])
    slow.item("y", 0)
    fast = Program()
    for k in range(3):
        buf = f"h{k % 2}"
        if k >= 2:
            fast.sync_event(f"copied{k - 2}")  # the copy out of this buffer, two steps ago, must be done
        fast.host(20, writes=[buf], name=f"load {k}")
        fast.h2d(f"x{k}", buf, stream=1, us=30, pinned=True, non_blocking=True)
        fast.record(f"copied{k}", 1)
        fast.wait(f"copied{k}", 0)
        fast.launch(f"forward {k}", 0, 80, reads=[f"x{k}", "w"], writes=["y"])
    fast.item("y", 0)
    return slow.ops, fast.ops


# Recorded once with the lab's reference simulate, LAUNCH_US = 5.
_BEFORE_TIMES: tuple[tuple[float, float], ...] = (
    (0, 20), (25, 85), (90, 170), (90, 110), (170, 230), (235, 315), (235, 255), (315, 375), (380, 460), (380, 460),
)
_AFTER_TIMES: tuple[tuple[float, float], ...] = (
    (0, 20), (25, 55), (25, 25), (25, 25), (55, 135), (30, 50), (55, 85), (55, 55), (55, 55), (135, 215), (60, 60),
    (60, 80), (85, 115), (85, 85), (85, 85), (215, 295), (90, 295),
)


def time_example_on_gpu(device: str = "cuda", reps: int = 5) -> tuple[float, float]:
    """The walkthrough's step on a real GPU, three 2048x2048 batches and a matmul each: (milliseconds per step
    with pageable host memory and blocking copies, with pinned buffers and non_blocking copies on a side
    stream that the current stream waits for), timed with CUDA events."""
    import torch

    w = torch.randn(2048, 2048, device=device)
    pageable = [torch.randn(2048, 2048) for _ in range(3)]
    pinned = [b.pin_memory() for b in pageable]
    side = torch.cuda.Stream()

    def blocking():
        for b in pageable:
            (b.to(device) @ w).relu_()

    def overlapped():
        for b in pinned:
            with torch.cuda.stream(side):
                x = b.to(device, non_blocking=True)
            torch.cuda.current_stream().wait_stream(side)
            x.record_stream(torch.cuda.current_stream())  # x was allocated on the side stream
            (x @ w).relu_()

    def gpu_ms(step):
        step()  # warm up (cuBLAS, the caching allocator)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            step()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / reps

    return gpu_ms(blocking), gpu_ms(overlapped)


def capture_refuses_item(device: str = "cuda") -> bool:
    """Whether CUDA refuses a graph capture that calls `.item()` (it must: the host would wait for work that
    is being recorded, not run)."""
    import torch

    graph, y = torch.cuda.CUDAGraph(), torch.zeros(1, device=device)
    try:
        with torch.cuda.graph(graph):
            y += 1
            y.item()
        refused = False
    except RuntimeError:
        refused = True
    torch.cuda.synchronize()
    return refused


def _capture_case_programs() -> dict[str, list[Op]]:
    """The graph task's rules for copies and waits, one small capture each (capture stream 1, side streams 2 and 3,
    the default stream 0), as programs of this model; `capture_cases_on_gpu` runs the same code on a GPU."""
    return {
        # PyTorch refuses the copy (a TORCH_CHECK in copy_kernel_cuda, before any CUDA call): the capture goes on
        "pageable copy on the capture stream":
            Program().launch("add", 1, writes=["x"]).h2d("x", "h", 1, pinned=False).launch("add", 1, writes=["x"]).ops,
        # no check on a stream that is not capturing: the copy runs now, outside the graph
        "pageable copy on a stream outside the capture":
            Program().launch("add", 1, writes=["x"]).h2d("z", "h", 3, pinned=False).ops,
        # a fork and a join through events recorded inside the capture
        "side stream joins and joins back":
            Program().launch("add", 1, writes=["x"]).record("fork", 1).wait("fork", 2).launch("add", 2, writes=["y"])
            .record("join", 2).wait("join", 1).launch("add", 1, writes=["x"]).ops,
        # cudaErrorStreamCaptureIsolation
        "capture stream waits for uncaptured work":
            Program().launch("add", 1, writes=["x"]).launch("add", 3, writes=["z"]).record("outside", 3)
            .wait("outside", 1).launch("add", 1, writes=["x"]).ops,
        # the side stream recorded before it joined: that record is still uncaptured work
        "capture stream waits for a side stream's record from before it joined":
            Program().launch("add", 2, writes=["y"]).record("early", 2).launch("add", 1, writes=["x"])
            .record("fork", 1).wait("fork", 2).launch("add", 2, writes=["y"]).record("join", 2).wait("join", 1)
            .wait("early", 1).ops,
        # cudaErrorStreamCaptureImplicit
        "default stream waits for the capture":
            Program().launch("add", 1, writes=["x"]).record("captured", 1).wait("captured", 0)
            .launch("add", 1, writes=["x"]).ops,
    }


CAPTURE_CASES: dict[str, list[Op]] = _capture_case_programs()


def capture_cases_on_gpu(device: str = "cuda") -> dict[str, dict[str, Any]]:
    """Runs each of `CAPTURE_CASES` on a GPU as PyTorch code, inside `CUDAGraph.capture_begin()` (the default
    capture_error_mode "global") on a side stream, with a side stream 2, a stream 3 that never joins, and the
    default stream as 0: {case: {"raised": the first line of the first RuntimeError, from the call itself or
    from capture_end (None if none), "captured": whether capture_end succeeded and the graph replayed}}.
    An error raised by an operation inside the capture is caught there and the capture goes on, as a
    program that caught it would."""
    import torch

    x, y, z = (torch.zeros(1 << 16, device=device) for _ in range(3))
    pageable = torch.ones(1 << 16)  # not pinned
    capture, side, outside = (torch.cuda.Stream(device) for _ in range(3))
    for s in (capture, side, outside):  # warm up every kernel and copy on every stream, outside any capture
        with torch.cuda.stream(s):
            x.add_(1), y.add_(1), z.add_(1), z.copy_(pageable, non_blocking=True)
    torch.cuda.synchronize(device)

    def pageable_here():
        x.add_(1)
        x.copy_(pageable, non_blocking=True)

    def pageable_elsewhere():
        x.add_(1)
        with torch.cuda.stream(outside):
            z.copy_(pageable, non_blocking=True)

    def fork_join():
        x.add_(1)
        side.wait_stream(capture)  # PyTorch records an event on `capture`; `side` waits for it and joins
        with torch.cuda.stream(side):
            y.add_(1)
        capture.wait_stream(side)
        x.add_(1)

    def waits_uncaptured():
        x.add_(1)
        with torch.cuda.stream(outside):
            z.add_(1)
        capture.wait_event(outside.record_event())

    def waits_early_record():
        with torch.cuda.stream(side):
            y.add_(1)
        early = side.record_event()  # side is not in the capture yet
        x.add_(1)
        side.wait_stream(capture)
        with torch.cuda.stream(side):
            y.add_(1)
        capture.wait_stream(side)
        capture.wait_event(early)

    def default_waits():
        x.add_(1)
        torch.cuda.default_stream(device).wait_event(capture.record_event())
        x.add_(1)

    bodies = dict(zip(CAPTURE_CASES, (pageable_here, pageable_elsewhere, fork_join, waits_uncaptured,
                                      waits_early_record, default_waits)))
    out = {}
    for case, body in bodies.items():
        graph, raised, captured = torch.cuda.CUDAGraph(), [], False
        with torch.cuda.stream(capture):
            graph.capture_begin()
            try:
                body()
            except RuntimeError as e:
                raised.append((str(e).strip().splitlines() or [type(e).__name__])[0])
            try:
                graph.capture_end()
                graph.replay()
                torch.cuda.synchronize(device)
                captured = True
            except RuntimeError as e:
                raised.append((str(e).strip().splitlines() or [type(e).__name__])[0])
        try:
            torch.cuda.synchronize(device)
        except RuntimeError:
            pass
        out[case] = {"raised": raised[0] if raised else None, "captured": captured}
    return out
