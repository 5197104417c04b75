"""Helpers for week 12 (quantization and export): quiet calls, torch's own round trips
to compare with, and bit-level tensor checks that say where two tensors differ.

`quiet()` keeps a block silent: no stdout, no stderr, no Python warnings and no
torch log lines (torch.onnx.export prints progress lines and logs warnings; the
quantization APIs warn that they are deprecated).

`torch_roundtrip` asks torch's built-in kernels for the reference answer:
`torch.quantize_per_tensor` / `torch.quantize_per_channel`, then `int_repr()` and
`dequantize()`. `rounding_ties` marks the elements whose `x / scale` sits on (or
within a few float32 steps of) a rounding tie `k + 1/2`: there torch's own CPU
kernels disagree with each other from one build to the next (x86 builds add the
zero point before rounding and fuse the multiply-add in the per-tensor kernel;
ARM and CUDA builds round first), so the lab's bit-for-bit checks skip them and
only ask for one of the two neighbours.

Depends only on torch. Holds no answers.
"""

from __future__ import annotations

import contextlib
import io
import logging
import random
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import torch

from labkit.testing import fail, random_view

__all__ = ["quiet", "fbgemm_build", "torch_roundtrip", "torch_dequantize", "rounding_ties", "random_floats",
           "check_tensor", "check_qparams", "check_float", "check_python_bool", "check_no_quantized_ops", "names_used"]


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    """Run a block with stdout, stderr, warnings and torch's loggers silenced.

    Yields the StringIO that collected stdout and stderr, should a test want to look.
    """
    previous = logging.root.manager.disable
    sink = io.StringIO()
    logging.disable(logging.CRITICAL)  # every logger, torch's (torch.onnx, torch.export) included
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield sink
    finally:
        logging.disable(previous)


def fbgemm_build() -> bool:
    """True on torch builds whose quantized CPU kernels come from fbgemm (x86 wheels)."""
    return "fbgemm" in torch.backends.quantized.supported_engines


def _along(v, x: torch.Tensor, axis: int | None, dtype: torch.dtype) -> torch.Tensor:
    """`v` (a number, or one value per channel) shaped to broadcast against `x`."""
    t = torch.as_tensor(v, dtype=dtype, device=x.device)
    if axis is None:
        return t
    shape = [1] * x.dim()
    shape[axis % x.dim()] = -1
    return t.reshape(shape)


