"""labkit's facts about PyTorch, checked against the installed torch (not against what a page once said)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from labkit import allocator

HEADER = Path(torch.__file__).parent / "include" / "c10" / "core" / "AllocatorConfig.h"


@pytest.mark.skipif(not HEADER.exists(), reason=f"{HEADER} is not in this torch wheel")
def test_the_allocator_simulator_uses_the_constants_the_wheel_ships():
    """The caching allocator's size classes live in c10/core/AllocatorConfig.h, which ships in the CPU
    wheel too: the simulator's constants must be the same numbers."""
    declared = {name: int(value) for name, value in
                re.findall(r"constexpr size_t (k\w+) = (\d+);", HEADER.read_text())}
    for name in ("kSmallBuffer", "kMinBlockSize", "kSmallSize", "kMinLargeAlloc", "kRoundLarge"):
        assert name in declared, f"{HEADER.name} no longer declares {name}: update labkit/allocator.py"
        assert getattr(allocator, name) == declared[name], \
            f"labkit.allocator.{name} = {getattr(allocator, name)}, but {HEADER.name} says {declared[name]}"
    # kLargeBuffer is not declared in the header (it is in c10/cuda/CUDACachingAllocator.cpp); the header
    # only names it for the 1 to 10 MiB range, which is what the simulator gives a 20 MiB segment.
    assert "kLargeBuffer" not in declared and "kLargeBuffer" in HEADER.read_text()
    assert allocator.kSmallSize < allocator.kMinLargeAlloc == 10 * allocator.MiB


# ---- labkit.testing: the generic checks every lab uses ----------------------------------------------

def fails(check, *args, **kwargs) -> str:
    from labkit.testing import LabCheckFailure

    with pytest.raises(LabCheckFailure) as info:
        check(*args, **kwargs)
    return str(info.value)


def test_check_tensor_compares_kind_then_values_and_says_where():
    from labkit.testing import check_close, check_tensor

    x = torch.tensor([1.0, float("nan"), -0.0])
    check_tensor("x", x.clone(), x)  # nan where nan, -0.0 == 0.0
    assert "dtype" in fails(check_tensor, "x", x.double(), x)
    assert "shape" in fails(check_tensor, "x", x[:2], x)
    assert "torch.Tensor" in fails(check_tensor, "x", x.tolist(), x)

    class AlwaysEqual(torch.Tensor):
        def __eq__(self, other):
            return torch.ones_like(other, dtype=torch.bool)

    assert "torch.Tensor" in fails(check_tensor, "x", torch.zeros(3).as_subclass(AlwaysEqual), x)
    msg = fails(check_tensor, "x", torch.tensor([1.0, 2.0, 0.0]), x)
    assert "1 of 3 elements differ; the first at index (1,)" in msg
    y = torch.tensor([1.0, 2.0])
    check_tensor("y", torch.nextafter(y, torch.tensor(9.0)), y, ulps=1)
    assert "differ" in fails(check_tensor, "y", torch.nextafter(y, torch.tensor(9.0)), y, ulps=0)
    check_close("y", y + 1e-6, y, rtol=1e-5, atol=0)
    with pytest.raises(TypeError):
        check_close("y", y, y)  # a tolerance is always stated
    check_tensor("m", torch.empty(3, device="meta"), torch.empty(3, device="meta"))
    assert "device" in fails(check_tensor, "m", torch.empty(3), torch.empty(3, device="meta"))
    big = torch.tensor([2**53 + 1], dtype=torch.int64)
    assert "differ" in fails(check_tensor, "big", big - 1, big), "integers compare exactly, past float64's 2**53"


def test_check_float_gradients_and_the_stub_hint():
    from labkit.testing import call, check_float, check_gradients, not_implemented_hint

    check_float("f", float("inf"), float("inf"))
    check_float("f", float("nan"), float("nan"))
    check_float("f", 1.0 + 1e-12, 1.0, rel=1e-9)
    assert "Python float" in fails(check_float, "f", torch.tensor(1.0), 1.0)
    assert "Python float" in fails(check_float, "f", True, 1.0)
    assert "expected: -inf" in fails(check_float, "f", float("inf"), float("-inf"))
    g = torch.ones(2)
    check_gradients("g", (g.clone(), None), [g, None])
    assert "list" in fails(check_gradients, "g", (g, None), [g, None], kind=list)
    assert "gradient 1" in fails(check_gradients, "g", (g, g), [g, None])
    assert "replace the stub" in not_implemented_hint(NotImplementedError())
    assert "replace the stub" not in not_implemented_hint(NotImplementedError("Cannot copy out of meta tensor"))
    def copies_meta():
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    assert "not implemented for these inputs" in fails(call, "f()", copies_meta)


