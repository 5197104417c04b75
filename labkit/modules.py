"""Test helpers for week 11 (modules, data loading, serialization).

- `forbid_calls` patches functions or methods to refuse being called while a
  block runs, and restores them afterwards: the lab uses it to check that an
  answer walks a module's registries itself, does not call `default_collate`,
  and reads a checkpoint without `torch.load` or an unpickler.
- `bound_globals` lists the global names a function uses that are bound to
  given objects (catches `from torch import load` at the top of a cell, which a
  patch of `torch.load` would not see).
- `check_same_batch` compares two collated batches: exact container types,
  keys in order, tensor dtype, shape, device and values, and says where they differ.
- `save_tagged` writes a checkpoint as `torch.save` would on another device (the
  storages' location tags say e.g. "cuda:1"), so a CPU machine can test that a
  reader takes the location from the file.
- `RandomDraws` and `loader_draws` run a dataset through a DataLoader with two
  worker processes and return what each item drew from four random generators.

It holds no answers. Depends on torch and numpy.

Importing it pickles one `nn.Parameter` into memory: pickling caches `__slotnames__`
on `torch.Tensor` and `nn.Parameter` the first time it meets them, so the classes
are already in their final state when the lab's own cells start (a test that
compares them before and after a call sees only what that call did).
"""

from __future__ import annotations

import builtins
import io
import multiprocessing
import os
import pickle
import random
import select
import signal
import time
import types
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, SequentialSampler, get_worker_info

from labkit.testing import LabCheckFailure, fail

torch.save(torch.nn.Parameter(torch.zeros(1)), io.BytesIO())  # fill pickle's __slotnames__ cache now

__all__ = ["RandomDraws", "bound_globals", "check_same_batch", "forbid_calls", "loader_draws", "save_tagged",
           "workers_available"]


# ---------------------------------------------------------------- forbidden calls

_MISSING = object()


class ForbiddenCall(LabCheckFailure):
    """Raised by a patched function: the answer called something the task forbids."""


class forbid_calls:
    """While the block runs, every target refuses to be called.

        with forbid_calls("checkpoint_storages(path)", [(torch, "load")], "read the zip yourself"):
            checkpoint_storages(path)

    `targets` are (owner, name) pairs: a module, a class (for methods) or a dict
    (for entries of a registry such as default_collate_fn_map). Missing names
    are skipped. A call raises `ForbiddenCall` (a `LabCheckFailure`, so
    `labkit.testing.call` passes it through) and is recorded: leaving the block
    fails even if the answer caught the error and went on.
    """

    def __init__(self, what: str, targets, hint: str):
        self.what, self.hint = what, hint
        self.targets = [(owner, name) for owner, name in targets if _has(owner, name)]
        self.calls: list[str] = []
        self._saved: list[tuple[Any, str, Any]] = []

    def _raiser(self, label: str):
        def refuse(*args, **kwargs):
            self.calls.append(label)
            raise ForbiddenCall(f"{self.what} called {label}, which this task forbids\n  likely cause: {self.hint}")
        refuse.__name__ = f"forbidden_{label.rsplit('.', 1)[-1]}"
        return refuse

    def __enter__(self):
        self.calls = []
        for owner, name in self.targets:
            if isinstance(owner, dict):
                original, label = owner[name], getattr(owner[name], "__qualname__", str(name))
                owner[name] = self._raiser(label)
            else:
                original = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name)
                label = f"{getattr(owner, '__name__', type(owner).__name__)}.{name}"
                setattr(owner, name, self._raiser(label))
            self._saved.append((owner, name, original))
        return self

    def __exit__(self, exc_type, exc, tb):
        while self._saved:
            owner, name, original = self._saved.pop()
            if isinstance(owner, dict):
                owner[name] = original
            elif original is _MISSING:
                delattr(owner, name)  # it was inherited: uncover the base class's again
            else:
                setattr(owner, name, original)
        if self.calls and exc_type is None:
            fail(f"{self.what}: forbidden calls", "none", sorted(set(self.calls)), self.hint)
        return False


def _has(owner, name) -> bool:
    if isinstance(owner, dict):
        return name in owner
    return hasattr(owner, name)


def bound_globals(fn: Callable, forbidden) -> list[str]:
    """Global names used by `fn` (or functions nested in it) bound to one of `forbidden`."""
    bad_ids = {id(f) for f in forbidden}
    names: set[str] = set()

    def walk(code: types.CodeType):
        names.update(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)

    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    walk(code)
    glb = getattr(fn, "__globals__", {})
    return sorted(n for n in names if n in glb and id(glb[n]) in bad_ids)


# ---------------------------------------------------------------- collated batches

