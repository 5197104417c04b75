"""Week 6 (the CUDA caching allocator): traces, checks and pictures for a simulated allocator.

Everything here works with any object that has the lab's interface
(`malloc(size, stream) -> address`, `free(address)`, `empty_cache()`,
`memory_stats()`, `snapshot()`); none of it is an allocator.

- The allocator's constants, named as in `c10/cuda/CUDACachingAllocator.cpp`, the
  address the simulated device starts at, `format_size` (PyTorch's size printer)
  and `stat_keys()` (the flat `memory_stats()` keys the lab uses).
- Allocation traces: `training_trace` (the allocations of a small transformer's
  training steps, batch size varying from step to step) and `random_trace`.
  A trace is a list of events `("malloc", tensor_id, nbytes, stream)` and
  `("free", tensor_id)`; `replay` runs one through an allocator and records
  statistics after every event.
- Checks that print a segment map when they fail (`check_layout`, `check_stats`),
  so a learner sees which block of which segment differs.
- Pictures: `plot_timeline` (allocated vs reserved memory over a trace) and
  `plot_segments` (every segment as a bar, its blocks coloured by state).
- `replay_growing_tensor`: what the allocator reserves for one tensor that keeps growing, by default,
  with `garbage_collection_threshold` and with `expandable_segments` (a workload simple enough to
  follow the C++ source without the lab's simulator).
- `recorded_walkthrough()`: the walkthrough's experiment (a training trace on an ample and a
  tight device, under four allocator configurations) as recorded once with the reference
  simulator, so the walkthrough can plot it without an allocator; the lab's last cell checks
  that the learner's simulator reproduces it event for event.

Depends only on torch and matplotlib. It holds no lab answers.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from labkit.testing import LabCheckFailure, fail

__all__ = [
    "KiB", "MiB", "GiB", "BASE_ADDRESS", "kMinBlockSize", "kSmallSize", "kSmallBuffer", "kLargeBuffer",
    "kMinLargeAlloc", "kRoundLarge", "STAT_FAMILIES", "POOLS", "METRICS", "COUNTERS", "format_size", "stat_keys",
    "training_trace", "random_trace", "replay", "describe_event", "describe_segments", "show_address",
    "check_address", "check_layout", "check_stats",
    "plot_timeline", "plot_segments", "WALKTHROUGH", "walkthrough_trace", "run_walkthrough",
    "record_walkthrough", "recorded_walkthrough", "replay_growing_tensor",
]

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

# The caching allocator's size classes. All but kLargeBuffer are declared in c10/core/AllocatorConfig.h,
# which ships in every torch wheel (tests/test_labkit.py compares them); kLargeBuffer is declared in
# c10/cuda/CUDACachingAllocator.cpp, and the header only names it for requests between 1 and 10 MiB.
kMinBlockSize = 512  # every size is rounded up to a multiple of 512 bytes
kSmallSize = 1 * MiB  # requests of at most 1 MiB (after rounding) use the small pool
kSmallBuffer = 2 * MiB  # the small pool's segments are 2 MiB
kLargeBuffer = 20 * MiB  # requests between 1 and 10 MiB get a 20 MiB segment
kMinLargeAlloc = 10 * MiB  # from 10 MiB on, a segment is the request rounded up to 2 MiB
kRoundLarge = 2 * MiB

# The simulated device hands out its first segment here; each new segment starts
# where the one before it ended (addresses are never reused).
BASE_ADDRESS = 0x7F0000000000

STAT_FAMILIES = ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
                 "active_bytes", "inactive_split_bytes", "requested_bytes")
POOLS = ("all", "small_pool", "large_pool")
METRICS = ("current", "peak", "allocated", "freed")
COUNTERS = ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free")


def format_size(size: int) -> str:
    """A byte count as PyTorch's allocator prints it in out-of-memory messages:
    '512 bytes', '1.50 KiB', '20.00 MiB', '1.25 GiB' (two decimals, at most 1024 of a unit)."""
    if size <= 1024:
        return f"{size} bytes"
    if size <= 1024 * 1024:
        return f"{size / 1024:.2f} KiB"
    if size <= 1024 * 1024 * 1024:
        return f"{size / 1048576:.2f} MiB"
    return f"{size / 1073741824:.2f} GiB"


def stat_keys() -> list[str]:
    """The 112 keys of the lab's `memory_stats()`: '<family>.<pool>.<metric>' for every
    family, pool and metric (108 keys), then the four counters."""
    return [f"{f}.{p}.{m}" for f in STAT_FAMILIES for p in POOLS for m in METRICS] + list(COUNTERS)


# ---------------------------------------------------------------- traces

Event = tuple


def training_trace(batch_sizes: Sequence[int] = (8, 6, 8, 5, 7, 8, 4, 6), *, layers: int = 4, hidden: int = 1024,
                   heads: int = 16, seq_len: int = 512, vocab: int = 32000,
                   step_starts: list[int] | None = None) -> list[Event]:
    """The allocations of a few training steps of a GPT-like model, one step per batch size.

    Parameters, gradients and Adam's two states are float32; activations are bfloat16.
    Each step runs a forward pass (saving what backward needs), the loss, a backward
    pass in reverse layer order (freeing saved activations as it goes, allocating
    gradients), an optimizer step and `zero_grad(set_to_none=True)`. Adam's states
    are created by the first step and live on; everything else is freed each step.
    All on stream 0. Deterministic: the same arguments give the same trace. When a list is
    passed as `step_starts`, the index of each step's first event is appended to it.
    """
    events: list[Event] = []
    next_id = [0]

    def malloc(nbytes: int) -> int:
        tid = next_id[0]
        next_id[0] += 1
        events.append(("malloc", tid, int(nbytes), 0))
        return tid

    def free(*tids: int) -> None:
        for tid in tids:
            events.append(("free", tid))

    f32, bf16 = 4, 2
    h = hidden
    param_sizes = [vocab * h * f32]  # token embedding (tied with the output projection)
    for _ in range(layers):
        param_sizes += [h * f32, h * f32, h * 3 * h * f32, 3 * h * f32, h * h * f32, h * f32,  # ln1, qkv, proj
                        h * f32, h * f32, h * 4 * h * f32, 4 * h * f32, 4 * h * h * f32, h * f32]  # ln2, mlp
    param_sizes += [h * f32, h * f32]  # final layer norm
    params = [malloc(n) for n in param_sizes]
    adam_states: list[int] = []

    for step, batch in enumerate(batch_sizes):
        if step_starts is not None:
            step_starts.append(len(events))
        t = batch * seq_len  # tokens in this step
        act = t * h * bf16  # one (tokens, hidden) activation
        scores = batch * heads * seq_len * seq_len * bf16
        stats = t * f32  # a layer norm's per-token mean or rstd
        x = malloc(act)  # embedding output
        saved = []
        for _ in range(layers):
            ln1, mean1, rstd1 = malloc(act), malloc(stats), malloc(stats)
            qkv = malloc(3 * act)
            s = malloc(scores)
            probs = malloc(scores)
            free(s)
            attn = malloc(act)
            proj = malloc(act)
            resid = malloc(act)
            free(proj)
            ln2, mean2, rstd2 = malloc(act), malloc(stats), malloc(stats)
            fc1 = malloc(4 * act)
            gelu = malloc(4 * act)
            fc2 = malloc(act)
            out = malloc(act)
            free(fc2)
            saved.append((x, ln1, mean1, rstd1, qkv, probs, attn, resid, ln2, mean2, rstd2, fc1, gelu))
            x = out
        lnf = malloc(act)
        logits = malloc(t * vocab * bf16)
        loss = malloc(f32)
        dlogits = malloc(t * vocab * bf16)
        free(logits)
        grads = {p: None for p in params}
        grads[params[0]] = malloc(param_sizes[0])
        g = malloc(act)  # gradient w.r.t. the final hidden state
        free(dlogits, lnf, x)
        w = len(params) - 2 - 12 * layers  # index of the first layer's first parameter
        for layer in reversed(range(layers)):
            (x_in, ln1, mean1, rstd1, qkv, probs, attn, resid, ln2, mean2, rstd2, fc1, gelu) = saved[layer]
            base = w + 12 * layer
            lp = params[base:base + 12]
            sz = param_sizes[base:base + 12]
            # MLP block
            d_gelu = malloc(4 * act)
            grads[lp[10]], grads[lp[11]] = malloc(sz[10]), malloc(sz[11])
            free(gelu)
            d_fc1 = malloc(4 * act)
            free(d_gelu, fc1)
            grads[lp[8]], grads[lp[9]] = malloc(sz[8]), malloc(sz[9])
            d_ln2 = malloc(act)
            free(d_fc1)
            grads[lp[6]], grads[lp[7]] = malloc(sz[6]), malloc(sz[7])
            d_resid = malloc(act)
            free(d_ln2, ln2, mean2, rstd2, g)
            # attention block
            grads[lp[4]], grads[lp[5]] = malloc(sz[4]), malloc(sz[5])
            d_attn = malloc(act)
            d_probs = malloc(scores)
            free(attn)
            d_scores = malloc(scores)
            free(d_probs, probs)
            d_qkv = malloc(3 * act)
            free(d_scores, d_attn)
            grads[lp[2]], grads[lp[3]] = malloc(sz[2]), malloc(sz[3])
            d_ln1 = malloc(act)
            free(d_qkv, qkv)
            grads[lp[0]], grads[lp[1]] = malloc(sz[0]), malloc(sz[1])
            g = malloc(act)
            free(d_ln1, ln1, mean1, rstd1, d_resid, resid, x_in)
        free(g)
        for p in params[-2:]:
            grads[p] = malloc(param_sizes[params.index(p)])
        # optimizer step: Adam's states appear on the first step; a grad-norm scratch buffer
        if step == 0:
            adam_states = [malloc(n) for n in param_sizes for _ in range(2)]
        norm = malloc(len(params) * f32)
        free(norm, loss)
        free(*[gid for gid in grads.values() if gid is not None])  # zero_grad(set_to_none=True)
    del adam_states  # the optimizer's state lives on after the trace
    return events


def random_trace(n_events: int, seed: int = 0, *, streams: Sequence[int] = (0,), live: int = 300,
                 small_fraction: float = 0.6, max_size: int = 48 * MiB) -> list[Event]:
    """`n_events` random events: about `live` tensors alive at a time once warmed up.

    Sizes: a `small_fraction` of requests are up to 1 MiB (a third of those below 4 KiB),
    the rest between 1 MiB and `max_size`, with a bias towards the 1-10 MiB range.
    Frees pick a random live tensor. Every tensor is on a stream drawn from `streams`.
    """
    import random

    rng = random.Random(seed)
    alive: list[int] = []
    events: list[Event] = []
    next_id = 0
    while len(events) < n_events:
        grow = len(alive) < live
        if alive and (rng.random() < (0.3 if grow else 0.55)):
            j = rng.randrange(len(alive))
            alive[j], alive[-1] = alive[-1], alive[j]
            events.append(("free", alive.pop()))
            continue
        r = rng.random()
        if r < small_fraction / 3:
            size = rng.randint(1, 4 * KiB)
        elif r < small_fraction:
            size = rng.randint(1, MiB)
        elif r < small_fraction + (1 - small_fraction) * 0.6:
            size = rng.randint(MiB + 1, 10 * MiB)
        else:
            size = rng.randint(MiB + 1, max_size)
        events.append(("malloc", next_id, size, rng.choice(tuple(streams))))
        alive.append(next_id)
        next_id += 1
    return events


DEFAULT_SERIES = ("allocated_bytes.all.current", "reserved_bytes.all.current", "inactive_split_bytes.all.current")
# what the walkthrough recording keeps of each run
RECORDED_SERIES = ("allocated_bytes.all.current", "reserved_bytes.all.current")


def replay(sim, trace: Iterable[Event], series: Sequence[str] = DEFAULT_SERIES,
           on_event: Callable[[int, Event, Any], None] | None = None) -> dict[str, list[int]]:
    """Run `trace` through `sim`; return {stat key: its value after every event}.

    `on_event(i, event, sim)` is called after each event when given (for checks).
    A malloc that raises (an out-of-memory error, say) propagates.
    """
    timeline: dict[str, list[int]] = {k: [] for k in series}
    addresses: dict[int, int] = {}
    for i, event in enumerate(trace):
        if event[0] == "malloc":
            addresses[event[1]] = sim.malloc(event[2], event[3])
        else:
            sim.free(addresses.pop(event[1]))
        if series:
            stats = sim.memory_stats()
            for k in series:
                timeline[k].append(stats[k])
        if on_event is not None:
            on_event(i, event, sim)
    return timeline


def describe_event(event: Event) -> str:
    if event[0] == "malloc":
        return f"malloc({event[2]}, stream={event[3]})  [tensor {event[1]}]"
    return f"free(tensor {event[1]})"


# ---------------------------------------------------------------- checks with segment maps

def _safe_snapshot(sim) -> tuple[list[dict] | None, str]:
    try:
        snap = sim.snapshot()
    except Exception as exc:  # noqa: BLE001 - the map is only decoration for a failure message
        return None, f"(snapshot() raised {type(exc).__name__}: {exc})"
    if not isinstance(snap, list):
        return None, f"(snapshot() returned a {type(snap).__name__}, not a list)"
    return snap, ""


def describe_segments(segments: list[dict] | None, mark: tuple[int, int] | None = None, limit: int = 12) -> str:
    """A text map of a snapshot: one line per segment, one indented line per block.

    `mark=(segment index, block index)` puts an arrow on one block.
    """
    if segments is None:
        return "  (no snapshot)"
    if not segments:
        return "  (no segments: nothing reserved)"
    lines = []
    for si, seg in enumerate(segments[:limit]):
        try:
            addr = seg["address"]
            lines.append(f"  segment {si}: {addr:#x}  {format_size(seg['total_size'])}  "
                         f"{seg.get('segment_type', '?')} pool  stream {seg.get('stream', '?')}")
            for bi, b in enumerate(seg["blocks"]):
                arrow = "  <--" if mark == (si, bi) else ""
                req = b.get("requested_size")
                req = f"  (requested {req})" if b.get("state") == "active_allocated" and type(req) is int else ""
                lines.append(f"      +{b['address'] - addr:<#10x} {b['size']:>11} B  {b['state']}{req}{arrow}")
        except Exception as exc:  # noqa: BLE001
            lines.append(f"  segment {si}: unreadable ({type(exc).__name__}: {exc}): {seg!r:.200}")
    if len(segments) > limit:
        lines.append(f"  ... and {len(segments) - limit} more segments")
    return "\n".join(lines)


def show_address(address: Any) -> str:
    """'0x7f0000200400 (BASE_ADDRESS + 2 MiB + 1024)' for a simulated address."""
    if type(address) is not int:
        return repr(address)
    off = address - BASE_ADDRESS
    if off < 0:
        return f"{address:#x} (below BASE_ADDRESS)"
    mib, rest = divmod(off, MiB)
    parts = ([f"{mib} MiB"] if mib else []) + ([f"{rest}"] if rest or not mib else [])
    return f"{address:#x} (BASE_ADDRESS + {' + '.join(parts)})"


def check_address(what: str, sim, got: Any, expected: int, cause: str = "") -> None:
    """`got` (what `sim.malloc` returned) must be the int `expected`; a failure shows `sim`'s segments."""
    if type(got) is int and got == expected:
        return
    lines = [what, f"  expected: {show_address(expected)}", f"  got:      {show_address(got)}"]
    if type(got) is not int:
        lines.append(f"  likely cause: malloc must return the address as a Python int, not a {type(got).__name__}")
    elif cause:
        lines.append(f"  likely cause: {cause}")
    snap, problem = _safe_snapshot(sim)
    lines += ["  your snapshot() after this call:", describe_segments(snap) if snap is not None else f"  {problem}"]
    raise LabCheckFailure("\n".join(lines))


