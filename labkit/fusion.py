"""Watching Triton kernels: count their launches, check their memory accesses, compile them for a GPU.

`record_launches()` is a context manager that records every Triton kernel launch made inside it, as
`Launch(kernel, grid, interpreted)`:

    with record_launches() as launches:
        out = my_function(x)
    assert len(launches) == 1 and launches[0].grid == (4, 1, 1)

How it counts: a launch `kernel[grid](*args)` always ends in the `run(*args, grid=..., warmup=False)`
method of the kernel object, an `InterpretedFunction` under the interpreter (`TRITON_INTERPRET=1`) or a
`JITFunction` when compiled. The context manager wraps both classes' `run` for its duration, so it counts
the launches of every kernel, whatever its name. Calls of one `@triton.jit` function from inside another are
not launches and are not counted. An `@triton.autotune`d kernel also launches once per config while it
tunes (the first call for each new key), each launch recorded with the config's values in `Launch.constexprs`.

Each `Launch` also keeps the launch's `tl.constexpr` arguments (`constexprs`, such as `{"BLOCK": 64}`) and,
under the interpreter, how many elements its loads read and its stores wrote on active lanes (`traffic`,
`{"loaded": n, "stored": n}`): a kernel that reads its input twice loads `2 * numel` elements.

Under the interpreter it also checks each launch, before any of its programs run:
- `check_compiles`: the kernel must also compile for a real GPU. The interpreter runs a kernel as Python
  and accepts things the Triton compiler rejects (the classic one: reading a plain global variable such
  as `BLOCK = 1024` inside the kernel). The kernel's front end is compiled for an NVIDIA sm_80 target with
  the launch's argument types; no GPU is needed for that. A rejection raises `WouldNotCompile`. (When the
  kernel's source is not available, as for code run with exec(), only the compiler's rule on global
  variables is checked, on the kernel's bytecode.)
- `check_bounds`: every address a `tl.load` or `tl.store` touches (on its active, unmasked lanes) must be
  an element of one of the launch's tensor arguments. The interpreter itself reads and writes raw memory
  without any check: a missing mask silently reads junk, and a store past the end of a tensor corrupts the
  heap and can crash the Python process much later. A bad access raises `OutOfBoundsAccess` instead,
  naming the kernel, the program and the tensor it missed.

Import this module only after deciding on the interpreter: `os.environ["TRITON_INTERPRET"] = "1"` must be
set before triton is first imported for `@triton.jit` to build interpreted kernels, and this module imports
triton. Importing it also mends two things that would break a later compile in the same process
(`check_compiles`, `gpu_ttir`): in triton 3.7's interpreter, a call of a @triton.jit function from inside a
kernel (tl.max, tl.sum, your own helpers) patches triton.language and never puts it back; and inductor's
compile workers clear Python's linecache, where the source of a kernel defined in a notebook cell lives, so
the source of each interpreted kernel is saved when it is defined.

`torch_math_ops(ops)` picks, from an ATen op trace (`labkit.testing.record_aten_ops`), the ops that do
arithmetic (a fused function's math belongs in its kernel). The generic checks (`check_close`, `check_raises`)
are in `labkit.testing`.

`kernel_source(kernel)` returns a kernel's source, even after inductor cleared linecache.

`gpu_ttir(kernel, signature, constexprs)` returns the Triton IR the compiler front end makes of a kernel,
and `compile_for_gpu(...)` runs the whole compiler down to PTX and a cubin, both without a GPU.

Depends on torch, numpy and triton. Holds no lab answers.
"""

from __future__ import annotations

import contextlib
import inspect
import linecache
import sys
from dataclasses import dataclass, field

import numpy as np
import torch
import triton  # after TRITON_INTERPRET is decided (see above)

__all__ = ["Launch", "OutOfBoundsAccess", "WouldNotCompile", "compile_for_gpu", "gpu_ttir", "kernel_source",
           "record_launches", "torch_math_ops"]

DEFAULT_ARCH = 80  # sm_80 (A100): what `check_compiles` and `gpu_ttir` target

_POINTER_TYPES = {
    torch.float32: "*fp32", torch.float16: "*fp16", torch.bfloat16: "*bf16", torch.float64: "*fp64",
    torch.int8: "*i8", torch.int16: "*i16", torch.int32: "*i32", torch.int64: "*i64", torch.uint8: "*u8",
    torch.bool: "*i1",
}


