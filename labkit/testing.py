"""Checks used by the labs' test cells.

Every failure says what was expected, what came back and the likely cause, so a
learner reading a red cell knows where to look. The checks never trust the
object under test: types are checked before values, so an answer object whose
`__eq__` always returns True cannot pass for a tuple or a tensor.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class LabCheckFailure(AssertionError):
    """A test expectation that did not hold, with a message written for learners."""


def fail(what: str, expected: Any, got: Any, cause: str = "") -> None:
    """Raise a failure that reads: what was checked, expected, got, likely cause."""
    lines = [what, f"  expected: {expected!r}", f"  got:      {got!r}"]
    if cause:
        lines.append(f"  likely cause: {cause}")
    raise LabCheckFailure("\n".join(lines))


def not_implemented_hint(exc: BaseException) -> str:
    if isinstance(exc, NotImplementedError):
        return "the function still raises NotImplementedError: replace the stub with your code"
    return ""


def call(what: str, fn: Callable, *args, **kwargs):
    """Call the learner's function, turning a crash into a readable failure."""
    try:
        return fn(*args, **kwargs)
    except LabCheckFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - every crash becomes a teaching message
        hint = not_implemented_hint(exc) or "your code raised where it should have returned a value"
        raise LabCheckFailure(
            f"{what} raised {type(exc).__name__}: {exc}\n  likely cause: {hint}"
        ) from None


def check_int_tuple(what: str, got: Any, expected: Sequence[int], cause: str = "") -> None:
    """`got` must be a real tuple of real ints equal to `expected`."""
    if type(got) is not tuple:
        fail(what, tuple(expected), got, f"return a tuple, not a {type(got).__name__}")
    bad = [x for x in got if type(x) is not int]
    if bad:
        fail(what, tuple(expected), got,
             f"every entry must be a Python int; found {type(bad[0]).__name__} "
             "(call int(...) on tensor or numpy values)")
    if len(got) != len(expected) or any(a != b for a, b in zip(got, expected)):
        fail(what, tuple(expected), got, cause)


def check_int(what: str, got: Any, expected: int, cause: str = "") -> None:
    if type(got) is not int:
        fail(what, expected, got, f"return a Python int, not a {type(got).__name__}")
    if got != expected:
        fail(what, expected, got, cause)


def check_bool(what: str, got: Any, expected: bool, cause: str = "") -> None:
    if type(got) is not bool:
        fail(what, expected, got, f"return True or False, not a {type(got).__name__}")
    if got is not expected:
        fail(what, expected, got, cause)


