"""Week 10 (distributed training on CPU): start a few gloo ranks, watch what they send.

- `run_ranks(fn, world_size, *args)`: start `world_size` processes, give each a gloo process
  group on the loopback interface, call `fn(rank, world_size, *args)` in each and return the
  results, ordered by rank. A rank that raises, or a collective that hangs, ends the whole run
  with a `RankFailure` that names the rank, its error and its last communication calls; the
  children are always killed and reaped, and their process groups destroyed.
- `record_comm(fn, *args)`: run `fn` and list the communication ops it dispatched
  (`send`, `recv_`, `allreduce_`, ...) with their peer and payload size; `comm_log()` does the
  same for a block and shows the list as it grows (what had started by the middle of a backward).
- `watch_runs()`: while the block runs, every `run_ranks` call also records the communication
  ops each of its ranks dispatched (`RankRun`); `check_all_reduced` checks that a run's ranks
  really all-reduced the gradients (a one-process simulation starts no rank at all).
- `chain_model(numels)`: a module with one parameter per entry, used in registration order,
  so backward produces their gradients in reverse order (what DDP's bucketing assumes).
- `check_int_lists`, `check_int_table`: checks of bucket lists and memory tables with teaching
  messages (tensors and gradients are checked with `labkit.testing`'s generic checks).
- `allreduce_trials` / `check_allreduce_trials`: run a candidate all-reduce on every rank of a
  real group, record its messages, and check it against `dist.all_reduce` and a ring's rules.

It ships to learners and holds no answers.

Why not fork: a copy of the notebook's own process inherits its CUDA context and the state of
its threads (autograd starts one per GPU at the first backward), and neither works in the copy.
The ranks are forked instead from a **forkserver**, a fresh interpreter started once per kernel
that has imported torch and this module and never runs anything else (no CUDA, no backward):
cheap to copy, on a CPU and on a GPU alike. A notebook defines its functions in `__main__`,
which such a process cannot import, so `fn`, its arguments, the global names its code uses and
its closure travel **by value** (`_RankPickler`: code objects, classes defined in the notebook);
what lives in an importable module travels by name and is imported in the rank.
Why 127.0.0.1 and `GLOO_SOCKET_IFNAME=lo`: the grading sandbox has a loopback interface and
nothing else (no network, no /etc/hosts).
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import dis
import functools
import importlib
import io
import marshal
import math
import mmap
import multiprocessing
import multiprocessing.connection
import multiprocessing.forkserver
import multiprocessing.spawn
import os
import pickle
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any, NamedTuple

import torch
import torch.distributed as dist
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from labkit.testing import LabCheckFailure, check_tensor, fail, not_implemented_hint

__all__ = ["COLLECTIVE_TIMEOUT_S", "RUN_TIMEOUT_S", "TRIAL_MAGNITUDE", "Comm", "RankFailure", "RankRun",
           "allreduce_trials", "chain_model", "check_all_reduced", "check_allreduce_trials", "check_int_lists",
           "check_int_table", "comm_log", "record_comm", "run_ranks", "runs_started", "watch_runs"]

COLLECTIVE_TIMEOUT_S = 10.0  # the process group's timeout: a send/recv/collective waiting longer raises
RUN_TIMEOUT_S = 60.0  # the whole run, start-up included; past it every rank is killed
_GRACE_S = 2.0  # after one rank failed, how long the others get to report before they are killed
# Gloo's full-mesh connect on loopback fails now and then on a loaded machine ("Connection closed by
# peer" in connectFullMesh, before any rank ran fn; PyTorch's own CI saw it, pytorch/pytorch#53270).
# That failure is the machine's, not the learner's: the whole run starts again, this many times at most.
_SETUP_RETRIES = 2
_SLOT = 512  # bytes of shared memory per rank for "what is it doing now"

# How ranks start: forked from a forkserver (see the module's docstring), never from the kernel.
START_METHOD = "forkserver"
# What the forkserver imports once, so that every rank forked from it already has it:
# DistributedDataParallel imports torch._dynamo on first use (about 2 s per rank otherwise).
_PRELOAD = ["torch._dynamo", "torch.nn.parallel", "labkit.distributed"]

_runs = 0
_watched: list | None = None  # inside `watch_runs`: one RankRun per run_ranks call


def runs_started() -> int:
    """How many times `run_ranks` started processes in this kernel (tests use it to see that a
    function that should be plain arithmetic did not start any)."""
    return _runs


class RankFailure(LabCheckFailure):
    """A rank raised, died or hung; the message says which, where and why."""


# ---- what each rank is doing, for the error message ------------------------------------------

_TRACED = ("send", "recv", "isend", "irecv", "batch_isend_irecv", "all_reduce", "all_gather",
           "all_gather_into_tensor", "all_gather_single", "reduce_scatter", "reduce_scatter_tensor",
           "reduce_scatter_single", "broadcast", "reduce", "barrier", "all_to_all", "all_to_all_single",
           "gather", "scatter", "all_gather_object", "broadcast_object_list", "monitored_barrier")


def _describe_arg(a: Any) -> str:
    if isinstance(a, torch.Tensor):
        return f"<{a.numel()} x {str(a.dtype).removeprefix('torch.')}>"
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
        return f"[{len(a)} tensors]"
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], dist.P2POp):
        return "[" + ", ".join(f"{op.op.__name__}({_describe_arg(op.tensor)}, peer={op.peer})" for op in a) + "]"
    if isinstance(a, dist.ProcessGroup):
        return "group"
    return repr(a)[:20]


class _Status:
    """The last few communication calls of one rank, kept in memory shared with the parent."""

    def __init__(self, buf: mmap.mmap, rank: int):
        self.buf, self.rank, self.calls = buf, rank, []
        self.depth = 0  # > 0 inside a traced call: dist.send calls dist.isend, which is not noted again

    def note(self, text: str) -> None:
        self.calls = (self.calls + [text])[-4:]
        data = "; ".join(self.calls).encode()[-(_SLOT - 1):]  # the latest calls, if it is too long
        start = self.rank * _SLOT
        self.buf[start:start + _SLOT] = data + b"\0" * (_SLOT - len(data))


def _read_status(buf: mmap.mmap, rank: int) -> str:
    raw = buf[rank * _SLOT:(rank + 1) * _SLOT]
    return raw.split(b"\0", 1)[0].decode(errors="replace") or "no communication call yet"


def _trace_calls(status: _Status) -> None:
    """Wrap torch.distributed's communication functions (in this child only) so each call is noted.

    The wrapper replaces the function both in `torch.distributed` and in
    `torch.distributed.distributed_c10d`, where torch itself looks it up (`P2POp` checks that its
    op *is* `isend` or `irecv`), so identity checks keep working."""
    c10d = dist.distributed_c10d
    for name in _TRACED:
        orig = getattr(dist, name, None)
        if orig is None:
            continue

        def wrapper(*args, __orig=orig, __name=name, **kwargs):
            if status.depth == 0:
                shown = [_describe_arg(a) for a in args] + [f"{k}={_describe_arg(v)}" for k, v in kwargs.items()]
                status.note(f"dist.{__name}({', '.join(shown)})")
            status.depth += 1
            try:
                return __orig(*args, **kwargs)
            finally:
                status.depth -= 1

        functools.update_wrapper(wrapper, orig)
        setattr(dist, name, wrapper)
        if getattr(c10d, name, None) is orig:
            setattr(c10d, name, wrapper)


# ---- sending the rank's function to a fresh process ---------------------------------------------

_MAIN_NAMES = ("__main__", "__mp_main__")


class _Empty:
    """Stands for an empty closure cell (a local variable not assigned yet) in a pickled function."""


def _by_name(obj) -> bool:
    """Can `obj` (a function or class) be found again by importing its module and walking its
    qualified name? Then it travels by name, as pickle does by default; otherwise by value."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or module in _MAIN_NAMES or "<" in qualname:
        return False
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found is obj