def check_same_batch(what: str, got: Any, expected: Any, where: str = "batch") -> None:
    """`got` must equal `expected` as default_collate builds it: same container types
    (list vs tuple vs named tuple vs dict type), keys in the same order, tensors of the
    same dtype, shape, device and values, other leaves equal."""
    if type(got) is not type(expected):
        fail(f"{what}: type of {where}", type(expected).__name__, type(got).__name__, _type_hint(expected, got))
    if isinstance(expected, torch.Tensor):
        if got.dtype != expected.dtype:
            fail(f"{what}: dtype of {where}", expected.dtype, got.dtype, _dtype_hint(expected.dtype, got.dtype))
        if tuple(got.shape) != tuple(expected.shape):
            fail(f"{what}: shape of {where}", tuple(expected.shape), tuple(got.shape),
                 "a batch of B samples of shape S stacks into shape (B, *S): a new leading dim")
        if got.device != expected.device:
            fail(f"{what}: device of {where}", expected.device, got.device,
                 "stacking keeps the samples' device: build the batch with torch.stack, or allocate it with "
                 "device=elem.device")
        if expected.device.type == "meta":
            return  # meta tensors have no values to compare
        if not torch.equal(got, expected):
            fail(f"{what}: values of {where}", expected.tolist(), got.tolist(), "samples stacked in the wrong order?")
        return
    if isinstance(expected, Mapping):
        if list(got.keys()) != list(expected.keys()):
            fail(f"{what}: keys of {where}", list(expected.keys()), list(got.keys()),
                 "use the first sample's keys, in its order")
        for k in expected:
            check_same_batch(what, got[k], expected[k], f"{where}[{k!r}]")
        return
    if isinstance(expected, (list, tuple)):
        if len(got) != len(expected):
            fail(f"{what}: length of {where}", len(expected), len(got),
                 "a batch of sequences gives one entry per position in the sequence, not one per sample")
        for i, (g, e) in enumerate(zip(got, expected)):
            check_same_batch(what, g, e, f"{where}[{i}]")
        return
    if got != expected:
        fail(f"{what}: value of {where}", expected, got, "")


def _type_hint(expected, got) -> str:
    if isinstance(expected, list) and isinstance(got, tuple):
        return "default_collate returns a list for a batch of tuples or lists; only named tuples keep their type"
    if isinstance(expected, tuple) and hasattr(expected, "_fields"):
        return "a batch of named tuples comes back as the same named tuple type, one field per entry"
    if isinstance(expected, Mapping):
        return "a batch of mappings comes back as a mapping of the same type as the first sample"
    if isinstance(expected, torch.Tensor):
        return "numbers, numpy arrays and tensors are collated into one tensor"
    return ""


def _dtype_hint(expected: torch.dtype, got: torch.dtype) -> str:
    if expected == torch.float64 and got == torch.float32:
        return "Python floats collate to float64; torch.tensor(list_of_floats) alone would give float32"
    if expected == torch.bool:
        return "Python bools collate to a bool tensor (torch.tensor(batch) infers it)"
    return "keep the dtype the samples have (numpy dtypes carry over, torch.tensor infers Python numbers)"


# ---------------------------------------------------------------- checkpoints

def save_tagged(obj: Any, f, location_of: Callable[[Any], str | None], **save_kwargs) -> None:
    """`torch.save(obj, f, **save_kwargs)`, except that each storage is tagged with the location
    `location_of(storage)` returns (e.g. "cuda:1"; None keeps its real one, "cpu" here). The bytes
    written are the same: this is the file a machine with that device would write, so a CPU
    machine can check that a reader takes the location from the file."""
    registry = torch.serialization._package_registry
    entry = (-1, lambda storage: location_of(storage), lambda storage, location: None)
    registry.insert(0, entry)  # looked up first: torch.serialization.location_tag asks each in turn
    try:
        torch.save(obj, f, **save_kwargs)
    finally:
        registry.remove(entry)


# ---------------------------------------------------------------- worker processes

class RandomDraws(Dataset):
    """`n` items; item i is a dict of Python ints drawn while loading it:

    - "index": i, "worker": the worker id (-1 in the main process),
    - "np_global": from NumPy's global RNG (np.random.randint),
    - "py_global": from Python's global RNG (random.getrandbits),
    - "np_own": from the dataset's own `self.np_rng` (a np.random.Generator), when it has one,
    - "py_own": from the dataset's own `self.py_rng` (a random.Random), when it has one.

    The dataset's own generators are created once, in `__init__`, in the main
    process: that is the duplicated-randomness trap, since every worker gets a copy.
    """

    def __init__(self, n: int = 8, own_numpy: bool = True, own_python: bool = True, seed: int = 1234):
        self.n = n
        if own_numpy:
            self.np_rng = np.random.default_rng(seed)
        if own_python:
            self.py_rng = random.Random(seed)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict:
        info = get_worker_info()
        item = {"index": int(i), "worker": info.id if info is not None else -1,
                "np_global": int(np.random.randint(2**31)), "py_global": random.getrandbits(31)}
        if hasattr(self, "np_rng"):
            item["np_own"] = int(self.np_rng.integers(2**31))
        if hasattr(self, "py_rng"):
            item["py_own"] = self.py_rng.getrandbits(31)
        return item