class OutOfBoundsAccess(RuntimeError):
    """A tl.load/tl.store touched memory that is no element of any tensor argument of the launch."""


class WouldNotCompile(RuntimeError):
    """A kernel the interpreter runs, but the Triton compiler rejects."""


@dataclass(frozen=True)
class Launch:
    kernel: str  # the @triton.jit function's name
    grid: tuple[int, int, int]  # programs along each axis, padded with 1s
    interpreted: bool  # True under TRITON_INTERPRET=1
    # the launch's tl.constexpr arguments by name (BLOCK=..., an autotuner's config included)
    constexprs: dict = field(default_factory=dict, compare=False, repr=False)
    # under the interpreter, filled in as the programs run: elements read by tl.load and written by tl.store on
    # active (unmasked) lanes, {"loaded": n, "stored": n}; empty for a compiled launch
    traffic: dict = field(default_factory=dict, compare=False, repr=False)


# ---- compiling for a GPU, without one ----

def _target(arch: int):
    from triton.backends.compiler import GPUTarget

    return GPUTarget("cuda", arch, 32)


_SOURCES: dict[str, tuple] = {}  # source file name -> its linecache entry, saved when a kernel was defined


def _remember_source(fn) -> None:
    """Keep the source lines of a kernel defined in a notebook cell. The compiler reads a kernel's source
    (inspect.getsourcelines), which for a cell lives only in linecache; inductor's compile workers call
    linecache.clearcache(), after which the source of every earlier cell is gone."""
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    entry = linecache.cache.get(filename) if filename else None
    if entry is not None and len(entry) == 4:
        _SOURCES[filename] = entry


def kernel_source(kernel) -> str:
    """The source of a @triton.jit kernel (interpreted or compiled, autotuned or not), even after inductor's
    compile workers cleared linecache: for printing a kernel beside the code inductor writes."""
    fn = kernel
    while hasattr(fn, "fn"):
        fn = fn.fn
    _restore_source(fn)
    return inspect.getsource(fn)


def _restore_source(fn) -> None:
    filename = getattr(getattr(fn, "__code__", None), "co_filename", None)
    if filename in _SOURCES and filename not in linecache.cache:
        linecache.cache[filename] = _SOURCES[filename]


def _jit(fn, **kwargs):
    """JITFunction(fn), putting fn's source back into linecache first if it was cleared."""
    from triton.runtime.jit import JITFunction

    _restore_source(fn)
    return JITFunction(fn, **kwargs)


def _source(kernel, signature: dict, constexprs: dict | None):
    from triton.compiler import ASTSource

    fn = getattr(kernel, "fn", kernel)  # an InterpretedFunction/JITFunction, or the plain Python function
    while hasattr(fn, "fn"):  # autotuners and heuristics wrap the jit function
        fn = fn.fn
    return ASTSource(_jit(fn), dict(signature), dict(constexprs or {}))


def gpu_ttir(kernel, signature: dict, constexprs: dict | None = None, arch: int = DEFAULT_ARCH,
             debug: bool = False) -> str:
    """The Triton IR (TTIR) the compiler's front end makes of `kernel` for an NVIDIA GPU of compute
    capability `arch` (80 = A100, 90 = H100). Runs on any machine.

    `signature` maps every argument name to its type: "*fp32" (a pointer to float32), "i32", "fp32", or
    "constexpr" (then give its value in `constexprs`). `debug=True` compiles as `TRITON_DEBUG=1` would,
    keeping device-side assertions. Raises triton's CompilationError when the compiler rejects the kernel.
    """
    from triton._C.libtriton import ir
    from triton.compiler.compiler import make_backend

    target = _target(arch)
    backend = make_backend(target)
    src = _source(kernel, signature, constexprs)
    options = backend.parse_options(dict(src.parse_options(), debug=debug))
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    with _helpers_as_jit(src.fn.fn):
        module = src.make_ir(target, options, backend.get_codegen_implementation(options),
                             backend.get_module_map(), context)
    return str(module)