def _global_names(code: types.CodeType) -> set[str]:
    """The global names `code` (and the functions, lambdas and classes defined inside it) reads or writes."""
    names = {ins.argval for ins in dis.get_instructions(code)
             if ins.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return {n for n in names if isinstance(n, str)}


class _RankPickler(pickle.Pickler):
    """pickle, plus what a notebook defines: a function or class that cannot be imported by name
    (defined in `__main__`, or inside another function) travels as its code or its attributes, with
    the globals its code uses; modules travel by name. Objects are rebuilt before their contents are
    filled in, so a function may refer to itself, to its class (`super()`), or to other such objects."""

    def reducer_override(self, obj):
        if isinstance(obj, types.ModuleType):
            return importlib.import_module, (obj.__name__,)
        if isinstance(obj, types.FunctionType) and not _by_name(obj):
            return self._function(obj)
        if isinstance(obj, type) and not _by_name(obj) and obj.__module__ != "builtins":
            return self._class(obj)
        if isinstance(obj, (staticmethod, classmethod)):
            return type(obj), (obj.__func__,)
        if isinstance(obj, property):
            return property, (obj.fget, obj.fset, obj.fdel, obj.__doc__)
        return NotImplemented

    @staticmethod
    def _function(fn: types.FunctionType):
        glob = fn.__globals__
        module = glob.get("__name__")
        home = sys.modules.get(module) if isinstance(module, str) and module not in _MAIN_NAMES else None
        if home is not None and getattr(home, "__dict__", None) is glob:
            where, used = ("module", module), {}  # the rank imports the module and uses its globals
        else:
            where = ("values", id(glob), module)
            used = {n: glob[n] for n in sorted(_global_names(fn.__code__)) if n in glob}
        cells = []
        for cell in fn.__closure__ or ():
            try:
                cells.append(cell.cell_contents)
            except ValueError:
                cells.append(_Empty)
        state = {"globals": used, "defaults": fn.__defaults__, "kwdefaults": fn.__kwdefaults__, "cells": cells,
                 "dict": dict(fn.__dict__), "doc": fn.__doc__}
        args = (marshal.dumps(fn.__code__), where, fn.__name__, fn.__qualname__, fn.__module__, len(cells))
        return _function_skeleton, args, state, None, None, _fill_function

    @staticmethod
    def _class(cls: type):
        skip = {"__dict__", "__weakref__", "_abc_impl", "__slots__"}
        slots = cls.__dict__.get("__slots__")
        attrs = {k: v for k, v in cls.__dict__.items()
                 if k not in skip and not isinstance(v, types.MemberDescriptorType)}
        args = (type(cls), cls.__name__, cls.__qualname__, cls.__module__, cls.__bases__, slots)
        return _class_skeleton, args, attrs, None, None, _fill_class


# In a rank: the globals of the functions that came by value (one namespace per notebook or module they
# came from), and every object rebuilt from its value (sent back by name: the notebook has the original).
_namespaces: dict[int, dict] = {}
_rebuilt: dict[int, tuple[Any, str, str]] = {}


def _function_skeleton(code: bytes, where: tuple, name: str, qualname: str, module: str, n_cells: int):
    if where[0] == "module":
        glob = importlib.import_module(where[1]).__dict__
    else:
        glob = _namespaces.setdefault(where[1], {"__builtins__": builtins, "__name__": where[2]})
    fn = types.FunctionType(marshal.loads(code), glob, name, None, tuple(types.CellType() for _ in range(n_cells)))
    fn.__qualname__, fn.__module__ = qualname, module
    _rebuilt[id(fn)] = (fn, module, qualname)
    return fn


def _fill_function(fn: types.FunctionType, state: dict) -> None:
    fn.__globals__.update(state["globals"])
    fn.__defaults__, fn.__kwdefaults__, fn.__doc__ = state["defaults"], state["kwdefaults"], state["doc"]
    fn.__dict__.update(state["dict"])
    for cell, value in zip(fn.__closure__ or (), state["cells"]):
        if value is not _Empty:
            cell.cell_contents = value


def _class_skeleton(meta: type, name: str, qualname: str, module: str, bases: tuple, slots):
    namespace = {"__module__": module, "__qualname__": qualname}
    if slots is not None:
        namespace["__slots__"] = slots
    cls = types.new_class(name, bases, {"metaclass": meta}, lambda ns: ns.update(namespace))
    _rebuilt[id(cls)] = (cls, module, qualname)
    return cls


def _fill_class(cls: type, attrs: dict) -> None:
    for key, value in attrs.items():
        if key not in ("__module__", "__qualname__"):
            setattr(cls, key, value)


def _find(module: str, qualname: str):
    """Back in the notebook: the original of an object a rank rebuilt from its value."""
    found = sys.modules[module]
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


class _ResultPickler(pickle.Pickler):
    """pickle for a rank's result: what the rank rebuilt from its value goes back by name."""

    def reducer_override(self, obj):
        entry = _rebuilt.get(id(obj))
        if entry is not None and entry[0] is obj:
            return _find, entry[1:]
        return NotImplemented


def _dumps(obj: Any, pickler=pickle.Pickler) -> bytes:
    buf = io.BytesIO()
    pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def _notebook_state() -> dict:
    """What a forked rank used to inherit from the notebook and a fresh one must be given: where
    modules are found, the environment, the random state and the default dtype."""
    return {"path": list(sys.path), "cwd": os.getcwd(), "environ": dict(os.environ),
            "torch_rng": torch.get_rng_state(), "random": random.getstate(), "dtype": torch.get_default_dtype()}


def _adopt(state: dict) -> None:
    sys.path[:] = state["path"]
    with contextlib.suppress(OSError):
        os.chdir(state["cwd"])
    os.environ.clear()
    os.environ.update(state["environ"])
    torch.set_rng_state(state["torch_rng"])
    random.setstate(state["random"])
    torch.set_default_dtype(state["dtype"])


@contextlib.contextmanager
def _main_not_rerun():
    """While ranks start: a process started with "spawn" or "forkserver" runs the parent's main
    script (or module) again before its target, unless the script guards itself with
    `if __name__ == "__main__"`. A rank needs none of it (what `fn` uses comes by value), so the
    preparation data each rank gets leaves the main module out."""
    spawn = multiprocessing.spawn
    original = spawn.get_preparation_data

    def without_main(name):
        data = original(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data

    spawn.get_preparation_data = without_main
    try:
        yield
    finally:
        spawn.get_preparation_data = original


def _ensure_forkserver(ctx) -> None:
    """Start this kernel's forkserver unless it runs: it imports `_PRELOAD` and waits. Its standard
    streams are /dev/null, so nothing it might print reaches a notebook cell."""
    ctx.set_forkserver_preload(_PRELOAD)
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            os.dup2(devnull, fd)
        multiprocessing.forkserver.ensure_running()
    finally:
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(devnull)


# ---- the child ---------------------------------------------------------------------------------

def _die_with_parent(kernel: int) -> None:
    try:  # PR_SET_PDEATHSIG: if the forkserver dies (it does when the kernel dies), the OS kills this rank
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    try:
        os.kill(kernel, 0)
    except ProcessLookupError:  # the kernel died before this rank started
        os._exit(1)
    except OSError:
        pass


def _injected_setup_fault(rank: int, run_dir: str) -> None:
    """Tests inject the rare loopback failure of gloo's rendezvous (see `_SETUP_RETRIES`): while the
    file named by LABKIT_FAIL_SETUP exists, the first rank to remove it fails as gloo would."""
    path = os.environ.get("LABKIT_FAIL_SETUP")
    if path:
        try:
            os.unlink(path)
        except OSError:
            return
        raise RuntimeError(f"Gloo connectFullMesh failed with [injected by LABKIT_FAIL_SETUP in rank {rank}] "
                           "Connection closed by peer [127.0.0.1]")


def _rendezvous(rank: int, world_size: int, buf: mmap.mmap, collective_timeout: float):
    """Rank 0 hosts the TCPStore on a port the OS picks (so runs never collide on a port) and
    publishes the port in shared memory; the other ranks wait for it and connect."""
    timeout = timedelta(seconds=max(collective_timeout, 30.0))
    at = world_size * _SLOT
    if rank == 0:
        store = dist.TCPStore("127.0.0.1", 0, world_size, True, timeout=timeout, wait_for_workers=False)
        buf[at:at + 8] = int(store.port).to_bytes(8, "little")
        return store
    deadline = time.monotonic() + timeout.total_seconds()
    while (port := int.from_bytes(buf[at:at + 8], "little")) == 0:
        if time.monotonic() > deadline:
            raise TimeoutError("rank 0 never published the rendezvous port (did it fail to start?)")
        time.sleep(0.002)
    return dist.TCPStore("127.0.0.1", port, world_size, False, timeout=timeout)


def _child(sent, rank, world_size, conn, run_dir, collective_timeout, kernel, record) -> None:
    # Everything this process writes goes to two files, never to the kernel's streams (nbgrader
    # gives 0 to a test cell with output on stderr, and the kernel's stream objects belong to it).
    for fd, name in ((1, f"rank{rank}.out"), (2, f"rank{rank}.err")):
        f = os.open(os.path.join(run_dir, name), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(f, fd)
        os.close(f)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), line_buffering=True)
    _die_with_parent(kernel)
    with open(os.path.join(run_dir, "status"), "r+b") as f:
        status_buf = mmap.mmap(f.fileno(), 0)
    payload: tuple
    store = None
    phase = "error"  # "setup" while the process group forms: a failure there is retried (see run_ranks)
    try:
        state, fn, args = pickle.loads(sent)  # (rebuilds the notebook's functions and classes)
        _adopt(state)
        torch.set_num_threads(1)
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
        status = _Status(status_buf, rank)
        _trace_calls(status)
        # groups made later with dist.new_group get the same timeout (gloo's default is 30 minutes)
        c10d = dist.distributed_c10d
        c10d.default_pg_timeout = c10d.default_pg_nccl_timeout = timedelta(seconds=collective_timeout)
        phase = "setup"
        _injected_setup_fault(rank, run_dir)
        store = _rendezvous(rank, world_size, status_buf, collective_timeout)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size,
                                timeout=timedelta(seconds=collective_timeout))
        phase = "error"
        if record:  # inside watch_runs: note every communication op this rank dispatches
            with _CommRecorder() as rec:
                out = fn(rank, world_size, *args)
            payload = ("ok", _dumps(out, _ResultPickler), pickle.dumps(rec.events))
        else:
            out = fn(rank, world_size, *args)
            payload = ("ok", _dumps(out, _ResultPickler), pickle.dumps(None))
    except BaseException as exc:  # noqa: BLE001 - every error goes back to the parent
        tb = traceback.format_exc()
        payload = (phase, time.time(), type(exc).__name__, str(exc), tb, not_implemented_hint(exc))
    finally:
        try:
            if dist.is_initialized():
                dist.destroy_process_group()
        except BaseException:  # noqa: BLE001
            pass
    try:
        conn.send_bytes(pickle.dumps(payload))
    except BaseException as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
        conn.send_bytes(pickle.dumps(("error", time.time(), type(exc).__name__,
                                      f"could not send the result back: {exc}", "", "")))
    sys.stdout.flush()
    sys.stderr.flush()
    if store is not None:
        try:  # rank 0 hosts the store: it stays until every rank is done with it
            store.add("labkit/done", 1)
            if rank == 0:
                deadline = time.monotonic() + collective_timeout
                while store.add("labkit/done", 0) < world_size and time.monotonic() < deadline:
                    time.sleep(0.005)
        except BaseException:  # noqa: BLE001
            pass
    os._exit(0)