def _as_list(batch):  # collate_fn: keep the samples as they are (plain Python, no shared memory needed)
    return list(batch)


_WORKERS_OK: bool | None = None


def workers_available() -> bool:
    """Can this process start DataLoader workers? They need POSIX semaphores (/dev/shm),
    which some sandboxes forbid."""
    global _WORKERS_OK
    if _WORKERS_OK is None:
        try:
            multiprocessing.get_context("fork").Lock()
            _WORKERS_OK = True
        except OSError:
            _WORKERS_OK = False
    return _WORKERS_OK


def loader_draws(dataset: Dataset, worker_init_fn: Callable | None, seed: int, num_workers: int = 2,
                 batch_size: int = 2, epochs: int = 1, timeout: float = 60.0) -> list[list]:
    """Load `dataset` in order with `num_workers` worker processes, `epochs` times, from a
    DataLoader whose generator is seeded with `seed`; return one list of items per epoch.

    Where DataLoader's workers can start, this is a real DataLoader (fork start method).
    Where they cannot (no POSIX semaphores, as in some grading sandboxes), the workers are
    forked here and seeded exactly as DataLoader's worker loop seeds them (torch 2.13):
    the base seed is drawn from the generator once per epoch; worker w gets seed
    base_seed + w for `random` and torch, NumPy's global RNG gets a state derived from
    (base_seed, w), `get_worker_info()` describes the worker, then `worker_init_fn(w)`
    runs and batch k is loaded by worker k % num_workers.
    """
    if workers_available():
        loader = DataLoader(dataset, batch_size=batch_size, num_workers=num_workers,
                            worker_init_fn=worker_init_fn, collate_fn=_as_list,
                            generator=torch.Generator().manual_seed(seed), multiprocessing_context="fork",
                            timeout=timeout)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. "suggested max number of worker" on a 1-core slot
            return [[item for batch in loader for item in batch] for _ in range(epochs)]
    gen = torch.Generator().manual_seed(seed)
    batches = list(BatchSampler(SequentialSampler(range(len(dataset))), batch_size, False))
    out = []
    for _ in range(epochs):
        base_seed = torch.empty((), dtype=torch.int64).random_(generator=gen).item()
        loaded: dict[int, list] = {}
        for wid in range(num_workers):
            mine = [k for k in range(len(batches)) if k % num_workers == wid]
            result = _fork_worker(dataset, worker_init_fn, base_seed, wid, num_workers,
                                  [batches[k] for k in mine], timeout)
            loaded.update(zip(mine, result))
        out.append([item for k in range(len(batches)) for item in loaded[k]])
    return out


def _fork_worker(dataset, init_fn, base_seed, wid, num_workers, batches, timeout):
    from torch.utils.data._utils import worker as worker_mod

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker: never return into the caller
        try:
            os.close(read_fd)
            try:
                torch.set_num_threads(1)
                seed = base_seed + wid
                random.seed(seed)
                torch.manual_seed(seed)
                np.random.seed(worker_mod._generate_state(base_seed, wid))
                worker_mod._worker_info = worker_mod.WorkerInfo(id=wid, num_workers=num_workers, seed=seed,
                                                                dataset=dataset)
                if init_fn is not None:
                    init_fn(wid)
                payload = ("ok", [[dataset[i] for i in batch] for batch in batches])
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                payload = ("error", type(exc).__name__, str(exc))
            data = pickle.dumps(payload)
            view = memoryview(data)
            while view:
                view = view[os.write(write_fd, view):]
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([read_fd], [], [], max(left, 0))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                raise RuntimeError(f"DataLoader worker {wid} (pid {pid}) timed out after {timeout:.0f} s")
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    if not chunks:
        raise RuntimeError(f"DataLoader worker {wid} (pid {pid}) exited unexpectedly")
    payload = pickle.loads(b"".join(chunks))
    if payload[0] == "error":  # re-raised as its own type when it is a built-in one, as DataLoader does
        exc_type = getattr(builtins, payload[1], None)
        if not (isinstance(exc_type, type) and issubclass(exc_type, Exception)):
            exc_type = RuntimeError
        raise exc_type(f"Caught {payload[1]} in DataLoader worker process {wid}: {payload[2]}")
    return payload[1]