def test_cpp_reads_a_trace_table_and_builds_reports_compiler_errors(tmp_path, monkeypatch):
    from labkit import cpp

    steps = cpp.read_trace("| symbol | file | key | note |\n|---|---|---|---|\n| `a::b` | `x/y.cpp` | - | hi |\n\n"
                           "c::d | z.h | CPU\n")
    assert steps == [("a::b", "x/y.cpp", "-", "hi"), ("c::d", "z.h", "CPU")]
    assert cpp.read_trace(cpp.write_trace(steps, tmp_path / "TRACE.md").read_text())[0] == steps[0]
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))
    with pytest.raises(cpp.CompileError) as e:  # fails at once: the message is the compiler's own
        cpp.build_extension("broken", "int f() { return undefined_name; }\n")
    assert "undefined_name" in str(e.value) and "error" in str(e.value)
    assert not list((tmp_path / "ext").glob("*.so")), "a failed build leaves nothing in the cache"


# ---- labkit.fusion: what record_launches sees ----------------------------------------------------------

FUSION_SCRIPT = r'''
import os
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.language as tl
from labkit.fusion import record_launches


@triton.jit
def twice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(x_ptr + offs, mask=mask)  # the input read a second time
    tl.store(out_ptr + offs, a + b, mask=mask)


x = torch.arange(100, dtype=torch.float32)
out = torch.empty_like(x)
with record_launches() as launches:
    twice[(4,)](x, out, 100, BLOCK=32)
(launch,) = launches
assert launch.grid == (4, 1, 1) and launch.constexprs == {"BLOCK": 32}, launch
assert launch.traffic == {"loaded": 200, "stored": 100}, launch.traffic  # masked lanes are not counted
assert torch.equal(out, 2 * x)
print("ok")
'''