# ---- the parent ----------------------------------------------------------------------------------

def _tail(path: str, n: int = 1500) -> str:
    try:
        with open(path, "rb") as f:
            return f.read().decode(errors="replace")[-n:].strip()
    except OSError:
        return ""


def _attempt(ctx, sent: bytes, world_size: int, run_dir: str, timeout: float, collective_timeout: float,
             record: bool):
    """Start the ranks once and wait for them: (results, comms, errors, hung, statuses, files)."""
    # one slot per rank for its last communication calls, then 8 bytes for the store's port, in a file
    # every rank maps too; the store lives in rank 0, not here, so its socket warnings stay out of the notebook
    with open(os.path.join(run_dir, "status"), "w+b") as f:
        f.truncate(_SLOT * world_size + 8)
        status_buf = mmap.mmap(f.fileno(), 0)
    files = [(os.path.join(run_dir, f"rank{r}.out"), os.path.join(run_dir, f"rank{r}.err")) for r in range(world_size)]
    procs, readers = [], []
    results: dict[int, Any] = {}
    comms: dict[int, list] = {}
    errors: dict[int, tuple] = {}
    t0 = time.monotonic()
    try:
        for rank in range(world_size):
            reader, writer = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_child, name=f"rank{rank}", daemon=True,
                            args=(sent, rank, world_size, writer, run_dir, collective_timeout, os.getpid(),
                                  record))
            with _main_not_rerun():
                p.start()
            writer.close()
            procs.append(p)
            readers.append(reader)
        pending = set(range(world_size))
        first_error_at = None
        while pending:
            now = time.monotonic()
            limit = t0 + timeout if first_error_at is None else min(t0 + timeout, first_error_at + _GRACE_S)
            if now >= limit:
                break
            waitables = {readers[r]: r for r in pending}
            waitables.update({procs[r].sentinel: r for r in pending})
            for obj in multiprocessing.connection.wait(list(waitables), timeout=limit - now):
                r = waitables[obj]
                if r not in pending:
                    continue
                payload = None
                try:
                    if readers[r].poll():
                        payload = pickle.loads(readers[r].recv_bytes())
                except (EOFError, OSError):
                    payload = None
                if payload is None:
                    if obj is readers[r]:
                        procs[r].join(1.0)
                    if procs[r].is_alive():
                        continue
                    code = procs[r].exitcode
                    how = f"was killed by signal {-code}" if code and code < 0 else f"exited with code {code}"
                    payload = ("error", time.time(), "ProcessDied", f"the process {how} without reporting",
                               "", "out of memory, or a crash in native code (see its last stderr lines)")
                pending.discard(r)
                if payload[0] == "ok":
                    try:
                        results[r] = pickle.loads(payload[1])
                        comms[r] = pickle.loads(payload[2])
                    except Exception as exc:  # noqa: BLE001
                        errors[r] = ("error", time.time(), type(exc).__name__,
                                     f"its result could not be unpickled: {exc}", "", "")
                else:
                    errors[r] = payload
                    if first_error_at is None:
                        first_error_at = time.monotonic()
        hung = sorted(pending)
        statuses = {r: _read_status(status_buf, r) for r in range(world_size)}
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join(5.0)
        for reader in readers:
            reader.close()
        status_buf.close()
    return results, comms, errors, hung, statuses, files