def storage_ptr(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def check_view(what: str, got: Any, expected: torch.Tensor, base: torch.Tensor) -> None:
    """`got` must be a tensor equal to `expected` in shape, strides, offset,
    dtype and values, and must share `base`'s storage (a view, not a copy)."""
    if type(got) is not torch.Tensor:
        fail(what, "a torch.Tensor", type(got).__name__, "return the view itself")
    if tuple(got.shape) != tuple(expected.shape):
        fail(f"{what}: shape", tuple(expected.shape), tuple(got.shape),
             "the size argument of as_strided is wrong")
    if got.stride() != expected.stride():
        fail(f"{what}: strides", expected.stride(), got.stride(),
             "the stride argument of as_strided is wrong")
    if got.storage_offset() != expected.storage_offset():
        fail(f"{what}: storage offset", expected.storage_offset(), got.storage_offset(),
             "the view starts at the wrong element: pass t.storage_offset() (plus any shift) "
             "as as_strided's storage_offset, or leave it out to keep the input's offset")
    if got.dtype != expected.dtype or got.device != expected.device:
        fail(f"{what}: dtype/device", (expected.dtype, expected.device), (got.dtype, got.device),
             "a view keeps its base's dtype and device")
    if storage_ptr(got) != storage_ptr(base):
        fail(f"{what}: shares storage with the input", storage_ptr(base), storage_ptr(got),
             "the result is a copy (contiguous(), clone() or a new tensor); build it with as_strided")
    if not torch.equal(got, expected):
        fail(f"{what}: values", expected.tolist(), got.tolist(), "")


def check_raises(what: str, exc_type: type[BaseException], fn: Callable, *args,
                 cause: str = "check the input before building the view", **kwargs) -> str:
    """`fn(*args)` must raise `exc_type` (but not the NotImplementedError of a stub,
    which is a RuntimeError subclass). Returns the error message. `cause` is the
    hint shown when nothing was raised."""
    try:
        fn(*args, **kwargs)
    except NotImplementedError as exc:
        fail(what, f"{exc_type.__name__}", f"NotImplementedError({exc})", not_implemented_hint(exc))
    except exc_type as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001
        fail(what, f"{exc_type.__name__}", f"{type(exc).__name__}({exc})",
             f"raise {exc_type.__name__}, as PyTorch does")
    fail(what, f"{exc_type.__name__} to be raised", "no error", cause)
    return ""


class _AtenRecorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def record_aten_ops(fn: Callable, *args, **kwargs) -> tuple[Any, list[str]]:
    """Run `fn` and return (its result, the aten overloads it dispatched, in order)."""
    with _AtenRecorder() as rec:
        out = fn(*args, **kwargs)
    return out, rec.ops


def check_only_ops(what: str, ops: Iterable[str], allowed: set[str], forbidden_hint: str) -> None:
    extra = [op for op in ops if op not in allowed]
    if extra:
        fail(f"{what}: aten ops dispatched", sorted(allowed), list(ops), forbidden_hint)


def random_shape(rng: random.Random, min_dims: int = 0, max_dims: int = 4, max_size: int = 5,
                 allow_zero: bool = True) -> tuple[int, ...]:
    """A random shape; size-0 and size-1 dims come up often on purpose."""
    ndim = rng.randint(min_dims, max_dims)
    low = 0 if allow_zero else 1
    sizes = []
    for _ in range(ndim):
        r = rng.random()
        if allow_zero and r < 0.1:
            sizes.append(0)
        elif r < 0.3:
            sizes.append(1)
        else:
            sizes.append(rng.randint(max(low, 2), max_size))
    return tuple(sizes)


def random_tensor(rng: random.Random, shape: Sequence[int], dtype: torch.dtype = torch.float32,
                  device: str = "cpu") -> torch.Tensor:
    """A contiguous tensor of `shape` drawn from `rng` alone (not torch's global seed).

    Values are a shuffled 0..numel-1 (as far as `dtype` can hold them), so a wrong
    element usually shows up as a wrong value; bool tensors get random True/False.
    """
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    n = 1
    for s in shape:
        n *= s
    vals = torch.randperm(n, generator=gen)
    if dtype == torch.bool:
        out = vals % 2 == 1
    elif dtype.is_complex:
        out = torch.complex(vals.float(), -vals.float()).to(dtype)
    else:
        out = vals.to(dtype)
    return out.reshape(tuple(shape)).to(device)


def random_view(rng: random.Random, shape: Sequence[int], dtype: torch.dtype = torch.float32,
                device: str = "cpu") -> torch.Tensor:
    """A view of `shape` that is usually neither contiguous nor at storage offset 0.

    It is a stepped slice (steps 1 or 2, starting 0 or 1 elements in) of a bigger
    base whose dims are laid out in a random order, and the base itself starts a
    few elements into its storage. Sometimes (one time in five) it is a plain
    contiguous tensor, so the ordinary case is covered too.
    """
    shape = tuple(int(s) for s in shape)
    if rng.random() < 0.2:
        return random_tensor(rng, shape, dtype, device)
    ndim = len(shape)
    steps = [rng.choice((1, 2)) for _ in shape]
    starts = [rng.choice((0, 1)) for _ in shape]
    base_shape = [st + max(s - 1, 0) * k + 1 + rng.choice((0, 1)) for s, k, st in zip(shape, steps, starts)]
    order = list(range(ndim))
    rng.shuffle(order)  # base_shape[order[j]] is the j-th dim in memory
    pad = rng.randint(0, 3)
    n = 1
    for s in base_shape:
        n *= s
    flat = random_tensor(rng, (pad + n,), dtype, device)
    stored = flat[pad:].view([base_shape[d] for d in order])
    base = stored.permute([order.index(d) for d in range(ndim)])
    view = base[tuple(slice(st, st + s * k, k) for s, k, st in zip(shape, steps, starts))]
    assert tuple(view.shape) == shape
    return view