def compile_for_gpu(kernel, signature: dict, constexprs: dict | None = None, arch: int = DEFAULT_ARCH):
    """Run the whole Triton compiler on `kernel` for an NVIDIA GPU of compute capability `arch`, on any
    machine (ptxas ships with triton). Returns triton's CompiledKernel: `.asm` holds "ttir", "ttgir",
    "llir", "ptx" and "cubin"."""
    src = _source(kernel, signature, constexprs)
    with _helpers_as_jit(src.fn.fn):
        return triton.compile(src, target=_target(arch))


_TWINS: dict[int, tuple] = {}  # id(InterpretedFunction) -> (it, its JITFunction twin)


def _twin(interpreted):
    if id(interpreted) not in _TWINS:  # keep `interpreted` alive with its twin, so its id stays unique
        _TWINS[id(interpreted)] = (interpreted, _jit(interpreted.fn, **interpreted.kwargs))
    return _TWINS[id(interpreted)][1]


@contextlib.contextmanager
def _helpers_as_jit(fn):
    """Under the interpreter every @triton.jit function is an InterpretedFunction, including triton's own
    library (tl.max, tl.sum, tl.cdiv, ...), and the compiler accepts none of them. While compiling, swap
    each for a JITFunction twin: in triton's modules, in the methods of tl.tensor, and in the globals of
    the kernel and of the helpers it calls. Everything is put back afterwards."""
    from triton.language import core
    from triton.runtime.interpreter import InterpretedFunction

    slots = []  # (namespace, key, original); a namespace is a dict, or a closure cell when key is None
    for name, module in list(sys.modules.items()):
        if name == "triton" or name.startswith("triton."):
            namespace = vars(module)
            slots += [(namespace, k, v) for k, v in list(namespace.items()) if isinstance(v, InterpretedFunction)]
    for v in vars(core.tensor).values():  # tensor methods such as x.max() wrap library functions
        for cell in getattr(v, "__closure__", None) or ():
            if isinstance(cell.cell_contents, InterpretedFunction):
                slots.append((cell, None, cell.cell_contents))
    seen, todo = set(), [fn]
    while todo:  # the kernel's own helpers, transitively
        f = todo.pop()
        if id(f) in seen or not hasattr(f, "__code__"):
            continue
        seen.add(id(f))
        for name in f.__code__.co_names:
            value = f.__globals__.get(name)
            if isinstance(value, InterpretedFunction):
                slots.append((f.__globals__, name, value))
                todo.append(value.fn)
    try:
        for namespace, key, value in slots:
            if key is None:
                namespace.cell_contents = _twin(value)
            else:
                namespace[key] = _twin(value)
        yield
    finally:
        for namespace, key, value in reversed(slots):
            if key is None:
                namespace.cell_contents = value
            else:
                namespace[key] = value


def _mend_interpreter() -> None:
    """Make a device-function call under the interpreter restore the triton.language patches it made,
    and keep the source of every interpreted kernel (see _remember_source)."""
    from triton.runtime import interpreter

    cls = interpreter.InterpretedFunction
    if getattr(cls.__call__, "_restores_patches", False):
        return
    init = cls.__init__

    def __init__(self, fn, **kwargs):
        _remember_source(fn)
        init(self, fn, **kwargs)

    cls.__init__ = __init__

    def __call__(self, *args, **kwargs):  # triton 3.7's body, plus the restore
        scope = interpreter._patch_lang(self.fn)
        try:
            fn = self.rewrite()
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                raise interpreter.InterpreterError(repr(e)) from e
        finally:
            scope.restore()

    __call__._restores_patches = True
    cls.__call__ = __call__


def _language_is_pristine() -> bool:
    """False when interpreter patches leaked into triton.language before this module was imported."""
    from triton.language import core

    return not getattr(core.reduce, "__code__", None) or \
        not core.reduce.__code__.co_filename.endswith("interpreter.py")


_mend_interpreter()


def _plain_globals(fn) -> list[str]:
    """The globals `fn` reads that the Triton compiler would refuse (its rule in code_generator.py:
    modules, jit functions, triton.language objects, dtypes and constexprs are fine, other values are
    not), found in the bytecode: the fallback for a kernel whose source is gone."""
    import dis
    import types

    from triton.language import core
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITCallable

    absent, plain, codes = object(), set(), [fn.__code__]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        for ins in dis.get_instructions(code):
            if ins.opname != "LOAD_GLOBAL":
                continue
            value = fn.__globals__.get(ins.argval, absent)
            if value is absent or isinstance(value, (types.ModuleType, InterpretedFunction, JITCallable,
                                                     core.dtype, core.constexpr)) \
                    or getattr(value, "__triton_builtin__", False) or getattr(value, "__triton_aggregate__", False) \
                    or str(getattr(value, "__module__", "")).startswith("triton.language"):
                continue
            plain.add(ins.argval)
    return sorted(plain)