def run_ranks(fn: Callable, world_size: int, *args, timeout: float = RUN_TIMEOUT_S,
              collective_timeout: float = COLLECTIVE_TIMEOUT_S) -> list:
    """Run `fn(rank, world_size, *args)` in `world_size` new processes, each a rank of a fresh
    gloo process group (the default group: `dist.get_rank()`, `dist.all_reduce`, ... just work),
    and return `[result of rank 0, result of rank 1, ...]`.

    The ranks are forked from this kernel's forkserver (`START_METHOD`), never from the kernel
    itself, so they work after this kernel initialized CUDA or ran a backward. `fn` and `args`
    travel pickled, functions and classes defined in the notebook (closures included) by value
    with the globals their code uses; each rank starts with this kernel's `sys.path`, working
    directory, environment, random states (torch's and `random`'s) and default dtype.
    Results travel back pickled, so return tensors, numbers, lists, dicts (not modules or process
    groups). What the ranks print appears after the run, prefixed with the rank.

    Raises `RankFailure` when a rank raises (its error and traceback), dies, or when the run
    takes longer than `timeout` seconds (which ranks had not finished and the last
    communication calls each made). A send/recv/collective that waits longer than
    `collective_timeout` seconds raises inside its rank (in the default group and in groups
    that `fn` makes with `dist.new_group`). Every child is killed and reaped
    before this returns or raises: nothing is left running.
    """
    global _runs
    watch = _watched
    if not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"world_size must be a positive int, got {world_size!r}")
    _runs += 1
    try:
        sent = _dumps((_notebook_state(), fn, args), _RankPickler)
    except Exception as exc:  # noqa: BLE001 - e.g. a lock or an open file among fn's globals or arguments
        raise RankFailure(
            f"run_ranks could not send {getattr(fn, '__qualname__', fn)!r} and its arguments to the ranks: "
            f"{type(exc).__name__}: {exc}\n  likely cause: each rank is a fresh process, so fn's code, the "
            "global names it uses, its closure and its arguments travel pickled; a lock, an open file, a "
            "generator or a process group cannot: create it inside fn instead") from None
    ctx = multiprocessing.get_context(START_METHOD)
    _ensure_forkserver(ctx)
    for attempt in range(_SETUP_RETRIES + 1):
        run_dir = tempfile.mkdtemp(prefix="labkit-ranks-")
        results, comms, errors, hung, statuses, files = _attempt(
            ctx, sent, world_size, run_dir, timeout, collective_timeout, watch is not None)
        # only a failure while the group formed, in no rank that finished: fn ran nowhere to its end
        if (errors and not results and attempt < _SETUP_RETRIES
                and all(payload[0] == "setup" for payload in errors.values())):
            shutil.rmtree(run_dir, ignore_errors=True)
            continue
        break
    for r, (out_path, _err_path) in enumerate(files):
        text = _tail(out_path, 4000)
        if text:
            print("\n".join(f"[rank {r}] {line}" for line in text.splitlines()))
    try:
        if errors or hung:
            raise RankFailure(_failure_message(errors, hung, statuses, files, timeout, collective_timeout,
                                               world_size))
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    if watch is not None:
        watch.append(RankRun(world_size, [comms[r] for r in range(world_size)]))
    return [results[r] for r in range(world_size)]


