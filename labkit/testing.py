"""Checks used by the labs' test cells: the one home of the generic checks.

Every failure says what was expected, what came back and the likely cause, so a
learner reading a red cell knows where to look. The checks never trust the
object under test: types are checked before values, so an answer object whose
`__eq__` always returns True cannot pass for a tuple or a tensor.

The generic set, used by every lab, takes `what` (the call being checked, as the
learner would write it), the value that came back and the expected value, and
everything else by keyword:

    check_int, check_bool, check_int_tuple     exact Python values
    check_float(..., rel=, abs=)               a Python float (inf and nan handled)
    check_tensor(..., rtol=, atol=, ulps=)     a real tensor: shape, dtype, device, values
    check_close(..., rtol=, atol=)             check_tensor with a tolerance that must be stated
    check_gradients(..., rtol=, atol=)         one gradient per input, in order
    check_raises(what, exc_type, fn, *args)    the error a rule asks for, never a stub's

Lab modules (labkit.allocator, labkit.amp, ...) hold only the checks of their own topic.
"""

from __future__ import annotations

import math
import random
import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

KNOWN_NOTE = "\n  this looks like a known mistake: "


class LabCheckFailure(AssertionError):
    """A test expectation that did not hold, with a message written for learners; and, when this exact message
    is one a known wrong answer of the lab produces (`known_mistake`), that mistake in the instructor's words.
    Every check raises it (`fail` and the labkit modules' own checks alike), so Validate names a known mistake
    whichever check caught it."""

    def __init__(self, text: object = "", *args):
        text = str(text)
        base = text.split(KNOWN_NOTE, 1)[0]  # unpickled (from a rank's process): the words are already there
        self.signature = failure_signature(base)  # the quality run collects it from the lab's wrong answers
        known = "" if base != text else known_mistake(self.signature)
        # wrapped: nbgrader's Validate cuts every line of a failure at about 90 characters
        note = textwrap.fill(KNOWN_NOTE.lstrip("\n ") + known, width=76, initial_indent="  ",
                             subsequent_indent="    ", break_on_hyphens=False) if known else ""
        super().__init__(text + (f"\n{note}" if note else ""), *args)


def fail(what: str, expected: Any, got: Any, cause: str = "") -> None:
    """Raise a failure that reads: what was checked, expected, got, likely cause (and a known mistake's words,
    where the message is one: `LabCheckFailure`)."""
    lines = [what, f"  expected: {expected!r}", f"  got:      {got!r}"]
    if cause:
        lines.append(f"  likely cause: {cause}")
    raise LabCheckFailure("\n".join(lines))


KNOWN_MISTAKES = "known-mistakes.json"  # beside a released lab notebook (make student-dist writes it)


def failure_signature(text: str) -> str:
    """A short digest of a visible check's failure message: two answers that fail a check with the same message
    went wrong the same way on it."""
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def known_mistake(signature: str, folder: str | None = None) -> str:
    """The known mistake whose wrong answer fails a visible check with exactly this message, from the released
    lab's known-mistakes.json ({signature: words}); "" when none is known (or the file is not there)."""
    import json
    import os

    path = os.path.join(folder or os.getcwd(), KNOWN_MISTAKES)
    try:
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
    except (OSError, ValueError):
        return ""
    words = table.get(signature, "") if isinstance(table, dict) else ""
    return words if isinstance(words, str) else ""


def not_implemented_hint(exc: BaseException) -> str:
    """The stub's hint, for the bare `raise NotImplementedError()` the student notebook starts with; a
    NotImplementedError with a message (torch's "Cannot copy out of meta tensor", ...) is a real error."""
    if isinstance(exc, NotImplementedError) and not str(exc).strip():
        return "the function still raises NotImplementedError: replace the stub with your code"
    if isinstance(exc, NotImplementedError):
        return "an operation your code called is not implemented for these inputs (read the message)"
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


def check_int_tuple(what: str, got: Any, expected: Sequence[int], *, cause: str = "") -> None:
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


def check_int(what: str, got: Any, expected: int, *, cause: str = "") -> None:
    if type(got) is not int:
        fail(what, expected, got, f"return a Python int, not a {type(got).__name__}")
    if got != expected:
        fail(what, expected, got, cause)


def check_bool(what: str, got: Any, expected: bool, *, cause: str = "") -> None:
    """`got` must be the Python bool `expected` (numpy.bool_ and 0/1 do not count)."""
    if type(got) is not bool:
        kind = f"{type(got).__module__}.{type(got).__qualname__}" if type(got).__module__ != "builtins" \
            else type(got).__name__
        fail(what, expected, f"{got!r} of type {kind}",
             "return True or False: a NumPy or tensor comparison gives numpy.bool_ or a tensor, convert it "
             "with bool(...)")
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
                 cause: str = "check the input before building the view", needs_message: bool = False,
                 **kwargs) -> str:
    """`fn(*args, **kwargs)` must raise `exc_type` (but not the NotImplementedError of a stub,
    which is a RuntimeError subclass). Returns the error message. `cause` is the hint
    shown when nothing was raised; `needs_message`: an empty message fails too."""
    try:
        fn(*args, **kwargs)
    except NotImplementedError as exc:
        fail(what, f"{exc_type.__name__}", f"NotImplementedError({exc})", not_implemented_hint(exc))
    except exc_type as exc:
        if needs_message and not str(exc).strip():
            fail(f"{what}: error message", "a message that names the problem", str(exc),
                 f"raise {exc_type.__name__}('...') with a message")
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


# ---- numbers, tensors, gradients: the generic checks every lab uses ---------------------------------