# ---- what a launch passed ----

def _bound_arguments(fn, args, kwargs) -> dict:
    sig = inspect.signature(fn)
    known = {k: v for k, v in kwargs.items() if k in sig.parameters}
    bound = sig.bind_partial(*args, **known)
    bound.apply_defaults()
    return dict(bound.arguments)


def _resolve_grid(grid, meta: dict) -> tuple[int, int, int]:
    """The launch's grid as 3 ints; (-1, -1, -1) when it cannot be worked out (triton will complain)."""
    try:
        if callable(grid):
            grid = grid(meta)
        grid = tuple(int(g) for g in grid)
    except Exception:  # noqa: BLE001 - a malformed grid is triton's to report, not ours
        return (-1, -1, -1)
    return grid + (1,) * (3 - len(grid))


def _arg_type(value) -> str | None:
    if isinstance(value, torch.Tensor):
        return _POINTER_TYPES.get(value.dtype)
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    return None


def _signature(fn, meta: dict) -> tuple[dict, dict] | None:
    """The (signature, constexprs) of one launch, or None when an argument has a type we do not map."""
    signature, constexprs = {}, {}
    for p in _jit(fn).params:
        value = meta.get(p.name)
        if p.is_constexpr:
            signature[p.name] = "constexpr"
            constexprs[p.name] = getattr(value, "value", value)
            continue
        kind = _arg_type(value)
        if kind is None:
            return None
        signature[p.name] = kind
    return signature, constexprs


# ---- checking a launch under the interpreter ----

class _Arguments:
    """The elements of every tensor argument of the launch being interpreted, as byte addresses."""

    def __init__(self, names: list[str], values: list):
        self.tensors = [(n, v) for n, v in zip(names, values) if isinstance(v, torch.Tensor) and v.numel()]
        # A contiguous tensor's elements are one arithmetic run of addresses; others are listed one by one.
        self.runs = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size(), t.element_size())
                     for _, t in self.tensors if t.is_contiguous()]
        listed = [_element_addresses(t) for _, t in self.tensors if not t.is_contiguous()]
        self.listed = np.unique(np.concatenate(listed)) if listed else None

    def bad(self, addresses: np.ndarray) -> np.ndarray:
        """The addresses (int64) that are no element of any tensor argument."""
        ok = np.zeros(addresses.shape, dtype=bool)
        for lo, hi, size in self.runs:
            ok |= (addresses >= lo) & (addresses < hi) & ((addresses - lo) % size == 0)
        if self.listed is not None:
            rest = addresses[~ok]
            pos = np.minimum(np.searchsorted(self.listed, rest), self.listed.size - 1)
            ok[~ok] = self.listed[pos] == rest
        return addresses[~ok]

    def describe(self, address: int) -> str:
        """Where `address` lies relative to the nearest tensor argument, in that tensor's elements."""
        best = None
        for name, t in self.tensors:
            size = t.element_size()
            addrs = _element_addresses(t)
            lo, hi = int(addrs.min()), int(addrs.max()) + size
            if lo <= address < hi:
                dist, text = 0, (f"inside the memory span of `{name}` (shape {tuple(t.shape)}, strides "
                                 f"{t.stride()}) but not one of its elements: a gap between strided elements")
            elif address >= hi:
                k = (address - hi) // size + 1
                dist, text = address - hi, (f"{k} element(s) past the last element of `{name}` "
                                            f"(shape {tuple(t.shape)}, {t.numel()} elements)")
            else:
                k = (lo - address + size - 1) // size
                dist, text = lo - address, f"{k} element(s) before the first element of `{name}`"
            if best is None or dist < best[0]:
                best = (dist, text)
        return best[1] if best else "no tensor argument has any element"


def _element_addresses(t: torch.Tensor) -> np.ndarray:
    offsets = np.zeros((), dtype=np.int64)
    for size, stride in zip(t.shape, t.stride()):
        offsets = np.add.outer(offsets, np.arange(size, dtype=np.int64) * stride)
    return t.data_ptr() + offsets.ravel() * t.element_size()