def test_record_launches_keeps_constexprs_and_counts_the_elements_each_launch_moves(tmp_path):
    """Under the interpreter, each Launch keeps its tl.constexpr arguments and counts the elements its loads
    read and its stores write on active lanes: how lab 7 tells a one-pass-per-chunk kernel from one that reads
    its input a third time. Run in a fresh process: TRITON_INTERPRET must be set before triton is imported."""
    import subprocess
    import sys

    script = tmp_path / "fusion_traffic.py"
    script.write_text(FUSION_SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def _comm_log_rank(rank, world_size):
    import torch.distributed as dist

    from labkit.distributed import comm_log

    w = torch.ones(3, requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda p: seen.append(len(log)))
    with comm_log() as log:
        dist.all_reduce(torch.ones(2))
        (w * 2).sum().backward()  # the hook reads the log while it is still growing
        dist.all_reduce(torch.ones(5), async_op=True).wait()
    return seen, [(c.op, c.numel) for c in log]


def test_comm_log_is_readable_while_it_grows():
    from labkit.distributed import run_ranks

    for seen, ops in run_ranks(_comm_log_rank, 2):
        assert seen == [1], "the hook saw the one all-reduce started before backward"
        assert [n for _, n in ops] == [2, 5] and all("allreduce" in op for op, _ in ops), ops


# ---- labkit.distributed: ranks that work after the parent started threads --------------------------------

_HELD = None  # a lock a thread of the test holds while ranks run (made by the test)


def test_run_ranks_works_after_the_parent_started_threads_and_ran_a_backward():
    """`fork` copies a process but not its threads: a lock one of them holds stays held forever in the copy, and on
    a GPU the copy can use neither CUDA nor autograd (whose device threads start at the first backward). So
    run_ranks must not fork the caller: its ranks come from a forkserver (or spawn), and a closure and a class
    defined here travel to them by value, with the caller's random state."""
    import multiprocessing
    import os
    import sys
    import threading

    from labkit import distributed

    global _HELD
    assert distributed.START_METHOD in ("spawn", "forkserver"), distributed.START_METHOD
    assert multiprocessing.get_context(distributed.START_METHOD).get_start_method() == distributed.START_METHOD

    w = torch.ones(3, requires_grad=True)
    (w * w).sum().backward()  # autograd has run here (on a GPU: its device threads exist now)
    _HELD = threading.Lock()
    holding, release = threading.Event(), threading.Event()

    def hold():
        with _HELD:
            holding.set()
            release.wait(60)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert holding.wait(30)

    class Scale(torch.nn.Module):  # defined in a function: no rank can import it
        def __init__(self, factor):
            super().__init__()
            self.factor = factor

        def forward(self, x):
            return self.factor * x

    offset = 10.0

    def rank_fn(rank, world_size):
        import torch.distributed as dist

        # a fresh import of this module has no lock; a fork of this process would have it, held forever
        free = _HELD is None or _HELD.acquire(timeout=2)
        x = torch.ones(2, requires_grad=True)
        (Scale(2.0)(x) + offset).sum().backward()
        total = torch.tensor([float(rank)])
        dist.all_reduce(total)
        return {"lock free": free, "copied marker": hasattr(sys, "labkit_parent_marker"), "parent": os.getppid(),
                "grad": x.grad, "sum": total.item(), "draw": torch.rand(3)}

    sys.labkit_parent_marker = True
    torch.manual_seed(1234)
    try:
        out = distributed.run_ranks(rank_fn, 2, timeout=120)
    finally:
        release.set()
        holder.join(30)
        del sys.labkit_parent_marker
    torch.manual_seed(1234)
    expected_draw = torch.rand(3)
    for rank, r in enumerate(out):
        assert r["lock free"], f"rank {rank} found the lock a thread here holds: it is a copy of this process"
        assert not r["copied marker"], f"rank {rank} has a marker set only in this process: it was forked from it"
        assert r["parent"] != os.getpid(), f"rank {rank}'s parent is this process: it was forked from it"
        assert torch.equal(r["grad"], torch.full((2,), 2.0)) and r["sum"] == 1.0, r
        assert torch.equal(r["draw"], expected_draw), "a rank starts with the caller's torch random state"


def test_run_ranks_sends_what_a_bare_main_module_defines_by_value(monkeypatch):
    """The grading sandbox runs a hand-in's cells in a bare `__main__` module (no file: nothing a rank could
    import), as a Jupyter kernel does: its functions (recursive ones, closures, lambdas) and classes reach the
    ranks by value, and an instance of such a class comes back as an instance of the caller's own class."""
    import sys
    import types

    from labkit.distributed import RankFailure, run_ranks

    main = types.ModuleType("__main__")
    monkeypatch.setitem(sys.modules, "__main__", main)
    exec(compile('''
import torch
from torch import nn

class Point:
    def __init__(self, x):
        self.x = x

class Twice(nn.Module):
    def forward(self, x):
        return super().forward(x) if False else 2 * x

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def make(scale):
    def rank_fn(rank, world_size):
        return Point(fib(10) + rank * scale), Twice()(torch.ones(1)).item(), (lambda: world_size)()
    return rank_fn
''', "<cell 1>", "exec"), main.__dict__)
    out = run_ranks(main.make(100), 2)
    assert [p.x for p, _, _ in out] == [55, 155] and all(type(p) is main.Point for p, _, _ in out), out
    assert [(t, w) for _, t, w in out] == [(2.0, 2), (2.0, 2)], out

    import threading

    lock = threading.Lock()
    with pytest.raises(RankFailure, match="could not send"):  # what cannot be pickled is named before any start
        run_ranks(lambda rank, world_size: lock.locked(), 2)


def _append_rank(rank, world_size, path, fail_rank):
    with open(path, "a") as f:
        f.write(f"{rank}\n")
    if rank == fail_rank:
        raise ValueError("the learner's own mistake")
    return rank


def test_a_rendezvous_that_fails_is_retried_and_a_failing_fn_is_not(tmp_path, monkeypatch):
    """Gloo's full-mesh connect on loopback fails now and then on a loaded machine, before any rank runs fn
    (CI saw "Gloo connectFullMesh failed ... Connection closed by peer" in the week 10 walkthrough; PyTorch's
    own CI saw it too, pytorch/pytorch#53270). That is no one's mistake: run_ranks starts the run again.
    An error raised by fn itself is the learner's and is reported at once, without a second run."""
    from labkit.distributed import RankFailure, run_ranks

    fault, log = tmp_path / "fail-once", tmp_path / "ran"
    fault.touch()
    monkeypatch.setenv("LABKIT_FAIL_SETUP", str(fault))
    assert run_ranks(_append_rank, 3, str(log), -1) == [0, 1, 2]
    assert not fault.exists(), "the injected rendezvous failure never happened"
    assert sorted(log.read_text().split()) == ["0", "1", "2"], "fn ran once per rank, in the second run only"

    log.unlink()
    with pytest.raises(RankFailure, match="ValueError: the learner's own mistake"):
        run_ranks(_append_rank, 2, str(log), 1)
    assert sorted(log.read_text().split()) == ["0", "1"], "an error in fn must not start the run again"


def test_version_table_agrees_with_the_installed_torch():
    """labkit.versions: every fact the table records for this torch's minor version is what this torch does;
    a version that changes one fails here, by name, before a walkthrough cell does."""
    from labkit import versions

    checked = 0
    for fact in versions.OBSERVED:
        want = versions.expected(fact)
        if want is not None:
            assert versions.has(fact) == want, f"{fact}: the table says {want} for torch {versions.minor()}"
            checked += 1
    assert versions.minor("2.11.0+cu130") == "2.11" and versions.expected("gloo_all_to_all", "2.11.0") is False
    assert versions.ddp_default_bucket_cap_mb() == 25
    lo, hi = versions.SUPPORTED
    assert tuple(map(int, lo.split("."))) <= tuple(map(int, versions.minor().split("."))) <= \
        tuple(map(int, hi.split("."))), f"torch {versions.minor()} is outside the supported {lo} to {hi}"
    print(f"{checked} version facts checked on torch {versions.minor()}")
