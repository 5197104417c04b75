"""Helpers for week 8 (profiling and benchmarking).

- `quiet_kineto()`: keep the profiler's native start/stop log lines off stderr.
- `FakeProfile` / `fake_row`: stand-ins for a finished `torch.profiler.profile`, so a test
  knows the exact answer (real profiles have wall-clock times nobody can predict).
- `region_event` / `write_trace`: write small Chrome trace files by hand.
- `example_kernels`: the lab's kernels with their FLOP and byte counts, for the roofline.
- `plot_roofline`, `plot_timeline`: a roofline with kernels on it; a trace as a timeline.
- `check_shares`, `check_times`: the lab's own test checks, with teaching messages (the generic ones,
  `check_float` and `check_raises`, are in `labkit.testing`).

It ships to learners and holds no answers.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import torch
from matplotlib.patches import Patch
from torch.autograd import DeviceType

from labkit.testing import fail

__all__ = ["FakeProfile", "Kernel", "check_shares", "check_times", "example_kernels", "fake_row", "plot_roofline",
           "plot_timeline", "quiet_kineto", "region_event", "write_trace"]


def quiet_kineto() -> None:
    """Silence Kineto, the C++ library behind `torch.profiler`.

    In torch 2.13 every profiling session prints two lines such as
    `USDT:... SyncActivityProfilerHandler.cpp:52] profiler_start` to the process's
    stderr (file descriptor 2, below Python's `sys.stderr`, so `warnings` filters
    cannot catch them). nbgrader gives 0 to a test cell that writes to stderr.
    Level 6 of `KINETO_LOG_LEVEL` is above every message Kineto prints, but Kineto
    reads the variable only once, when the process's first profiling session
    starts: call this before profiling anything.
    """
    os.environ["KINETO_LOG_LEVEL"] = "6"


# ---- fake profiles -------------------------------------------------------------------------------

def fake_row(key: str, self_cpu: float = 0.0, self_device: float = 0.0, *, device_type=DeviceType.CPU,
             cpu_total: float | None = None, device_total: float | None = None, count: int = 1,
             user_annotation: bool = False) -> SimpleNamespace:
    """One row of `key_averages()`, with the attributes real rows have.

    Times are in microseconds, like the profiler's. The inclusive totals
    (`cpu_time_total`, `device_time_total`) default to more than the self times,
    so code that reads the wrong attribute gives a wrong answer.
    """
    on_cpu = device_type == DeviceType.CPU
    if cpu_total is None:
        cpu_total = float(self_cpu) * 1.5 + 7.0 if on_cpu else 0.0
    if device_total is None:
        device_total = float(self_device) * 1.5 + 3.0 if self_device else 0.0
    return SimpleNamespace(key=key, count=count, device_type=device_type, is_user_annotation=user_annotation,
                           self_cpu_time_total=float(self_cpu), cpu_time_total=float(cpu_total),
                           self_device_time_total=float(self_device), device_time_total=float(device_total),
                           cpu_time=float(cpu_total) / max(count, 1))


class FakeProfile:
    """Stands in for a finished `torch.profiler.profile`: it offers `key_averages()` only.

    `FakeProfile([fake_row("aten::mm", 900.0), fake_row("aten::add", 100.0)])`
    """

    def __init__(self, rows: Sequence[SimpleNamespace]):
        self._rows = list(rows)

    def key_averages(self, *args, **kwargs) -> list[SimpleNamespace]:
        return list(self._rows)

    def __repr__(self) -> str:
        inner = ", ".join(f"{r.key!r}: cpu {r.self_cpu_time_total:g} us, device {r.self_device_time_total:g} us"
                          + ("" if r.device_type == DeviceType.CPU else f" ({r.device_type})")
                          for r in self._rows)
        return f"FakeProfile({{{inner}}})"


# ---- hand-written Chrome traces ----------------------------------------------------------------

def region_event(name: str, ts: float, dur: float, *, pid: int | str = 1, tid: int | str = 1,
                 cat: str = "user_annotation", ph: str = "X") -> dict:
    """A complete event as PyTorch writes one: `ts` (start) and `dur` in microseconds."""
    return {"ph": ph, "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": {}}


def write_trace(path: str | os.PathLike, events: list[dict], *, bare_list: bool = False) -> str:
    """Write `events` as a Chrome trace: an object with `traceEvents` (what PyTorch writes)
    or, with `bare_list=True`, a bare JSON list (Chrome's "JSON Array Format").
    A path ending in `.gz` is gzip-compressed. Returns the path as a string."""
    path = os.fspath(path)
    data: Any = events if bare_list else {"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": events}
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        json.dump(data, f)
    return path


# ---- the lab's example kernels ----------------------------------------------------------------

@dataclass(frozen=True)
class Kernel:
    """A kernel for the roofline: what it computes, how many FLOPs it does and how
    many bytes it must move at least (each input read once, the output written once)."""

    name: str
    flops: int
    bytes: int
    fn: Callable
    shapes: tuple[tuple[int, ...], ...]

    def inputs(self, device: str = "cpu", seed: int = 0) -> list[torch.Tensor]:
        gen = torch.Generator().manual_seed(seed)
        return [torch.randn(s, generator=gen).to(device) for s in self.shapes]


def _add_into(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """x + y written into a buffer made beforehand, so that timing it times the add alone,
    not also the allocation of a fresh 64 MiB output."""
    return torch.add(x, y, out=out)


def example_kernels(n: int = 2**24, k: int = 4096, small: int = 64, big: int = 512) -> list[Kernel]:
    """The lab's kernels, float32 (4 bytes an element), smallest arithmetic intensity first.
    The defaults make the memory-bound ones move more data than a CPU's caches hold (64 MiB a tensor).

    The add writes into a preallocated output (its third input), as the copy that measures
    bandwidth does. Each kernel's `inputs(device)` makes its input tensors.

    | kernel           | FLOPs   | bytes         | FLOP/byte |
    |------------------|---------|---------------|-----------|
    | add x + y        | n       | 12 n          | 1/12      |
    | sum(x)           | n       | 4 n + 4       | ~1/4      |
    | matvec A @ v     | 2 k^2   | 4 k^2 + 8 k   | ~1/2      |
    | matmul (s x s)   | 2 s^3   | 12 s^2        | s/6       |
    """
    return [
        Kernel("add x + y", n, 12 * n, _add_into, ((n,), (n,), (n,))),
        Kernel("sum(x)", n, 4 * n + 4, torch.sum, ((n,),)),
        Kernel("matvec A @ v", 2 * k * k, 4 * k * k + 8 * k, torch.mv, ((k, k), (k,))),
        Kernel(f"matmul {small}x{small}", 2 * small**3, 12 * small**2, torch.mm, ((small, small), (small, small))),
        Kernel(f"matmul {big}x{big}", 2 * big**3, 12 * big**2, torch.mm, ((big, big), (big, big))),
    ]


# ---- the roofline picture ----------------------------------------------------------------------

def plot_roofline(ax, peak_flops: float, peak_bw: float, kernels: Sequence[tuple[str, float, float | None]],
                  title: str | None = None):
    """Draw the roofline min(peak_flops, intensity * peak_bw) on log-log axes, and each
    kernel as (name, intensity in FLOP/byte, measured FLOP/s or None): a hollow marker on
    the roof (what the machine allows at that intensity) and, when measured, a filled one
    below it (what the kernel achieved)."""
    ridge = peak_flops / peak_bw
    xs = [k[1] for k in kernels] + [ridge]
    lo, hi = min(xs) / 4, max(xs) * 4
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    ax.loglog(grid, [min(peak_flops, x * peak_bw) for x in grid], color="0.2", lw=2, label="roofline")
    ax.axvline(ridge, color="0.6", ls=":", lw=1)
    ax.annotate(f"ridge {ridge:.2g} FLOP/B", (ridge, peak_flops), textcoords="offset points", xytext=(6, -14),
                fontsize=8, color="0.35")
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink"]
    for i, (name, intensity, measured) in enumerate(kernels):
        c = colors[i % len(colors)]
        roof = min(peak_flops, intensity * peak_bw)
        ax.plot([intensity], [roof], "o", mfc="none", mec=c, ms=9, mew=2)
        if measured is not None:
            ax.plot([intensity], [measured], "o", color=c, ms=7, label=f"{name}")
            ax.plot([intensity, intensity], [measured, roof], color=c, lw=1, ls="--")
        else:
            ax.plot([], [], "o", mfc="none", mec=c, ms=9, mew=2, label=name)
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("FLOP/s")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="lower right")
    if title:
        ax.set_title(title, fontsize=11)
    return ax


def plot_timeline(ax, events: Sequence[dict], title: str | None = None):
    """Draw the complete ("X") events of one thread of a Chrome trace as a timeline, as
    Perfetto or chrome://tracing would: time across (ms from the first event), nesting depth
    down. `record_function` regions (cat "user_annotation") are colored by name and listed in
    the legend; ops are grey, labeled where the label fits."""
    spans = sorted((e for e in events if e.get("ph") == "X"), key=lambda e: (float(e["ts"]), -float(e["dur"])))
    if not spans:
        raise ValueError("no complete ('X') events to draw")
    t0 = float(spans[0]["ts"])
    total_ms = (max(float(e["ts"]) + float(e["dur"]) for e in spans) - t0) / 1000
    width_in = ax.get_figure().get_size_inches()[0] * ax.get_position().width
    ms_per_char = total_ms / max(width_in * 72 / 4.6, 1)  # about 4.6 points per character at fontsize 7
    palette = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    colors: dict[str, str] = {}
    open_ends: list[float] = []
    max_depth = 0
    for e in spans:
        start, dur = float(e["ts"]), float(e["dur"])
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        depth = len(open_ends)
        max_depth = max(max_depth, depth)
        open_ends.append(start + dur)
        region = e.get("cat") == "user_annotation"
        if region and e["name"] not in colors:
            colors[e["name"]] = palette[len(colors) % len(palette)]
        left, width = (start - t0) / 1000, dur / 1000
        ax.barh(-depth, width, left=left, height=0.8, color=colors[e["name"]] if region else "0.82",
                edgecolor="white", lw=0.5)
        label = e["name"].replace("autograd::engine::evaluate_function: ", "").replace("aten::", "")
        if width > (len(label) + 1) * ms_per_char:
            ax.text(left + width / 2, -depth, label, ha="center", va="center", fontsize=7,
                    color="white" if region else "black", clip_on=True)
    ax.set_xlim(0, total_ms)
    ax.set_ylim(-max_depth - 0.6, 0.6)
    ax.set_yticks([-d for d in range(max_depth + 1)], [str(d) for d in range(max_depth + 1)])
    ax.set_ylabel("nesting depth")
    ax.set_xlabel("time (ms from the first event)")
    handles = [Patch(color=c, label=name) for name, c in colors.items()] + [Patch(color="0.82", label="ATen ops")]
    ax.legend(handles=handles, fontsize=8, loc="center left", bbox_to_anchor=(1.005, 0.5))
    if title:
        ax.set_title(title, fontsize=11)
    return ax


# ---- checks --------------------------------------------------------------------------------------

def _kind(x: Any) -> str:
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def check_shares(what: str, got: Any, expected: list[tuple[str, float]], cause: str = "") -> None:
    """`got` must be a list of (str, float) tuples with these names, in this order, and these shares
    (Python floats: numpy and tensor scalars do not count)."""
    if type(got) is not list:
        fail(what, expected, got, f"return a list, not a {type(got).__name__}")
    for item in got:
        if type(item) is not tuple or len(item) != 2:
            fail(what, expected, got, "each entry is a tuple (name, share)")
        if type(item[0]) is not str or type(item[1]) is not float:
            fail(what, expected, got, f"each entry is (name as str, share as a Python float between 0 and 1); "
                                      f"{item!r} holds a {_kind(item[0])} and a {_kind(item[1])} "
                                      "(convert with str(...) and float(...))")
    names = [name for name, _ in got]
    want = [name for name, _ in expected]
    if names != want:
        fail(f"{what}: names, largest share first", want, names, cause)
    for (name, share), (_, exp) in zip(got, expected):
        if not math.isclose(share, exp, rel_tol=1e-9, abs_tol=1e-12):
            fail(f"{what}: share of {name!r}", exp, share, cause or "share = this op's self time / summed self times")


def check_times(what: str, got: Any, expected: dict[str, float], cause: str = "", abs_tol: float = 1e-9) -> None:
    """`got` must be a dict {str: float} with exactly `expected`'s keys and close values
    (Python floats: numpy and tensor scalars do not count)."""
    if type(got) is not dict:
        fail(what, expected, got, f"return a dict, not a {type(got).__name__}")
    bad = [k for k, v in got.items() if type(k) is not str or type(v) is not float]
    if bad:
        fail(what, expected, got, f"keys are region names (str) and values Python floats; look at {bad[0]!r}, "
                                  f"whose value is a {_kind(got[bad[0]])} (convert with float(...))")
    if set(got) != set(expected):
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
        fail(f"{what}: region names", sorted(expected), sorted(got),
             cause or f"missing {missing}, unexpected {extra}")
    for k, exp in expected.items():
        if not math.isclose(got[k], exp, rel_tol=1e-9, abs_tol=abs_tol):
            fail(f"{what}: time of region {k!r} in ms", exp, got[k], cause)