_STATE = {"alloc": "active_allocated", "free": "inactive"}


def check_layout(what: str, sim, expected: list[tuple[int, str, int, list[tuple[int, str]]]], cause: str = "") -> None:
    """The simulator's segments must be exactly `expected`, in address order.

    Each expected segment is `(address, "small" | "large", stream, [(size, "alloc" | "free"), ...])`,
    its blocks from the lowest address up. On a mismatch the failure shows both maps and
    points at the first segment or block that differs.
    """
    snap, problem = _safe_snapshot(sim)
    want = [{"address": a, "total_size": sum(s for s, _ in blocks), "segment_type": kind, "stream": stream,
             "blocks": [{"address": a + sum(s for s, _ in blocks[:i]), "size": s, "state": _STATE[st],
                         "requested_size": "?"} for i, (s, st) in enumerate(blocks)]}
            for a, kind, stream, blocks in expected]
    where, detail = None, problem
    if snap is not None:
        for si in range(max(len(want), len(snap))):
            if si >= len(snap):
                where, detail = (si, None), f"segment {si} is missing: {len(snap)} segments, expected {len(want)}"
                break
            if si >= len(want):
                where, detail = (si, None), f"segment {si} should not exist: expected {len(want)} segments"
                break
            g, w = snap[si], want[si]
            try:
                head = (g["address"], g["segment_type"], g["stream"], g["total_size"])
                blocks = [(b["address"], b["size"], b["state"]) for b in g["blocks"]]
            except Exception as exc:  # noqa: BLE001
                where, detail = (si, None), f"segment {si} lacks a key the format needs: {type(exc).__name__}: {exc}"
                break
            if head != (w["address"], w["segment_type"], w["stream"], w["total_size"]):
                where = (si, None)
                detail = (f"segment {si}: expected address {w['address']:#x}, {w['segment_type']} pool, "
                          f"stream {w['stream']}, {w['total_size']} bytes; got address {head[0]:#x}, "
                          f"{head[1]} pool, stream {head[2]}, {head[3]} bytes")
                break
            wb = [(b["address"], b["size"], b["state"]) for b in w["blocks"]]
            if blocks != wb:
                bi = next((i for i, (x, y) in enumerate(zip(blocks, wb)) if x != y), min(len(blocks), len(wb)))
                where = (si, bi)
                exp = f"{wb[bi][1]} B {wb[bi][2]} at +{wb[bi][0] - w['address']:#x}" if bi < len(wb) else "no block"
                got = (f"{blocks[bi][1]} B {blocks[bi][2]} at +{blocks[bi][0] - g['address']:#x}"
                       if bi < len(blocks) else "no block")
                detail = f"segment {si}, block {bi}: expected {exp}, got {got}"
                break
        else:
            return
    lines = [what, f"  {detail}", "  expected segments:", describe_segments(want, where),
             "  your snapshot():", describe_segments(snap, where)]
    if cause:
        lines.append(f"  likely cause: {cause}")
    raise LabCheckFailure("\n".join(lines))