def _user_frames(tb: str) -> list[str]:
    """The traceback's lines without the frames of this harness and of torch's logging wrapper."""
    out, skip = [], False
    for line in tb.strip().splitlines():
        if line.startswith('  File "'):
            skip = line.split('"')[1].endswith(("labkit/distributed.py", "c10d_logger.py"))
        if not skip and line.strip(" ^~"):
            out.append(line)
    return out


def _is_consequence(msg: str) -> bool:
    return any(s in msg for s in ("Connection closed by peer", "Connection reset by peer", "Broken pipe"))


def _failure_message(errors, hung, statuses, files, timeout, collective_timeout, world_size) -> str:
    lines = []
    if errors:
        # a rank whose peer died or timed out reports a closed connection: that is a consequence,
        # so the first error that is not one of those is shown as the cause
        order = sorted(errors, key=lambda r: (_is_consequence(errors[r][3]), errors[r][1]))
        first = order[0]
        _, _, name, msg, tb, hint = errors[first]
        short = msg.strip().splitlines()[0] if msg.strip() else ""
        lines.append(f"rank {first} of {world_size} raised {name}" + (f": {short}" if short else ""))
        if tb:
            lines.append("  its traceback (last lines):")
            lines += ["    " + ln for ln in _user_frames(tb)[-8:]]
        for r in order[1:]:
            first_line = (errors[r][3].strip().splitlines() or [""])[0][:200]
            lines.append(f"  then rank {r} raised {errors[r][2]}" + (f": {first_line}" if first_line else ""))
        stderr = _tail(files[first][1], 600)
        if name == "ProcessDied" and stderr:
            lines.append("  its last stderr lines:\n    " + stderr.replace("\n", "\n    "))
            if "doesn't match expected size" in stderr:
                hint = ("a message of the wrong size arrived, so gloo aborted the process: the ranks' sends and "
                        "receives do not pair up (a rank skipped a send, or sends its chunks in another order)")
        if hint:
            lines.append(f"  likely cause: {hint}")
        elif "Timed out" in msg or "timed out" in msg:
            lines.append(f"  likely cause: a send/recv/collective waited more than {collective_timeout:g} s for "
                         "its partner: a send without a matching recv (gloo's send waits until the peer posts "
                         "its recv), a wrong peer rank, or ranks calling collectives in different orders")
    if hung:
        lines.append(f"{'also: ' if errors else ''}ranks {hung} did not finish within {timeout:g} s and were killed")
        if not errors:
            lines.append("  likely cause: a rank waits for a message nobody sends, or loops forever")
    lines.append("  last communication calls per rank:")
    lines += [f"    rank {r}: {statuses[r]}" for r in range(world_size)]
    return "\n".join(lines)