def torch_roundtrip(x: torch.Tensor, scale, zero_point, dtype: torch.dtype, axis: int | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """(int_repr, dequantized) of `x` quantized by torch's built-in kernel.

    Per tensor (`axis=None`): `scale` a float, `zero_point` an int. Per channel: one
    value per index of dim `axis` (negative counts from the end), as tensors.
    """
    with quiet():
        if axis is None:
            q = torch.quantize_per_tensor(x, float(scale), int(zero_point), dtype)
        else:
            q = torch.quantize_per_channel(x, torch.as_tensor(scale, device=x.device).double(),
                                           torch.as_tensor(zero_point, device=x.device).long(),
                                           axis % x.dim(), dtype)
        return q.int_repr(), q.dequantize()


def torch_dequantize(q: torch.Tensor, scale, zero_point, axis: int | None = None) -> torch.Tensor:
    """torch's own dequantization of the integer tensor `q` (int8 or uint8), per tensor or per channel."""
    with quiet():
        if axis is None:
            qt = torch._make_per_tensor_quantized_tensor(q, float(scale), int(zero_point))
        else:
            qt = torch._make_per_channel_quantized_tensor(q, torch.as_tensor(scale, device=q.device).double(),
                                                          torch.as_tensor(zero_point, device=q.device).long(),
                                                          axis % q.dim())
        return qt.dequantize()


def rounding_ties(x: torch.Tensor, scale, axis: int | None = None, steps: int = 4) -> torch.Tensor:
    """Bool mask: where `x / scale` lies within `steps` float32 steps of a tie k + 1/2.

    `scale` as for `torch_roundtrip`. Computed in float64 from float32(scale).
    """
    s = _along(scale, x, axis, torch.float32).double()
    t = x.detach().double() / s
    dist = (t - torch.floor(t) - 0.5).abs()
    return dist <= steps * (t.abs() + 256.0) * 2.0**-24


def random_floats(rng: random.Random, shape: Sequence[int], scale: float = 1.0, shift: float = 0.0,
                  dtype: torch.dtype = torch.float32, device: str = "cpu") -> torch.Tensor:
    """Normal random values * scale + shift, drawn from `rng` alone, laid out as `random_view`
    lays out its views (usually non-contiguous, at a non-zero storage offset)."""
    view = random_view(rng, shape, dtype, device)
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    values = torch.randn(tuple(shape), generator=gen, dtype=torch.float64) * scale + shift
    view.copy_(values.to(dtype))
    return view


def _ordered_bits(t: torch.Tensor) -> torch.Tensor:
    """float32 values as int64s that count representable floats (so b - a is a distance in ulps)."""
    b = t.contiguous().view(torch.int32).long()
    return torch.where(b < 0, -(b & 0x7FFFFFFF), b)


def check_tensor(what: str, got, expected: torch.Tensor, *, skip: torch.Tensor | None = None,
                 slack: int = 1, ulps: int = 0, inputs: torch.Tensor | None = None, cause: str = "") -> None:
    """`got` must be a real torch.Tensor with `expected`'s dtype, shape and device and the same values.

    skip:   bool mask of elements where torch itself is ambiguous; there `got` may differ from
            `expected` by at most `slack` (integer tensors: one quantization level).
    ulps:   float32 results may differ by this many units in the last place (0: bit for bit).
    inputs: the input tensor, shown beside the first wrong element.
    """
    if type(got) is not torch.Tensor:
        fail(what, f"a torch.Tensor of dtype {expected.dtype}", type(got).__name__,
             "return a tensor, not a number, list, numpy array or quantized-tensor wrapper")
    if got.dtype != expected.dtype:
        fail(f"{what}: dtype", expected.dtype, got.dtype,
             "int8 for qint8, uint8 for quint8, float32 for dequantized values")
    if tuple(got.shape) != tuple(expected.shape):
        fail(f"{what}: shape", tuple(expected.shape), tuple(got.shape), "the result has the input's shape")
    if got.device != expected.device:
        fail(f"{what}: device", expected.device, got.device, "keep the result on the input's device")
    if expected.numel() == 0:
        return
    g, e = got.detach().cpu(), expected.detach().cpu()
    if e.is_floating_point():
        dist = (_ordered_bits(g.float()) - _ordered_bits(e.float())).abs()
        bad = dist > ulps
    else:
        dist = (g.long() - e.long()).abs()
        bad = dist > 0
    if skip is not None:
        skip = skip.detach().cpu().expand(e.shape)
        bad = torch.where(skip, dist > slack, bad)
    if not bool(bad.any()):
        return
    where = tuple(int(i) for i in bad.nonzero()[0])
    detail = f"{int(bad.sum())} of {e.numel()} elements differ; the first at index {where}"
    if inputs is not None:
        detail += f", where the input is {inputs.detach().cpu()[where].item()!r}"
    fail(f"{what}: values ({detail})", e[where].item(), g[where].item(), cause)


def check_float(what: str, got: Any, expected: float, rel: float = 0.0, cause: str = "") -> None:
    """`got` must be a Python float equal to `expected` (within `rel`, relative)."""
    if type(got) is not float:
        fail(what, expected, got, f"return a Python float, not a {type(got).__name__} (call float(...) on a tensor)")
    if abs(got - expected) > rel * abs(expected) and not (got == expected):
        fail(what, expected, got, cause)


def check_python_bool(what: str, got: Any, expected: bool, cause: str = "") -> None:
    """`got` must be the Python bool `expected` (NumPy's numpy.bool_, whose class is also named
    `bool`, does not count: its full name is shown)."""
    if type(got) is not bool:
        kind = f"{type(got).__module__}.{type(got).__qualname__}"
        fail(what, expected, f"{got!r} of type {kind}",
             "return a Python bool: a NumPy comparison gives numpy.bool_, convert it with bool(...)")
    if got is not expected:
        fail(what, expected, got, cause)


def check_qparams(what: str, got: Any, scale, zero_point, per_channel: bool = False, cause: str = "") -> None:
    """`got` must be the pair (scale, zero_point): a float and an int per tensor, or, per channel,
    a float32 tensor and an int64 tensor of one value per channel. `scale` and `zero_point` are the
    expected values (an observer's calculate_qparams() will do: one-element tensors per tensor)."""
    shape = "(float32 tensor, int64 tensor)" if per_channel else "(float, int)"
    if type(got) is not tuple or len(got) != 2:
        fail(what, f"a tuple {shape}", got, "return (scale, zero_point) as a tuple of two")
    s, z = got
    if not per_channel:
        check_float(f"{what}: scale", s, float(scale), cause=cause)
        if type(z) is not int:
            fail(f"{what}: zero_point", int(zero_point), z,
                 f"return a Python int, not a {type(z).__name__} (call int(...) on a tensor)")
        if z != int(zero_point):
            fail(f"{what}: zero_point", int(zero_point), z, cause)
        return
    check_tensor(f"{what}: scale", s, scale.float(), cause=cause)
    check_tensor(f"{what}: zero_point", z, zero_point.long(), cause=cause)


_QUANTIZED_OPS = ("quantize", "int_repr", "q_scale", "q_zero_point", "q_per_channel", "_make_per",
                  "choose_qparams")


def check_no_quantized_ops(what: str, ops: Iterable[str], hint: str) -> None:
    """No aten op in `ops` may be one of torch's quantization kernels (quantize_per_tensor,
    fake_quantize_*, dequantize, int_repr, ...): the lab rebuilds them from ordinary ops."""
    used = [op for op in ops if any(key in op for key in _QUANTIZED_OPS)]
    if used:
        fail(f"{what}: aten ops dispatched", "ordinary tensor ops only (mul, add, round, clamp, to, ...)",
             sorted(set(used)), hint)


def names_used(fn: Callable) -> set[str]:
    """Every global, attribute and imported name that `fn`'s code refers to (its nested functions'
    too), read from its code objects: docstrings and comments do not count, and no source is needed."""
    names: set[str] = set()
    todo = [fn.__code__]
    while todo:
        code = todo.pop()
        for name in code.co_names:
            names.update(name.split("."))  # `import torch.ao.quantization` names one dotted module
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return names