def check_float(what: str, got: Any, expected: float, *, rel: float = 0.0, abs: float = 0.0,  # noqa: A002
                cause: str = "") -> None:
    """`got` must be a Python float (not a bool, int, numpy or tensor scalar) within `rel`
    (relative) or `abs` of `expected`; inf must match inf of the same sign, nan matches nan."""
    if type(got) is not float:
        fail(what, expected, got, f"return a Python float, not a {type(got).__name__} "
                                  "(call float(...) on a tensor or numpy value)")
    if math.isnan(expected) or math.isnan(got) or math.isinf(expected) or math.isinf(got):
        if not (got == expected or (math.isnan(expected) and math.isnan(got))):
            fail(what, expected, got, cause)
        return
    if not math.isclose(got, expected, rel_tol=rel, abs_tol=abs):
        fail(what, expected, got, cause)


def float32_ulp_order(x: torch.Tensor) -> torch.Tensor:
    """float32 bit patterns mapped to integers that grow with the value (distance = ulps)."""
    bits = x.contiguous().view(torch.int32).long()
    return torch.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


def check_tensor(what: str, got: Any, expected: torch.Tensor, *, rtol: float = 0.0, atol: float = 0.0,
                 ulps: int | None = None, device: bool = True, cause: str = "") -> None:
    """`got` must be a real torch.Tensor (a subclass that overrides `==` does not count) with
    `expected`'s shape, dtype and device, and its values:

    - equal, by default (nan where `expected` has nan; -0.0 equals 0.0);
    - within `rtol`/`atol` when either is given (computed in float64);
    - within `ulps` units in the last place, for float32 (0: bit for bit).

    On the meta device (a stand-in for a GPU on a CPU grader) only the kind is compared.

    The failure names how many elements differ and shows the first one.
    """
    if not isinstance(got, torch.Tensor) or type(got).__eq__ is not torch.Tensor.__eq__:
        fail(what, f"a torch.Tensor of dtype {expected.dtype}", type(got).__name__,
             "return the tensor itself, not a number, list or numpy array")
    if tuple(got.shape) != tuple(expected.shape):
        fail(f"{what}: shape", tuple(expected.shape), tuple(got.shape), cause or "the result has the wrong shape")
    if got.dtype != expected.dtype:
        fail(f"{what}: dtype", expected.dtype, got.dtype,
             cause or "allocate the result with the dtype the contract names (often the input's: dtype=x.dtype)")
    if device and got.device != expected.device:
        fail(f"{what}: device", expected.device, got.device, "keep the result on the device its input came from")
    if expected.numel() == 0 or "meta" in (got.device.type, expected.device.type):
        return  # a meta tensor has no values: its kind is all there is to check
    g, e = got.detach().cpu(), expected.detach().cpu()
    if ulps is not None and e.dtype == torch.float32:
        bad = (float32_ulp_order(g) - float32_ulp_order(e)).abs() > ulps
        bad &= ~(g.isnan() & e.isnan())
    elif e.is_floating_point() or e.is_complex():
        gd, ed = (g.to(torch.complex128), e.to(torch.complex128)) if e.is_complex() else (g.double(), e.double())
        if rtol or atol:
            bad = ~torch.isclose(gd, ed, rtol=rtol, atol=atol, equal_nan=True)
        else:
            bad = ~((gd == ed) | (gd.isnan() & ed.isnan()))
    else:
        bad = g != e
    if not bool(bad.any()):
        return
    where = tuple(int(i) for i in bad.nonzero()[0])
    tol = f" (within rtol={rtol:g}, atol={atol:g})" if rtol or atol else f" (within {ulps} ulps)" if ulps else ""
    fail(f"{what}: values ({int(bad.sum())} of {e.numel()} elements differ; the first at index {where})",
         f"{e[where].item()!r}{tol}", g[where].item(), cause)


def check_close(what: str, got: Any, expected: torch.Tensor, *, rtol: float, atol: float, device: bool = True,
                cause: str = "") -> None:
    """check_tensor with a tolerance, which every caller states (there is no silent default)."""
    check_tensor(what, got, expected, rtol=rtol, atol=atol, device=device, cause=cause)


def check_gradients(what: str, got: Any, expected: Sequence[torch.Tensor | None], *, kind: type = tuple,
                    rtol: float = 0.0, atol: float = 0.0, cause: str = "") -> None:
    """`got` must be a `kind` (tuple or list) with one entry per expected gradient, in order:
    None exactly where `expected` has None, else a tensor that passes check_tensor against it
    (with the tolerance given) and does not itself require grad."""
    if type(got) is not kind:
        fail(f"{what}: return type", f"a {kind.__name__} of {len(expected)} gradients", type(got).__name__,
             f"return {kind.__name__}(...) with one gradient per input, in order")
    if len(got) != len(expected):
        fail(f"{what}: number of gradients", len(expected), len(got), "one gradient per input, in order")
    for i, (g, e) in enumerate(zip(got, expected)):
        if e is None:
            if g is not None:
                fail(f"{what}: gradient {i}", None, type(g).__name__, cause or "this input gets no gradient")
            continue
        if g is None:
            fail(f"{what}: gradient {i}", f"a tensor of shape {tuple(e.shape)}", None,
                 cause or "this input has a gradient")
        check_tensor(f"{what}: gradient {i}", g, e, rtol=rtol, atol=atol, cause=cause)
        if g.requires_grad and not e.requires_grad:
            fail(f"{what}: gradient {i} requires_grad", False, True,
                 "compute gradients under torch.no_grad() unless a graph of the gradient was asked for")