# ---- watching communication ----------------------------------------------------------------------

class Comm(NamedTuple):
    """One communication op as the dispatcher saw it. `peer` is the rank within the op's group
    for send/recv (None for collectives). `numel`/`nbytes` measure the op's largest tensor
    argument, i.e. the whole buffer: the tensor sent or received, the tensor all-reduced, an
    all-gather's output, a reduce-scatter's input."""
    op: str
    peer: int | None
    numel: int
    nbytes: int


def _tensors_in(arg: Any) -> list[torch.Tensor]:
    if isinstance(arg, torch.Tensor):
        return [arg]
    if isinstance(arg, (list, tuple)):
        return [t for a in arg for t in _tensors_in(a)]
    return []


class _CommRecorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.events: list[Comm] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func)
        if name.startswith(("c10d.", "_c10d_functional.", "c10d_functional.")):
            op = name.split(".")[1]
            sizes = [(sum(t.numel() for t in ts), sum(t.numel() * t.element_size() for t in ts))
                     for ts in map(_tensors_in, args) if ts]
            numel, nbytes = max(sizes) if sizes else (0, 0)
            peer = args[2] if op in ("send", "recv_") and len(args) > 2 else None
            self.events.append(Comm(op, peer, numel, nbytes))
        return func(*args, **(kwargs or {}))


def record_comm(fn: Callable, *args, **kwargs) -> tuple[Any, list[Comm]]:
    """Run `fn` and return (its result, the communication ops it dispatched, in order).

    Every torch.distributed call reaches the c10d operators through PyTorch's dispatcher
    (`dist.send` -> `c10d.send`, `dist.recv` -> `c10d.recv_`, `dist.all_reduce` ->
    `c10d.allreduce_`, a process group's own methods too), so this sees them all.
    """
    with _CommRecorder() as rec:
        out = fn(*args, **kwargs)
    return out, rec.events