def check_stats(what: str, sim, expected: dict[str, int], cause: str = "", show_map: bool = True) -> None:
    """`sim.memory_stats()` must be a dict holding every key of `expected`, with int values equal to it."""
    try:
        got = sim.memory_stats()
    except Exception as exc:  # noqa: BLE001
        hint = "replace the stub with your code" if isinstance(exc, NotImplementedError) else ""
        raise LabCheckFailure(f"{what}: memory_stats() raised {type(exc).__name__}: {exc}\n"
                              f"  likely cause: {hint or 'your code raised where it should have returned a dict'}"
                              ) from None
    if not isinstance(got, dict):
        fail(f"{what}: memory_stats()", "a dict", type(got).__name__,
             "return a dict of '<family>.<pool>.<metric>' keys")
    missing = [k for k in expected if k not in got]
    if missing:
        fail(f"{what}: memory_stats() keys", missing[:4], "missing", "use torch's flat key names, e.g. "
             "'allocated_bytes.all.current'; stat_keys() lists them all")
    wrong = [(k, v, got[k]) for k, v in expected.items() if type(got[k]) is not int or got[k] != v]
    if wrong:
        lines = [f"{what}: {len(wrong)} of {len(expected)} statistics differ"]
        for k, v, g in wrong[:8]:
            lines.append(f"  {k:<40} expected {v!r:>12}   got {g!r:>12}")
        if cause:
            lines.append(f"  likely cause: {cause}")
        if show_map:
            snap, problem = _safe_snapshot(sim)
            lines += ["  your snapshot():", describe_segments(snap) if snap is not None else f"  {problem}"]
        raise LabCheckFailure("\n".join(lines))


# ---------------------------------------------------------------- pictures