_COMPILE_ERRORS: dict = {}  # (kernel function, signature) -> "" or the compiler's message


class _State:
    arguments: _Arguments | None = None
    kernel: str = ""
    traffic: dict | None = None  # the Launch.traffic of the launch being interpreted


def _check_access(op: str, ptrs, mask) -> None:
    arguments = _State.arguments
    if arguments is None:
        return
    from triton.runtime.interpreter import interpreter_builder

    addresses = np.asarray(ptrs.data).astype(np.uint64).view(np.int64)  # pointers below 2**63: exact
    active = np.broadcast_to(np.asarray(mask.data).astype(bool), addresses.shape)
    addresses = addresses[active]
    bad = arguments.bad(addresses)
    if bad.size:
        pid = tuple(int(i) for i in interpreter_builder.grid_idx)
        raise OutOfBoundsAccess(
            f"tl.{op} in kernel `{_State.kernel}`, program {pid}: {bad.size} of its {addresses.size} active "
            f"(unmasked) lanes address no element of any tensor argument; the first is "
            f"{arguments.describe(int(bad[0]))}. Mask the access (mask=offsets < n) and check the pointer "
            "arithmetic (strides, row starts).")


def _count(what: str, ptrs, mask) -> None:
    if _State.traffic is not None:
        shape = np.shape(ptrs.data)
        _State.traffic[what] += int(np.broadcast_to(np.asarray(mask.data).astype(bool), shape).sum())