@contextlib.contextmanager
def comm_log():
    """While the block runs, append every communication op dispatched in this process to the list it
    yields, as it happens (`record_comm` returns them at the end): a test can look at the list in the
    middle of a backward, e.g. to count the all-reduces started so far.

        with comm_log() as log:
            loss.backward()   # a hook that reads len(log) sees the ops started until then
    """
    with _CommRecorder() as rec:
        yield rec.events


class RankRun(NamedTuple):
    """One `run_ranks` call seen by `watch_runs`: its world size, and for each rank (in rank order)
    the communication ops that rank's function dispatched."""
    world_size: int
    comm: list[list[Comm]]


@contextlib.contextmanager
def watch_runs():
    """While the block runs, every `run_ranks` call also records, in each rank, the communication
    ops the rank's function dispatches (as `record_comm` does). Yields a list that gets one
    `RankRun` per call that finished; a call that raised adds nothing.

        with watch_runs() as runs:
            grads = ddp_gradients(make_model, data, 2)
        check_all_reduced("ddp_gradients(...)", runs, 2, numel=...)
    """
    global _watched
    outer, _watched = _watched, []
    try:
        yield _watched
    finally:
        _watched = outer


_ALL_REDUCES = ("allreduce_", "allreduce_coalesced_", "all_reduce", "all_reduce_coalesced")


def check_all_reduced(what: str, runs: Sequence[RankRun], world_size: int, numel: int) -> None:
    """Some run of `runs` (from `watch_runs`) has `world_size` ranks, and every one of its ranks
    all-reduced at least `numel` elements (the gradients, whatever the buckets): the answer ran
    data-parallel training instead of computing the result in this process."""
    mine = [r for r in runs if r.world_size == world_size]
    if not mine:
        fail(f"{what}: processes started", f"one run_ranks(..., {world_size}) call (a rank per shard)",
             f"run_ranks calls with world sizes {[r.world_size for r in runs]}" if runs else "no run_ranks call",
             "start the ranks with run_ranks and let DDP all-reduce the gradients there: averaging the shards' "
             "gradients in this process gives the numbers without the training the task asks for")
    best = max(mine, key=lambda r: min(sum(c.numel for c in ops if c.op in _ALL_REDUCES) for ops in r.comm))
    for rank, ops in enumerate(best.comm):
        reduced = sum(c.numel for c in ops if c.op in _ALL_REDUCES)
        if reduced < numel:
            fail(f"{what}: gradient elements all-reduced by rank {rank} of {world_size}",
                 f"at least {numel} (every element of every gradient)", reduced,
                 f"this rank's communication ops were {[c.op for c in ops][:12]}: wrap the model in "
                 "DistributedDataParallel in every rank and call backward() on the DDP model's loss")


# ---- models and checks -----------------------------------------------------------------------------

class _Chain(nn.Module):
    def __init__(self, numels: Sequence[int]):
        super().__init__()
        self.ps = nn.ParameterList([nn.Parameter(torch.full((int(n),), 0.01)) for n in numels])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x
        for p in self.ps:  # each parameter is used after the previous one
            h = h + (p * p).sum() * h
        return h.sum()


def chain_model(numels: Sequence[int]) -> nn.Module:
    """A module with one float32 parameter per entry of `numels`, used one after the other in
    forward (call it on any float tensor, e.g. `torch.ones(2)`, to get a scalar loss), so
    backward makes their gradients ready in reverse registration order."""
    return _Chain(numels)


# ---- all-reduce trials: every rank runs a candidate all-reduce on seeded integer tensors ----------

# Each rank's values are integers in [-m, m]: big enough that a working copy in a narrower dtype
# (float32 for int64, float64 for int64 past 2**53) rounds them, small enough that the sum over 4
# ranks is exact in the dtype, so every summation order gives dist.all_reduce's answer bit for bit.
TRIAL_MAGNITUDE = {torch.float32: 2**21, torch.float64: 2**50, torch.int32: 2**28, torch.int64: 2**60}


def _allreduce_trial_rank(rank, world_size, fn, cases, partition, seed):
    group = None
    if partition:  # every rank must create every group, in the same order
        made = [dist.new_group(sorted(ranks)) for ranks in partition]
        group = next(g for g, ranks in zip(made, partition) if rank in ranks)
    out = []
    for k, (shape, dtype, transposed) in enumerate(cases):
        gen = torch.Generator().manual_seed(seed * 7919 + 131 * k + rank)
        stored = tuple(reversed(shape)) if transposed else tuple(shape)
        m = TRIAL_MAGNITUDE.get(dtype, 99)
        t = torch.randint(-m, m + 1, stored, generator=gen, dtype=torch.int64).to(dtype)
        if transposed:
            t = t.t()
        expected = t.clone()
        returned, comm = record_comm(fn, t, group)
        dist.all_reduce(expected, group=group)
        out.append({"got": t.clone(), "returned_self": returned is t, "expected": expected, "comm": comm,
                    "group_rank": dist.get_rank(group), "group_size": dist.get_world_size(group)})
    return out


