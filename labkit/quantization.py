"""Helpers for week 12 (quantization and export): quiet calls, torch's own answers to
compare with, and the quantization-specific checks.

`quiet()` keeps a block silent: no stdout, no stderr, no Python warnings and no
torch log lines (torch.onnx.export prints progress lines and logs warnings; the
quantization APIs warn that they are deprecated).

`torch_roundtrip` asks torch's built-in kernels for the reference answer:
`torch.quantize_per_tensor` / `torch.quantize_per_channel`, then `int_repr()` and
`dequantize()`; `observer_qparams` asks torch's MinMax observers. `rounding_ties`
marks the elements whose `x / scale` sits on (or within a few float32 steps of) a
rounding tie `k + 1/2`: there torch's own CPU kernels disagree with each other from
one build to the next (x86 builds add the zero point before rounding and fuse the
multiply-add in the per-tensor kernel; ARM and CUDA builds round first), so the lab's
bit-for-bit checks skip them and only ask for one of the two neighbours:
`check_quantized` is `labkit.testing.check_tensor` with that allowance, and names the
input element beside the first wrong one. (With a zero point of 0, or an even zero
point and an exact tie, every build agrees: the tests check those bit for bit.)

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

from labkit.testing import check_float, check_int, check_tensor, fail, float32_ulp_order, random_view

__all__ = ["quiet", "fbgemm_build", "torch_roundtrip", "observer_qparams", "torch_dequantize", "rounding_ties",
           "random_floats", "check_quantized", "check_qparams", "check_no_quantized_ops", "names_used"]


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


def observer_qparams(x: torch.Tensor, dtype: torch.dtype, symmetric: bool, axis: int | None = None,
                     reduce_range: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """What torch's observers choose for `x`: `MinMaxObserver` per tensor (`axis=None`), else
    `PerChannelMinMaxObserver` along `axis` (negative counts from the end), with the symmetric or affine
    qscheme and `reduce_range`. Returns `calculate_qparams()`: (scales, zero points) as tensors."""
    with quiet():  # importing torch.ao.quantization, and reduce_range, warn that they are deprecated
        from torch.ao.quantization.observer import MinMaxObserver, PerChannelMinMaxObserver

        if axis is None:
            scheme = torch.per_tensor_symmetric if symmetric else torch.per_tensor_affine
            obs = MinMaxObserver(dtype=dtype, qscheme=scheme, reduce_range=reduce_range)
        else:
            scheme = torch.per_channel_symmetric if symmetric else torch.per_channel_affine
            obs = PerChannelMinMaxObserver(ch_axis=axis % x.dim(), dtype=dtype, qscheme=scheme,
                                           reduce_range=reduce_range)
        obs(x)
        return obs.calculate_qparams()


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


def check_quantized(what: str, got: Any, expected: torch.Tensor, *, inputs: torch.Tensor | None = None,
                    skip: torch.Tensor | None = None, slack: int = 1, ulps: int = 0, cause: str = "") -> None:
    """`labkit.testing.check_tensor` for a quantization result (integer levels, or float32 values within
    `ulps`), plus what only this topic knows:

    skip:   bool mask of the elements where torch's own kernels disagree (a rounding tie): there `got` may
            differ from `expected` by up to `slack` (integer tensors: quantization levels);
    inputs: the input tensor, whose element at the first wrong position is named in the failure.
    """
    comparable = isinstance(got, torch.Tensor) and (got.shape, got.dtype, got.device) == \
        (expected.shape, expected.dtype, expected.device)
    if comparable and expected.numel() and not expected.is_meta:  # else check_tensor says what is wrong
        g, e = got.detach().cpu(), expected.detach().cpu()
        if skip is not None and not e.is_floating_point():
            accept = skip.detach().cpu().expand(e.shape) & ((g.long() - e.long()).abs() <= slack)
            expected = torch.where(accept.to(expected.device), got.detach(), expected)  # either neighbour will do
            e = expected.detach().cpu()
        if inputs is not None and inputs.shape == e.shape:
            if e.dtype == torch.float32:  # the distance check_tensor measures, in units in the last place
                bad = ((float32_ulp_order(g) - float32_ulp_order(e)).abs() > ulps) & ~(g.isnan() & e.isnan())
            else:
                bad = g != e
            if bool(bad.any()):
                where = tuple(int(i) for i in bad.nonzero()[0])
                what = f"{what} [the first wrong element's input: {inputs.detach().cpu()[where].item()!r}]"
    check_tensor(what, got, expected, ulps=ulps, cause=cause)


def check_qparams(what: str, got: Any, scale, zero_point, per_channel: bool = False, cause: str = "") -> None:
    """`got` must be the pair (scale, zero_point): a float and an int per tensor, or, per channel,
    a float32 tensor and an int64 tensor of one value per channel. `scale` and `zero_point` are the
    expected values (an observer's calculate_qparams() will do: one-element tensors per tensor); on the
    meta device (no values) only the shapes, dtypes and devices are compared."""
    shape = "(float32 tensor, int64 tensor)" if per_channel else "(float, int)"
    if type(got) is not tuple or len(got) != 2:
        fail(what, f"a tuple {shape}", got, "return (scale, zero_point) as a tuple of two")
    s, z = got
    if not per_channel:
        check_float(f"{what}: scale", s, float(scale), cause=cause)
        if type(z) is not int:
            fail(f"{what}: zero_point", int(zero_point), z,
                 f"return a Python int, not a {type(z).__name__} (call int(...) on a tensor)")
        check_int(f"{what}: zero_point", z, int(zero_point), cause=cause)
        return
    for name, g, e in ((f"{what}: scale", s, scale.float()), (f"{what}: zero_point", z, zero_point.long())):
        if e.is_meta:  # no values to compare: the kind of tensor, and where it lives
            if not isinstance(g, torch.Tensor) or (g.shape, g.dtype, g.device) != (e.shape, e.dtype, e.device):
                fail(name, f"a tensor of shape {tuple(e.shape)}, {e.dtype}, on {e.device}",
                     f"a tensor of shape {tuple(g.shape)}, {g.dtype}, on {g.device}" if isinstance(g, torch.Tensor)
                     else type(g).__name__,
                     "x is on the meta device (it stands in for a GPU): make every new tensor with "
                     "device=x.device, for instance torch.full(..., device=x.device)")
            continue
        check_tensor(name, g, e, cause=cause)


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
