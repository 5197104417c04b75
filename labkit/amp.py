"""Helpers for week 5 (mixed precision): a dtype-aware op trace and bit-level checks.

`record_op_dtypes` is `labkit.testing.record_aten_ops` with the dtypes of every
tensor that goes into and comes out of each aten op. `check_integer_only` uses it
to enforce "integer ops only": floating-point tensors may be reinterpreted
(`view(dtype)`) or moved around unchanged, never computed with or converted.
`check_same_bits` compares a bfloat16/float16/float32 result with the expected one
bit for bit (NaN-ness only for NaNs) and says which inputs differ and how. Both
checks accept meta tensors (no data): they then check type, dtype, shape and device.

Depends only on torch. Holds no answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from labkit.testing import fail

__all__ = ["OpCall", "record_op_dtypes", "check_integer_only", "bits_of", "check_same_bits",
           "bfloat16_rounding_cause", "check_fields"]


@dataclass(frozen=True)
class OpCall:
    """One aten op a call dispatched, with the dtypes of its tensor inputs and outputs."""

    name: str
    inputs: tuple[torch.dtype, ...]
    outputs: tuple[torch.dtype, ...]

    def __repr__(self) -> str:
        short = lambda ds: ", ".join(str(d).removeprefix("torch.") for d in ds)
        return f"{self.name}({short(self.inputs)}) -> ({short(self.outputs)})"


class _DtypeRecorder(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls: list[OpCall] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        dtypes = lambda tree: tuple(t.dtype for t in tree_leaves(tree) if isinstance(t, torch.Tensor))
        self.calls.append(OpCall(str(func), dtypes((args, kwargs or {})), dtypes(out)))
        return out


def record_op_dtypes(fn: Callable, *args, **kwargs) -> tuple[Any, list[OpCall]]:
    """Run `fn` and return (its result, the aten ops it dispatched with their dtypes, in order)."""
    with _DtypeRecorder() as rec:
        out = fn(*args, **kwargs)
    return out, rec.calls


# Ops that only look at, reshape or move data: they may touch a
# floating-point tensor as long as no dtype changes on the way.
_MOVES = {
    "aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.as_strided.default",
    "aten.t.default", "aten.transpose.int", "aten.permute.default", "aten.expand.default",
    "aten.slice.Tensor", "aten.select.int", "aten.unsqueeze.default", "aten.squeeze.default",
    "aten.squeeze.dim", "aten.squeeze.dims", "aten.detach.default", "aten.alias.default",
    "aten.clone.default", "aten._to_copy.default", "aten.copy_.default", "aten.lift_fresh.default",
    "aten.zero_.default",
}
# Ops that allocate (and maybe fill with a constant) without reading their input's values: any dtypes.
_ALLOCATES = {"aten.empty.memory_format", "aten.empty_like.default", "aten.empty_strided.default",
              "aten.new_empty.default", "aten.new_empty_strided.default", "aten.zeros.default",
              "aten.zeros_like.default", "aten.ones_like.default", "aten.full.default", "aten.full_like.default",
              "aten.new_zeros.default", "aten.new_full.default"}
_REINTERPRET = "aten.view.dtype"  # same bits, another dtype: the one way across


def _is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point or dtype.is_complex


def integer_only_violations(calls: Iterable[OpCall]) -> list[OpCall]:
    """The calls that compute with, or convert, a floating-point tensor."""
    bad = []
    for c in calls:
        floats = {d for d in c.inputs + c.outputs if _is_float(d)}
        if not floats or c.name == _REINTERPRET or c.name in _ALLOCATES:
            continue
        if c.name in _MOVES and len(set(c.inputs + c.outputs)) == 1:
            continue  # moved or viewed, same dtype in and out
        bad.append(c)
    return bad


def check_integer_only(what: str, calls: list[OpCall], hint: str) -> None:
    """Fail unless every op in `calls` works on integer/bool tensors, apart from
    reinterpreting bits (`view(dtype)`) and moving data without a dtype change."""
    bad = integer_only_violations(calls)
    if bad:
        fail(f"{what}: aten ops that compute with or convert floating-point tensors",
             "integer/bool ops only, plus view(dtype) to reinterpret bits", bad[:4], hint)


def bits_of(t: torch.Tensor) -> torch.Tensor:
    """The bit patterns of a float32/float16/bfloat16 tensor as non-negative int64 values."""
    width = {4: (torch.int32, 0xFFFFFFFF), 2: (torch.int16, 0xFFFF)}[t.element_size()]
    return t.detach().view(width[0]).to(torch.int64) & width[1]


_DEVICE_CAUSE = ("keep the input's device: derive every tensor from x, or pass device=x.device to a new one "
                 "(torch.full, torch.zeros, torch.tensor...); the tests use the meta device to stand in for a GPU")


def _hex(value: int, dtype: torch.dtype) -> str:
    return f"0x{value:0{2 * torch.empty((), dtype=dtype).element_size()}X}"


def bfloat16_rounding_cause(in_bits: int, want: int, got: int) -> str:
    """A likely cause for one float32 -> bfloat16 mismatch (all three are bit patterns)."""
    magnitude, dropped, kept = in_bits & 0x7FFFFFFF, in_bits & 0xFFFF, in_bits >> 16
    if magnitude > 0x7F800000:
        return ("a NaN (exponent all ones, mantissa not zero) must give a NaN: a rounding carry can turn "
                "a NaN into inf, or wrap into the sign bit")
    if (got ^ want) == 0x8000:
        return "the sign bit is wrong"
    if (want & 0x7FFF) == 0x7F80 and magnitude < 0x7F800000:
        return "this finite value rounds up past the largest bfloat16: the carry must reach inf"
    if (got & 0x7FFF) > 0x7F80:
        return "a number that is not NaN came back as NaN"
    if dropped == 0x8000:
        return ("a tie (the 16 dropped bits are exactly 0x8000): round to the neighbour whose last kept bit "
                "is 0 (ties to even)")
    if got == kept and want == kept + 1:
        return "rounded toward zero: the dropped bits were more than half an ulp, so round away from zero"
    if got == kept + 1 and want == kept:
        return "rounded away from zero although the dropped bits were less than half an ulp"
    return "round to nearest, ties to even, on the bit pattern"


def check_same_bits(what: str, x: torch.Tensor, got: Any, expected: torch.Tensor,
                    cause: Callable[[int, int, int], str] | None = None) -> None:
    """`got` must be a tensor like `expected` (type, dtype, shape, device) holding the same bit
    patterns, except that where `expected` is NaN any NaN will do. `cause(in_bits, want, got)`
    explains one mismatch (ints: the input's bit pattern, the expected and the returned bits).
    On the meta device only the type, dtype, shape and device are checked."""
    cause = cause or (lambda a, b, c: "compare the bit patterns")
    if type(got) is not torch.Tensor:
        fail(what, f"a torch.Tensor of {expected.dtype}", type(got).__name__, "return the converted tensor")
    if got.dtype != expected.dtype:
        fail(f"{what}: dtype", expected.dtype, got.dtype, f"the result must be a {expected.dtype} tensor")
    if tuple(got.shape) != tuple(expected.shape):
        fail(f"{what}: shape", tuple(expected.shape), tuple(got.shape), "keep the input's shape")
    if got.device != expected.device:
        fail(f"{what}: device", expected.device, got.device, _DEVICE_CAUSE)
    if expected.is_meta:
        return  # a meta tensor has a shape and a dtype but no values
    want_nan, got_nan = torch.isnan(expected), torch.isnan(got)
    wrong = (want_nan != got_nan) | (~want_nan & (bits_of(got) != bits_of(expected)))
    n_wrong = int(wrong.sum())
    if n_wrong == 0:
        return
    idx = wrong.reshape(-1).nonzero()[:3].reshape(-1).tolist()
    xb, wb, gb = (bits_of(t).reshape(-1)[idx].tolist() for t in (x, expected, got))
    xv, wv, gv = (t.detach().reshape(-1)[idx].double().tolist() for t in (x, expected, got))
    rows = [f"input {_hex(a, x.dtype)} ({av!r}): expected {_hex(b, expected.dtype)} ({bv!r}), "
            f"got {_hex(c, got.dtype)} ({cv!r}); {cause(a, b, c)}"
            for a, b, c, av, bv, cv in zip(xb, wb, gb, xv, wv, gv)]
    fail(f"{what}: {n_wrong} of {expected.numel()} elements differ; the first ones:\n    " + "\n    ".join(rows),
         "the same bits (any NaN where NaN is expected)", f"{n_wrong} elements differ",
         "see the lines above")


# (exponent bits, mantissa bits, exponent bias): the formats' published layouts
_FIELD_LAYOUT = {torch.float32: (8, 23, 127), torch.float16: (5, 10, 15), torch.bfloat16: (8, 7, 127)}


def _field_cause(field: str, dtype: torch.dtype, want: int, got: int) -> str:
    _, n_mant, bias = _FIELD_LAYOUT.get(dtype, (0, 0, 0))
    if field == "sign" and got == -1:
        return "a right shift of a negative signed integer fills with copies of the sign bit: mask with & 1"
    if field == "exponent" and got == want - bias:
        return "return the stored exponent field (biased), not exponent - bias"
    if field == "mantissa" and got - want == 1 << n_mant:
        return "the mantissa field has no implicit leading 1: return the stored bits only"
    if got < 0:
        return "a negative field: the bits of a 16-bit format were sign-extended; mask after widening"
    return f"the {field} field of a {str(dtype).removeprefix('torch.')} has the widths in the table above"


def check_fields(what: str, x: torch.Tensor, got: Any, expected: tuple[torch.Tensor, ...]) -> None:
    """`got` must be a tuple of three int32 tensors (sign, exponent, mantissa) equal to `expected`,
    with x's shape and device. A mismatch names the field, the input's bits and a likely cause.
    With x on the meta device only the types, dtypes, shapes and devices are checked."""
    if type(got) is not tuple or len(got) != 3:
        fail(what, "a tuple (sign, exponent, mantissa)", type(got).__name__ if type(got) is not tuple
             else f"a tuple of {len(got)}", "return the three fields as a tuple of three tensors")
    for name, g, want in zip(("sign", "exponent", "mantissa"), got, expected):
        if type(g) is not torch.Tensor:
            fail(f"{what}: {name}", "a torch.Tensor", type(g).__name__, "return tensors, not Python numbers")
        if g.dtype != torch.int32:
            fail(f"{what}: {name} dtype", torch.int32, g.dtype, "convert each field with .to(torch.int32)")
        if tuple(g.shape) != tuple(x.shape):
            fail(f"{what}: {name} shape", tuple(x.shape), tuple(g.shape), "each field has the input's shape")
        if g.device != x.device:
            fail(f"{what}: {name} device", x.device, g.device, _DEVICE_CAUSE)
        if x.is_meta:
            continue  # a meta tensor has a shape and a dtype but no values
        wrong = g != want
        if bool(wrong.any()):
            i = int(wrong.reshape(-1).nonzero()[0])
            xb = int(bits_of(x).reshape(-1)[i])
            gv, wv = int(g.reshape(-1)[i]), int(want.reshape(-1)[i])
            fail(f"{what}: {name} of the element with bits {_hex(xb, x.dtype)} "
                 f"({float(x.detach().reshape(-1)[i])!r}, {int(wrong.sum())} elements differ)",
                 wv, gv, _field_cause(name, x.dtype, wv, gv))