def allreduce_trials(fn: Callable, world_size: int, cases: Sequence[tuple], *, partition=None, seed: int = 0,
                     collective_timeout: float = 5.0) -> list[list[dict]]:
    """On `world_size` ranks, call `fn(tensor, group)` once per case and record what it did.

    `cases` holds `(shape, dtype, transposed)`; `transposed` makes the input a non-contiguous
    `.t()` of a 2-D tensor. Each rank's input is random integers up to `TRIAL_MAGNITUDE[dtype]`
    in size (exact sums in any order; rounded by a working copy in a narrower dtype). `partition`
    (e.g. `[[0], [1, 2, 3]]`) splits the ranks into subgroups made with `dist.new_group`, and each
    rank passes its own subgroup; None passes `group=None`.
    Returns `results[rank][case]`: a dict with the tensor after the call (`got`), whether `fn`
    returned its input object, `dist.all_reduce`'s answer (`expected`), the communication ops
    `fn` dispatched (`comm`) and the rank's group rank and size.
    """
    return run_ranks(_allreduce_trial_rank, world_size, fn, list(cases), partition, seed,
                     collective_timeout=collective_timeout)


def check_allreduce_trials(name: str, results: list[list[dict]], cases: Sequence[tuple]) -> None:
    """Check every rank's result of `allreduce_trials` for a ring all-reduce: only send/recv, only to
    the next rank and from the previous one in the group, at most 2(W-1) chunks of ceil(n/W)
    elements sent, the input reduced in place and returned, equal to dist.all_reduce."""
    for rank, per_case in enumerate(results):
        for (shape, dtype, transposed), r in zip(cases, per_case):
            n, w, me = math.prod(shape), r["group_size"], r["group_rank"]
            what = (f"{name} on a {'transposed ' if transposed else ''}{tuple(shape)} "
                    f"{str(dtype).removeprefix('torch.')} tensor, rank {rank} (rank {me} of a group of {w})")
            ops = [c.op for c in r["comm"]]
            if any(op not in ("send", "recv_") for op in ops):
                fail(f"{what}: communication ops", "only send and recv_ (dist.send/recv/isend/irecv)", ops,
                     "a collective (dist.all_reduce, all_gather, reduce_scatter, broadcast, ...) does the "
                     "work for you: build the ring from point-to-point messages")
            right, left = (me + 1) % w, (me - 1) % w
            peers_out = sorted({c.peer for c in r["comm"] if c.op == "send"})
            peers_in = sorted({c.peer for c in r["comm"] if c.op == "recv_"})
            if any(p != right for p in peers_out) or any(p != left for p in peers_in):
                fail(f"{what}: peers (group ranks)", f"send only to {right}, receive only from {left}",
                     f"sent to {peers_out}, received from {peers_in}",
                     "in a ring, rank i sends to rank (i + 1) % W and receives from rank (i - 1) % W of the "
                     "group; with a subgroup, pass group_dst=/group_src= (group ranks) or map them with "
                     "dist.get_global_rank")
            sent = sum(c.numel for c in r["comm"] if c.op == "send")
            bound = 2 * (w - 1) * -(-n // w)
            if sent > bound:
                fail(f"{what}: elements sent by this rank", f"at most 2 * (W - 1) * ceil(n / W) = {bound}", sent,
                     "a ring sends each of its W chunks around twice (reduce-scatter, then all-gather), "
                     "never the whole tensor to every rank")
            if not r["returned_self"]:
                fail(f"{what}: return value", "the tensor that was passed in (reduced in place)",
                     "another object", "reduce into `tensor` itself (e.g. tensor.copy_(...)) and return it")
            check_tensor(what, r["got"], r["expected"],
                         cause="compare with dist.all_reduce: every chunk must be summed over all ranks "
                         "(reduce-scatter), then sent around so every rank has every sum (all-gather); keep the "
                         "input's dtype for every buffer (a float32 or float64 copy rounds large integers)")


def check_int_lists(what: str, got: Any, expected: list[list[int]], cause: str = "") -> None:
    """`got` must be a list of lists of Python ints equal to `expected`."""
    if type(got) is not list or any(type(b) is not list for b in got):
        fail(what, expected, got, "return a list of lists (one list of parameter indices per bucket)")
    if any(type(i) is not int for b in got for i in b):
        fail(what, expected, got, "every index must be a Python int")
    if got != expected:
        fail(what, expected, got, cause)


def check_int_table(what: str, got: Any, expected: dict[str, dict[str, int]], cause: str = "") -> None:
    """`got` must be a dict of dicts with exactly `expected`'s keys and equal Python int values."""
    if type(got) is not dict or set(got) != set(expected):
        fail(f"{what}: keys", sorted(expected), sorted(got) if isinstance(got, dict) else type(got).__name__,
             "return a dict with exactly these keys")
    for key, row in expected.items():
        inner = got[key]
        if type(inner) is not dict or set(inner) != set(row):
            fail(f"{what}[{key!r}]: keys", sorted(row),
                 sorted(inner) if isinstance(inner, dict) else type(inner).__name__,
                 "each strategy maps to a dict with exactly these keys")
        for field, value in row.items():
            if type(inner[field]) is not int:
                fail(f"{what}[{key!r}][{field!r}]", value, inner[field],
                     f"bytes are a Python int, not a {type(inner[field]).__name__}")
            if inner[field] != value:
                fail(f"{what}[{key!r}][{field!r}] (bytes per rank)", value, inner[field], cause)