def plot_timeline(timeline: dict[str, list[int]], ax=None, title: str | None = None, steps: Sequence[int] = (),
                  legend: bool = True):
    """Allocated and reserved memory (GiB) after every event of a trace; the gap between the
    two curves is reserved-but-unallocated memory. `steps` marks event indices (say, step starts)."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(10, 3.5))
    alloc = [v / GiB for v in timeline["allocated_bytes.all.current"]]
    res = [v / GiB for v in timeline["reserved_bytes.all.current"]]
    x = range(len(alloc))
    ax.fill_between(x, alloc, res, step="post", color="#fdae61", alpha=0.45, label="reserved but unallocated")
    ax.step(x, res, where="post", color="#d7191c", lw=1.6, label="reserved (segments)")
    ax.step(x, alloc, where="post", color="#2c7bb6", lw=1.0, label="allocated (blocks in use)")
    if "inactive_split_bytes.all.current" in timeline:
        split = [v / GiB for v in timeline["inactive_split_bytes.all.current"]]
        ax.step(x, split, where="post", color="0.4", lw=0.8, ls=":", label="inactive split (unreleasable)")
    for s in steps:
        ax.axvline(s, color="0.85", lw=0.8, zorder=0)
    ax.set_xlim(0, max(len(alloc) - 1, 1))
    ax.set_ylim(bottom=0)
    ax.set_xlabel("event")
    ax.set_ylabel("GiB")
    if title:
        ax.set_title(title, fontsize=10)
    if legend:
        ax.legend(loc="upper left", fontsize=8, frameon=False)
    return ax


_BLOCK_COLORS = {"active_allocated": "#2c7bb6", "active_pending_free": "#abd9e9", "inactive": "#fdae61"}


def plot_segments(segments: list[dict], ax=None, title: str | None = None, max_segments: int = 40):
    """Every segment of a snapshot as a horizontal bar (length = its size in MiB), cut into its
    blocks: blue for allocated, orange for cached free blocks. Largest segments at the top; at most
    `max_segments` of them (the title says how many were left out)."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(10, 0.25 * min(len(segments), max_segments) + 1.2))
    from matplotlib.patches import Rectangle

    segs = sorted(segments, key=lambda s: (-s["total_size"], s["address"]))[:max_segments]
    for row, seg in enumerate(segs):
        y = len(segs) - 1 - row
        x = 0.0
        for b in seg["blocks"]:
            w = b["size"] / MiB
            ax.add_patch(Rectangle((x, y + 0.1), w, 0.8, facecolor=_BLOCK_COLORS.get(b["state"], "0.5"),
                                   edgecolor="white", lw=0.6))
            x += w
        if seg.get("segment_type") == "small":
            ax.text(x + 0.3, y + 0.5, "small pool", va="center", fontsize=6, color="0.4")
    width = max((s["total_size"] for s in segs), default=MiB) / MiB
    ax.set_xlim(0, width * 1.08)
    ax.set_ylim(0, max(len(segs), 1))
    ax.set_yticks([])
    ax.set_xlabel("MiB from the start of the segment")
    handles = [Rectangle((0, 0), 1, 1, facecolor=c) for c in (_BLOCK_COLORS["active_allocated"],
                                                              _BLOCK_COLORS["inactive"])]
    ax.legend(handles, ["allocated block", "cached free block"], loc="lower right", fontsize=8, frameon=False)
    left_out = len(segments) - len(segs)
    note = f" (the {len(segs)} largest of {len(segments)} segments)" if left_out else ""
    if title or note:
        ax.set_title((title or "") + note, fontsize=10)
    return ax


# ---------------------------------------------------------------- two knobs, on one growing tensor