@contextlib.contextmanager
def record_launches(check_bounds: bool = True, check_compiles: bool = True):
    """Record every Triton kernel launch inside the `with` block into the list it yields.

    Under the interpreter, also check each launch (see the module docstring): `check_compiles` compiles
    the kernel's front end for a GPU and raises `WouldNotCompile` if the compiler rejects it;
    `check_bounds` raises `OutOfBoundsAccess` at the first load or store outside the tensor arguments.
    With compiled kernels (a GPU), only the recording happens.
    """
    from triton.compiler.errors import CompilationError
    from triton.runtime import interpreter
    from triton.runtime.jit import JITFunction

    launches: list[Launch] = []
    saved = {
        (interpreter.InterpretedFunction, "run"): interpreter.InterpretedFunction.run,
        (JITFunction, "run"): JITFunction.run,
        (interpreter.GridExecutor, "_init_args_hst"): interpreter.GridExecutor._init_args_hst,
        (interpreter.InterpreterBuilder, "create_masked_load"): interpreter.InterpreterBuilder.create_masked_load,
        (interpreter.InterpreterBuilder, "create_masked_store"): interpreter.InterpreterBuilder.create_masked_store,
    }

    def recording(original, interpreted: bool):
        def run(self, *args, grid, warmup, **kwargs):
            if warmup:
                return original(self, *args, grid=grid, warmup=warmup, **kwargs)
            try:
                meta, bound = _bound_arguments(self.fn, args, kwargs), True
            except TypeError:  # arguments that do not fit the kernel: let triton report it
                meta, bound = dict(kwargs), False
            name = getattr(self.fn, "__name__", "kernel")
            constexprs = {}
            if bound:
                with contextlib.suppress(Exception):  # a parameter list we cannot read: no constexprs recorded
                    params = inspect.signature(self.fn).parameters
                    constexprs = {p: getattr(meta.get(p), "value", meta.get(p)) for p, v in params.items()
                                  if "constexpr" in str(v.annotation)}
            launch = Launch(name, _resolve_grid(grid, meta), interpreted, constexprs,
                            {"loaded": 0, "stored": 0} if interpreted else {})
            launches.append(launch)
            if interpreted and check_compiles and bound:
                _check_compiles(self.fn, name, meta)
            if not interpreted:
                return original(self, *args, grid=grid, warmup=warmup, **kwargs)
            _State.kernel, _State.traffic = name, launch.traffic
            _restore_source(self.fn)  # the interpreter reads the source too, on a kernel's first launch
            try:
                return original(self, *args, grid=grid, warmup=warmup, **kwargs)
            except Exception as exc:
                if isinstance(exc.__cause__, OutOfBoundsAccess):  # unwrap the interpreter's InterpreterError
                    raise exc.__cause__ from None
                raise
            finally:
                _State.arguments = _State.traffic = None
        return run

    def _check_compiles(fn, name: str, meta: dict) -> None:
        try:
            sig = _signature(fn, meta)
        except (OSError, ValueError):  # no source to compile (code run with exec): check the globals rule
            plain = _plain_globals(fn)
            if plain:
                raise WouldNotCompile(
                    f"kernel `{name}` runs in the interpreter, but the Triton compiler rejects it: it reads the "
                    f"global variable(s) {', '.join(plain)}, and kernels can only read globals that are "
                    "constexpr (x = tl.constexpr(42)). Pass the value as a tl.constexpr argument. (Checked on "
                    "the kernel's bytecode: its source is not available to compile.)") from None
            return
        if sig is None or not _language_is_pristine():
            return  # an argument type we cannot map, or a polluted triton.language: skip rather than guess
        key = (fn, repr(sig))
        if key not in _COMPILE_ERRORS:
            try:
                gpu_ttir(fn, *sig)
                _COMPILE_ERRORS[key] = ""
            except CompilationError as exc:
                _COMPILE_ERRORS[key] = str(exc).strip()
        if _COMPILE_ERRORS[key]:
            raise WouldNotCompile(
                f"kernel `{name}` runs in the interpreter, but the Triton compiler rejects it (front end, "
                f"compiled for sm_{DEFAULT_ARCH} with this launch's argument types):\n{_COMPILE_ERRORS[key]}")

    def init_args(self, args_dev, kwargs):
        args_hst, kwargs_hst = saved[(interpreter.GridExecutor, "_init_args_hst")](self, args_dev, kwargs)
        if check_bounds:
            names = list(self.arg_names[: len(args_hst)]) + list(kwargs_hst)
            _State.arguments = _Arguments(names, list(args_hst) + list(kwargs_hst.values()))
        return args_hst, kwargs_hst

    def masked_load(self, ptrs, mask, other, *rest):
        _check_access("load", ptrs, mask)
        _count("loaded", ptrs, mask)
        return saved[(interpreter.InterpreterBuilder, "create_masked_load")](self, ptrs, mask, other, *rest)

    def masked_store(self, ptrs, value, mask, *rest):
        _check_access("store", ptrs, mask)
        _count("stored", ptrs, mask)
        return saved[(interpreter.InterpreterBuilder, "create_masked_store")](self, ptrs, value, mask, *rest)

    interpreter.InterpretedFunction.run = recording(saved[(interpreter.InterpretedFunction, "run")], True)
    JITFunction.run = recording(saved[(JITFunction, "run")], False)
    interpreter.GridExecutor._init_args_hst = init_args
    interpreter.InterpreterBuilder.create_masked_load = masked_load
    interpreter.InterpreterBuilder.create_masked_store = masked_store
    try:
        yield launches
    finally:
        for (cls, attr), value in saved.items():
            setattr(cls, attr, value)
        _State.arguments = _State.traffic = None


# ---- what a fused function may dispatch ----

# ATen ops that compute (rather than allocate, view or copy): in a fused function, this work belongs in the
# kernel. Trailing underscores (in-place variants) are ignored when matching.
MATH_OPS = frozenset({
    "add", "sub", "rsub", "mul", "div", "true_divide", "neg", "reciprocal", "addcmul", "addcdiv", "lerp",
    "exp", "exp2", "expm1", "log", "log1p", "log2", "pow", "sqrt", "rsqrt", "max", "amax", "min", "amin",
    "maximum", "minimum", "clamp", "clamp_min", "clamp_max", "relu", "sigmoid", "tanh", "where", "sum",
    "mean", "softmax", "_softmax", "log_softmax", "_log_softmax", "_safe_softmax", "_to_copy",
    "mm", "bmm", "addmm", "baddbmm", "matmul", "dot", "mv", "silu", "silu_backward", "sigmoid_backward",
    "scaled_dot_product_attention", "_scaled_dot_product_attention_math", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "logsumexp",
})


def torch_math_ops(ops) -> list[str]:
    """The ops of an ATen trace ("aten.add.Tensor", ...) that do arithmetic or convert dtypes."""
    return [op for op in ops if op.split(".")[1].rstrip("_") in MATH_OPS]