def replay_growing_tensor(sizes: Sequence[int], capacity: int, *, garbage_collection_threshold: float = 0.0,
                          expandable_segments: bool = False, page_size: int = kLargeBuffer) -> dict[str, Any]:
    """What PyTorch's CUDA caching allocator reserves for one workload: a tensor that keeps growing.

    Step k allocates `sizes[k]` bytes on stream 0 and frees them before step k + 1 (an activation
    whose batch grows, a buffer re-created larger), in a process limited to `capacity` bytes, as by
    `torch.cuda.set_per_process_memory_fraction`. The sizes must be multiples of 2 MiB, at least
    10 MiB and strictly increasing. Then every request goes to the large pool and gets a segment of
    exactly its size, and no cached block is ever large enough for the next request: best fit,
    splitting and merging (the lab's work) never come into play, and this function can follow
    `c10/cuda/CUDACachingAllocator.cpp` with a list of cached segment sizes. What is left is what
    the options change:

    - by default each step creates a segment (`cudaMalloc`); when the next one would pass
      `capacity`, every cached segment is released (`release_cached_blocks`, what `empty_cache()`
      does) and the allocation is retried, counted in `num_alloc_retries`;
    - `garbage_collection_threshold=t` (0 < t < 1): before creating a segment, when reserved memory
      exceeds `t * capacity`, `garbage_collect_cached_blocks` releases the cached whole segments at
      least as old as their average age, and repeats with the survivors until it has released at
      least the excess. A block's age is the number of requests that have searched the large pool
      since it was cached;
    - `expandable_segments=True`: one segment whose mapped size grows by `page_size` pages (the
      large pool's, 20 MiB by default) when the free block at its start is too small; on a retry
      the free pages are unmapped instead of segments released.

    Returns lists with one value per step, taken after the step's allocation: "reserved_bytes",
    "segments" (how many segments `torch.cuda.memory_snapshot()` lists) and "gc_released" (bytes the
    garbage collection released before the allocation); and the final "num_alloc_retries",
    "num_device_alloc" and "num_device_free". Raises RuntimeError where PyTorch runs out of memory.
    """
    sizes = [int(s) for s in sizes]
    if (any(s % kRoundLarge or s < kMinLargeAlloc for s in sizes)
            or any(a >= b for a, b in zip(sizes, sizes[1:]))):
        raise ValueError("sizes must be multiples of 2 MiB, at least 10 MiB, and strictly increasing")
    if not 0.0 <= garbage_collection_threshold < 1.0:
        raise ValueError("garbage_collection_threshold must be in [0, 1)")
    gc_limit = int(garbage_collection_threshold * capacity)  # size_t(threshold * allowed_memory_maximum)
    run: dict[str, Any] = {"reserved_bytes": [], "segments": [], "gc_released": []}
    retries = device_alloc = device_free = 0
    reserved = 0
    requests = 0  # the large pool's get_free_blocks_call_count (counted only when garbage collection is on)
    cached: list[tuple[int, int]] = []  # default: (size, requests when it was cached) of each free segment
    mapped = 0  # expandable: bytes mapped in the one segment, all of them free between two steps

    def out_of_memory(size: int) -> RuntimeError:
        return RuntimeError(f"out of memory: tried to allocate {format_size(size)} with {format_size(reserved)} "
                            f"reserved of {format_size(capacity)} allowed")

    for size in sizes:
        if garbage_collection_threshold > 0:
            requests += 1
        released = 0
        if expandable_segments:
            if mapped < size:  # the free block is too small: map pages after it
                if reserved + size > capacity:  # alloc_block's check, then release_cached_blocks and retry
                    if mapped:
                        reserved, mapped, device_free = reserved - mapped, 0, device_free + 1
                    retries += 1
                    if reserved + size > capacity:
                        raise out_of_memory(size)
                grow = -(-(size - mapped) // page_size) * page_size
                mapped, reserved, device_alloc = mapped + grow, reserved + grow, device_alloc + 1
            segments = 1  # one contiguous mapped range
        else:
            if garbage_collection_threshold > 0 and reserved > gc_limit:
                released, freed = _collect_garbage(cached, requests, reserved - gc_limit)
                reserved, device_free = reserved - released, device_free + freed
            if reserved + size > capacity:
                reserved -= sum(s for s, _ in cached)
                device_free += len(cached)
                cached.clear()
                retries += 1
                if reserved + size > capacity:
                    raise out_of_memory(size)
            reserved, device_alloc = reserved + size, device_alloc + 1
            segments = len(cached) + 1
            cached.append((size, requests))  # the tensor is freed before the next step
        run["reserved_bytes"].append(reserved)
        run["segments"].append(segments)
        run["gc_released"].append(released)
    run.update(num_alloc_retries=retries, num_device_alloc=device_alloc, num_device_free=device_free)
    return run


def _collect_garbage(cached: list[tuple[int, int]], requests: int, target: int) -> tuple[int, int]:
    """garbage_collect_cached_blocks on whole cached segments: release those at least as old as the
    average, again and again, until `target` bytes are released. Returns (bytes, segments) released."""
    released = freed = 0
    while cached and released < target:
        ages = [requests - since for _, since in cached]
        threshold = sum(ages) / len(ages)
        keep = [(block, age < threshold) for block, age in zip(cached, ages)]
        released += sum(size for (size, _), kept in keep if not kept)
        freed += sum(1 for _, kept in keep if not kept)
        cached[:] = [block for block, kept in keep if kept]
    return released, freed


# ---------------------------------------------------------------- recorded reference runs

# The walkthrough's experiment: the training trace with the batch size ramping up, replayed on an
# ample and on a tight device, under four allocator configurations (CachingAllocatorSim keywords).
WALKTHROUGH = {
    "batch_sizes": (4, 5, 6, 7, 8, 9, 10, 11, 12),
    "capacities": {"ample": 64 * GiB, "tight": 3200 * MiB},
    "configs": {
        "default": {},
        "max_split_size 64 MiB": {"max_split_size": 64 * MiB},
        "roundup_power2_divisions 4": {"roundup_power2_divisions": 4},
        "both": {"max_split_size": 64 * MiB, "roundup_power2_divisions": 4},
    },
}


def walkthrough_trace(step_starts: list[int] | None = None) -> list[Event]:
    """The training trace of the walkthrough's experiment (batch sizes WALKTHROUGH["batch_sizes"])."""
    return training_trace(WALKTHROUGH["batch_sizes"], step_starts=step_starts)


def run_walkthrough(sim_class, snapshot_at: int | None = None) -> dict[str, dict]:
    """Replay the walkthrough's trace through `sim_class` under every capacity and configuration.

    Returns {"<capacity>/<config>": run}, where a run holds "series" ({stat key: value after
    every event}), "counters" (the four counters at the end), "oom_event" and "oom_message"
    (the event that raised an out-of-memory error and its message, or None) and "snapshot"
    (the snapshot after event `snapshot_at` for the tight runs; None elsewhere).
    """
    trace = walkthrough_trace()
    runs = {}
    for cap_label, capacity in WALKTHROUGH["capacities"].items():
        for label, kwargs in WALKTHROUGH["configs"].items():
            sim = sim_class(capacity, **kwargs)
            run = {"series": {k: [] for k in RECORDED_SERIES}, "oom_event": None, "oom_message": None,
                   "snapshot": None}
            take = snapshot_at if cap_label == "tight" else None

            def on_event(i, event, sim, run=run, take=take):
                if i == take:
                    run["snapshot"] = sim.snapshot()

            addresses: dict[int, int] = {}
            for i, event in enumerate(trace):
                try:
                    if event[0] == "malloc":
                        addresses[event[1]] = sim.malloc(event[2], event[3])
                    else:
                        sim.free(addresses.pop(event[1]))
                except RuntimeError as exc:  # torch.OutOfMemoryError
                    run["oom_event"], run["oom_message"] = i, str(exc)
                    if take is not None and run["snapshot"] is None:
                        run["snapshot"] = sim.snapshot()
                    break
                stats = sim.memory_stats()
                for k in RECORDED_SERIES:
                    run["series"][k].append(stats[k])
                on_event(i, event, sim)
            stats = sim.memory_stats()
            run["counters"] = {k: stats[k] for k in COUNTERS}
            runs[f"{cap_label}/{label}"] = run
    return runs


def _encode(values: list[int]) -> bytes:
    """Zig-zag varints of the differences between consecutive values, in 512-byte units."""
    out = bytearray()
    prev = 0
    for v in values:
        d = v // kMinBlockSize - prev
        prev = v // kMinBlockSize
        z = (d << 1) ^ (d >> 63)
        while True:
            byte = z & 0x7F
            z >>= 7
            out.append(byte | (0x80 if z else 0))
            if not z:
                break
    return bytes(out)


def _decode(data: bytes) -> list[int]:
    values, prev, z, shift = [], 0, 0, 0
    for byte in data:
        z |= (byte & 0x7F) << shift
        shift += 7
        if byte & 0x80:
            continue
        prev += (z >> 1) ^ -(z & 1)
        values.append(prev * kMinBlockSize)
        z, shift = 0, 0
    return values


def _pack_snapshot(snap: list[dict] | None):
    if snap is None:
        return None
    return [[s["address"], s["segment_type"], s["stream"],
             [[b["size"], b["requested_size"] if b["state"] == "active_allocated" else -1] for b in s["blocks"]]]
            for s in snap]


def _unpack_snapshot(packed) -> list[dict] | None:
    if packed is None:
        return None
    segments = []
    for address, kind, stream, blocks in packed:
        out, a = [], address
        for size, requested in blocks:
            allocated = requested >= 0
            out.append({"address": a, "size": size, "requested_size": requested if allocated else 0,
                        "state": "active_allocated" if allocated else "inactive", "frames": []})
            a += size
        total = sum(b["size"] for b in out)
        used = sum(b["size"] for b in out if b["state"] == "active_allocated")
        segments.append({"device": 0, "address": address, "total_size": total, "allocated_size": used,
                         "active_size": used, "requested_size": sum(b["requested_size"] for b in out),
                         "stream": stream, "segment_type": kind, "segment_pool_id": (0, 0),
                         "is_expandable": False, "frames": [], "blocks": out})
    return segments


def record_walkthrough(sim_class) -> str:
    """The encoded recording that `recorded_walkthrough()` decodes.

    After changing `training_trace` or WALKTHROUGH, regenerate `_RECORDED` with the reference simulator:
    run the lab's solution notebook down to its `CachingAllocatorSim` cell, then
    `print(record_walkthrough(CachingAllocatorSim))` and paste the text between the triple quotes below.
    The lab's last cell fails when the recording no longer matches the reference."""
    import json

    first = run_walkthrough(sim_class)
    runs = run_walkthrough(sim_class, snapshot_at=first["tight/default"]["oom_event"])
    meta = {name: {"counters": run["counters"], "oom_event": run["oom_event"], "oom_message": run["oom_message"],
                   "snapshot": _pack_snapshot(run["snapshot"])} for name, run in runs.items()}
    head = json.dumps(meta, separators=(",", ":")).encode()
    chunks = [len(head).to_bytes(4, "little"), head]
    for run in runs.values():
        for key in RECORDED_SERIES:
            enc = _encode(run["series"][key])
            chunks += [len(enc).to_bytes(4, "little"), enc]
    blob = base64.b85encode(zlib.compress(b"".join(chunks), 9)).decode()
    return "\n".join(blob[i:i + 100] for i in range(0, len(blob), 100))


def recorded_walkthrough() -> dict[str, dict]:
    """What `run_walkthrough(reference simulator, snapshot_at=<the tight default run's OOM event>)`
    returned, recorded once: the walkthrough plots it where no GPU is at hand, and the lab's last
    cell checks that a learner's simulator reproduces it event for event."""
    import json

    raw = zlib.decompress(base64.b85decode("".join(_RECORDED.split())))
    n = int.from_bytes(raw[:4], "little")
    doc = json.loads(raw[4:4 + n])
    pos = 4 + n
    for run in doc.values():
        run["snapshot"] = _unpack_snapshot(run["snapshot"])
        run["series"] = {}
        for key in RECORDED_SERIES:
            m = int.from_bytes(raw[pos:pos + 4], "little")
            run["series"][key] = _decode(raw[pos + 4:pos + 4 + m])
            pos += 4 + m
    return doc


_RECORDED = """
c-rk<Uvu2ZaVM9eL`u3yP8{1QKWIy?3iUu!gTY_`T*@cem*_54j--n3{3jP3MM*1(Rg|bADcKj-l~AcvonKP+CkXeOU?1`g@^F5m
9{fEf-2*OnfyDxYf7CA6C}0IPrl)6mdj9qNH1nf>Us(A4^{p4Lc6v9T^qy|L-Z{Ab;qR|M-hKV@ptrY=?=N4!*xcIL*?qjZ*E`tT
?g5dlYwGUqi_srXdT+KL_o9&3Ka^IC`gE_?gOFdZUk9Ge-kaV_5cBf&&Q3&l(c9nOde$3~_Frzj+JC-#90Zu6^u5^n-RAzQo$Z6o
{q6tgb*1S3%l6M|Nv&nc`jfi{se1DI)#j_+-}d(S=9BF=+xy$QFZa8mmNYwV{Yiebd+@v-g)&xW>JGM_JwGU5pJF_LR;qobrO%J2
k9*unr0@F2pa0`eySuLsy1P%iFM2O__rBWbeg;CHbPsmBI_|B5Ue|Wz24iTR8{JRtf8J%?=Ue;TEeLb4wbOmP^=j+!_Q6*ehrMC(
?kC$n!}s4l-+uhO%NalB?QZXPF<~3sdr!Lu&wD5FKRFiN<r~7$+z@i~@zGb^`(J&wyZ89{dUxyPldkaDhVKt!-0SW4_TI#Tbss^7
UcWqvVWa!cPshT=KMrL>R6ARH&wAYh_+!6!aIpRIS@-^LKD+m?AAh=uYTEqi&wqaJ<IRun-M#aZ-tS&PO12*D^fvc<&t8Cf_don>
?{!aW?al7?6UgY6rf(fU9oe`(ZUkR^VcEX4UEh^1cO8eXU)Peaud{Xh#x2eqSFT&O#azx9d+^}Fdc@;d%=3h2aStMV0eOgc1oP!O
{y@0#cZ+k+Ti3sdFH<={hFI6XrW_>0ScYTqbqwoDkFEdM$_U8?T7dpNmA@?Mf$+>E#T8UsUBy*eT*1W)n({&Us7J=BS6OB`JgT%~
{e#7P;c#ePVtopCJnlo|Gkh86;5LM}{CF=UEMM46tRMfYmFBuGhk@nrWjqccgzvjnq9@DZkQR5PkNucwI$hgyd{3|{>GXwXTef7z
>Etk!W*(~DG@YD7S}fst719Ys4A#k*XP!<85i^i&o=z9+1eH-GoxUS{AsuO)P8({rYk4luN$2_(p6z*{`nY-9w#|iY=NjvfqC2$7
^h}FgN*I)RNhPMRrzJR<ic!3RF{oqQk-3@9h{J;F<qHGF#qypJAr2;)KSh;O6_;gF!nLI12owEfn25t1&U~+cwqk|oaLe~xmaC{S
4qG_Vho+?wqjDrPu|in+*)gsKl7Ud12UM^pX?c)qCPiKLByC^7Y-WlUQ<>Kd)i5T+<-W(6B`aB&%cNsVQ9yq&^}F20b~B+mhXGYW
oWmC!@2AjAOJ2giP(pFh9#k(IDi|wPYNj&H6j^|lCW8s=Pgy);P-P)&o<S{1s}VkQl@6D7qBF~!N`rR6`lW9bn11^lChXEpcJ3J#
3nLuIc9>wsLk{0&9LGkMH0Q89AGB(7a}FDtCC-Fr&f&nI#ODd4w_Q+%3u+&}OsO+IG!8I4L2@Z}VM}PFZBdpTI(5&pJyEI+Hf<Pu
=(k`*CAcVO#Et;VgFZgN&X|-o4)jmn3bZWHle#cXhzo-D&vRWr;drXjfTe{?6%CE2gR>S^GLLCRo}x_9B-pF#`N@HMC1s}4EZ?zR
><q@ma|bNJv!Ie0i06_qA+b9jkHY2<1GAFjAnawOo(Dpuf+`xdPY+I<%4HW7?0g@%Nb}IUZeb@l`9I13N&Zjrw^2UG|4IH&@_&;5
ll-6L|0Mq>`9J5w|2f48ndvy2;-EA2tT67_(1tj?HY4(x0~v9XR$ow+KJ%fw;}h1M?L>s`4W|CSxw{SoKs?;MKlCB<%yWf#f9P|t
3YX=V(70>UhGOAGoQR+ZC|fBCxHe&`sHcnOu1y;%A<pK^U7O67Fwo)6dIv#aHgl|m4Hs~MLTOHnQ)^G9aA70`W8!=<+=qcAdSb@C
R?LFB2H$fRM@FtPU~(}kR#)8?wgn^yhFUB~)w#~LEDmWo&{g}TMshItaBbh3^iLYI!${s|!Z%JYh;uDlOw{ibkK~9)_%3?sY;IbZ
F0SEle`5ZXDFtG1p}|V1B1;O4R-n;Mj`p)SAS=RgCdS>F>4K4%1$80e!_ATc-JEb(auq9+!(lk!mcl$;9yB6C=p{5mDKOBrpw$!1
Gv|O|B!fQE#Q8krafGzN<`UMD=di8>E4Ooj(M}o?-bnzXp`c3wqdid`812a-z-TWY7>zLPHUpyt2Q!8aCv{<9<oKb5f%Y#9a470i
`HL0?C?AxMIu-^_ugaz`48T-}3!4{M7;q$?z?>9a7?6%HJ@W}Kj2&$oM`{HYFkHt+|6Qd83?J7boB|6N+_GKfxCIt4IG13%veE(u
7cNKdUx5V-5D25vA`2L<l$`Nu3m85Wiscnpz_2Z0OP`g*4tcf>mdYF<8d?~DNxhhutk$qFzy(aq*fb-u96e*rSs3uavgB07O~#S8
Fd&%a<C0#T3j?<6Ow4eLFATUgb6EjxB^Cxi(W1x_nPW>S-TWo8k_!Va<9re#m6Dw_+LVO>+jVh<S;3y5?mG@nRO_-QDJ;aIP0?cR
!a$Z9#uo;_IwpJ-#TN!V^wAg4Uji8I2y43gLrCZ|pg$c)+>OyHmAnVtEOcO^U@I_F!03#c==;!!NIrE@FIzi4vjhwiT))7C+P8$S
S6o;Do_4PY99s@sw*@pb&<^K1_p><i{Q22+%@>Zvpt>>7T%ZqwVlTPsm&E}o@GWaP+C9hW9LMpzNfgJ4Zxi}$S4ht*&>p0!!sWJf
oT+}=63vbypttrXu**;<xNGy0`I)4RR!x}CT?cH4)u*cRv=N9J3J(_zrh3iClErPX6AQ<$F&MV*!YFvMCNVA@+k&|!bT(j-NuRLc
z8wabWt{I#xPPTxJ7$?&ljNEt%rd#cC?AAbE{<6y*Ce?n$u&7wu1Pb@a<*%-IA(cXU6Z+(<@s_=mclG&yC#h=%Q>#e;+W-Xu1QnO
@@cpxb1}=Q{=rOd))cRqF=pAep!YMW6Xuv@=~x2)Cw)cCGHBDDz`|vF_F%rR!CM6|%g}LqUV&{4ps5s4Ma;)RK6equ?TZ2^XD~!D
f%DAvP+~hi@&75ZIJje>wH5G!qN4=2i74Qq^sriSHpQ8j#DCh*l`-ktNz`B_hu{*rS5|<-6B<&_n%-wYIyl)dPnd&U%*228sy$&6
|8JMH+>&C3<sAo9!?@D*leIMyQ0*~Y7PU1zU<i;^+h}{16uk(T@;ELOmpP6YMvT&eN>l_#42`>Vad>NtzI9;SXu&+l97pUp!WAhC
F`4Po09@ZO#}UJn35I$WH^&h>Xz|c?7r_xbp1^%oEOQ(&G_~me^vrR@(snouFDGVJBmeItju=`g-^YcgA{cTD)CHZj&kf`}`1<Sr
`r*PtFt~R0Y7i{3AXvPLZ|82qbG0gM5$<jmz6HSw+)7=DXmG2y$KTHBJ4TwB;GmWcJSw~fzeo(PskitA!(CMhqB;k^(aUWNpq6yL
G1RqdI*v#UEBKBwwb&(md3&rgr8;oO*holWA?huV2G_J9YjeclEGo;ZS0frG<M!?2<XnB9;W~?GOINNyPHw8VSMX)&7Ccufkb?dq
+&6A$ITztpYBi$4tqzADm+?-}#ux@g86pXTY=(DBF$OI}h4_-j5d2}S1CRP<E$ClE>Njif0l#5Tv?P$f48QsXED3@r&}<X|#Jjep
11};4r5-LuvQhlIC44~&m=iD@Ex~=ldl>N+5qDTroSGCDRuLB#7I(_I8{U!KAJ%R61GFQka|1~KWw@2P6w%Ns!{d*^dA#GaSz`!-
n;m$R+CaMps@g!y!16sG6%~}&dHB^YP*fOX8QZ<ZDBR7PI`HCE9oc352g=ss&*4iL6%{g^gFDGf;%XNMcSCj`fU$HuFX%)1{|auU
K0w;LMYz=w{=&!L0^V`jID`K3o*9Ba%MLv1TZwiL)Ndtxz;757iwa5%h63mH3ltRuQRhM3Is&*|R|j513Q9d%jAWzu{xZHCMMVV+
hs$s$dCkNHom#}H9C09Km^*a}xyuu$jK!&uI2}`yc8}vJNIw(`<mi~Dv$A;naYf&8+Ke#-gOBi0;YVoqKn*`a#o@P=sHiTCje?Jh
>Oy3QI^3;WIxr5JJ6h^uBwLF=uV12~LWbq2d5iIqxZ1_R-PAaz6ZAWuej2<3Bl~N(mHG}4qFWsve+*Xfj?-q1AsF1jM}>Fv_#W*3
4t&6G7!->NN({!AEBXb8q@d;%99DLsaG!jl1LKgigHjJWk!%$I?mWIA1&5^2VxNaQ$vgkz`m>e05P!4n{&1<h-48nV?*{{@x8H?Z
slSP6aD(9Jqn=(SXtTx;{OK+}>W_D|r=kNds5tnBL9wV-M^h_3B!!|{#bIS93U}|G4va(64oVF>k!&sg0=|S%Q6a+xxRbmju6A*7
H{{RJzNBCOI_N{a{T|#({cZ5B6W!_vf8k?r3GX<q2?j{aJ9NAmB&na25Cp%(N2$;C_#UG996sPTj2MdwN(|;z7uDgVXuu6YF5<AV
6NUTLuXJD>l6Fw)Q74j(;`=N3augL6FdVMHeZs3E-jTTexHx>NRoqchTu_&|{^^R#Q>Mb-YVG~uxh%VX_)zy>KY&}Q??*K43GN(!
ysYmyZN?aa;7j=DOQjy@@jXx<MBZy14vXs2$fcl%q!8qi_992&HaB(P#mKMx1N{fe*5X(7OH@?Iuo89aF<uf^yEwi0(8T!u&1Jm~
7u;R|vG6P};00OHzvU>)(H}VRTo_*XZ4_?e)A7qvVJ=9!eolhT<rS?V)f*)g%($|&zJ~vvPNwuwG><$qm%*BT=&GvpoBE-vsvcea
&{ef%`$#`@Rn_Ai{m@lak9YM$SJn3Mm-?Zrsvf`8&)K^O0Z0fyLI4s1Fq0vH*(=JBKmg_>3Fe<r?bcMdh9!#8tThT+8$$qwCK$QF
NL*MJBR8ldF3c6zPZL)b0T|Ya01RtiA#5Q6a6kyawjlt+Q$hf05MTr`nim9M;6k!pr6k%tCVn;%fM-FR8WV@cl!gEtA)$uihDfM!
1fXiv?puZc91sGqZ3w{n$M-En01lc%0QOrA$?MM=zVQSBSYUi_L~0QNaBvqN6%G-AAt3+>0XQEBz%r1*5fbVI0XP^U0FS{t>7X@a
JO-_)xx&b`TU<H<u$tYcwD)a901gNN*fs=U-R=EfT803e0&qjlaqgJ~0@kytd@ioj=CFWMP<{&r(7y~spf1Z8CNNqyn3952Y3+ds
U<02@FH1B+38qHX8l9q>IF(+OXoMI{jjA;|MHgf$y)4lPJ(wC*Yjle4tyFqhq7jlXHLBL=6kR8&^s+=FRAFjVt<fn?%TwuPiAD&+
)TmmcQ=Iap(#sN!(1xi|wFGY%bO~>mf;SAhFa_-@bq#(s){XFnvy3;yLh8;7-cX$(ykW5<1;Gudb~lt-!xBaOTa9=_G{JF*oQgr@
!n*h5n<j2hT-?9_0GOS-W8TwJW;)(bHMQd)=BE%EaMl=tfPvjJrEa3#BmV7XeGoY;<8g?bF7W0Mc_c20H&jjG4KY83b{rgMFoF*@
%n$?~WW`g;)jc@$?`~m4o|=Zp!!jO6<PD)hCHCZt&_zcRh`dR0(~wDJcN{F7yV&N4WyMY64YPBXjyF_<H=Kqy3~uA2)UBc2-y#5D
Yw(7ufgJ}U98*zL)T}WC!F_y`x~IoEpu>ChL4|?@R7f{;%^{OWToQNHoZYV!waOV|Xx8pm5=C_(YTlZ%3=-G0-JjsDE*3>a%@{)v
JcNH9Dz&M{IY8a45h`>s0To(}in%Fd5{XOTuE_4m?#b?}+x^SSdL3?l@rFTHKXbn0pk702F7}z(Z}4PIW+4VJ#NQkGp{uIenSSW1
sz*;hbXC>kZT-+yRgd@eLl<4|-xeS0hc3DZ`A5h<LjDo*kC1<a{3GNaA^!-9ch-=9`8y5HHu4V>@7A{$Uk%8=vm`Eir$Ivg5%Q13
5%Q0ae<Y5Oe}w!aafJLM1Qa2l$nMGR$?mJ!{r|QM`8VG?4c3GHo2#7$&9H#9(_jj{EYS!ZNIMM{A{rqDX{W(LL?hH-yLTF_e^)#c
1Yw(Z#iOeZyKG<=JOeagOLxJetNQhCe@7=5)5*njaxtA;j0}Tv0K`EyL*nG(1lVu_Pxyzm4m|3cwV<z0F8-zvo-nL%a`9o^ctW$Y
eZwl^!g5CmpI+|bc*4V`@PvaFom||flZ)GSa`E9Qom~9h4<aspa`B&K2OjmUM7sy-x3hV2acq0O^5RPDB-mu`^28})adAB1QKNR>
vXhJZbaHXq@PvmA;Hp}8a&f=8lZ%5{JKML-Cl`mKlZy|{PcANoC!GJ2i~n>NAN9w(dVJr37dlF~H76Gzw)*5^NX)wky;D3%V<#8)
hbI>|e%NlXlsIg+kT^AKM+x_5_T=K)+xu3XT>PJx+I1f7oG!cSm4TX9a+|}3RYH)ZoIkseIDM9`3Q9LPYnCnpJsO-ZOP4{*W^kq~
UAdPE|8Ft>AX&N$4AS86Sh@@h^1m1JPmHC@pr=`h_Dmy;6JeYP<3t#zhW1QLV4U*yOdG60wOdo+8kQ(Vv(_jq=cwSGX@iltuq+B_
P)S^vE3Tg=t}MnWtP|rD*1iVPLX6XZFivg5IEAN#amwE_ZRRjefeXoYm6B-pnE2VmIGqJ?*?Xo%;zn4Hp}4F)(?Y^H<zt)%gmG#c
#;N}CeG4&8gXS<!{WA?ZI(2a;7^ebupEBg1B((_RG`Ne83h(OiJx~eb)E<me*lLVZ6^1d4)8N!FPVWT;bQUpAAz_>{Fi!9&^+1pB
f%>4vZN63$+kCA=-Fj2Iijla)o@sTr_doieU1+%Z-ZQNpMBH5MnU;o*(`6aM$I+f?DfF^LBg7o-nO2CX)Zgc$=UTpJnhLL^($k<c
-!}-U!keJi{^GD*oYsINW4pIbLoZh<y*TmMF{XP<70L)<H{7Libt?2pv{<|88`G)qQflC|kUUBF0G{QM-Cmp~8G?P-V$I@geeBOm
BL%IFQDYyx^bcbZ>51mKsL{Ow&yPoXzBDZz5bRcq^&H#6Zmj24;e|1(Qmdox>L=*~jIoGDAC&rz*7b>=(}xC1{Zm`FwR`kEI^va%
c%>s=>4;Z4;+2kgr6XSHh*uIf&qutz_Y+$y9`TA0pyEfoss;~19d23{fs>9V0DVWshoF|-lC5y=V!Owc6-P(B(h;vDj*fVxBVI`y
9q~#>yplLN;<fBim(Im@9bh=G%PHNO4lm3C=gh#yRA$E&(p5q228R>UWuQlc0}1Ie(4)a2gmmRzN*yldpFBtxU8e)Qi*{2Ycmlx_
2%bRj1cE0JJb~Z|1WzDwa|=(%-%V+@;R%>{x4!*`YJex4C2`riDG@w@;0Yv-;0XjzAaMjwAb0|aBY1)tJOLi1HuX3MsGBuzgmN*l
5z1;*%uVgPLgEs;%8=cY-ILu{xBKM}+6Ca6@7<K@0ddXMZc1j5F4|2gg<h6u1oEQYlnN1*TFVD~wRtxs?XXJQI7yjooRmsb3U^cb
pT%Ljcy@PFO5g9N6mi@^FjVo<LgX44exB0MeiwrN1HqR}>cWMQ&1USR)M9OB?C_)FJNzt-KDg<fUVMk2V-Ac)g+CnXS*c%4OGjIG
_^H3h&YfXx{y&%fvjG
"""
