"""Runs INSIDE the sandbox: execute one notebook's cells and report what happened, as plain data.

    python sandbox_runner.py < job.json

This process is the learner's: nothing it reports is believed on its own. It runs
the cells one after another in a fresh `__main__` (a plain interpreter, not a
Jupyter kernel) and, while the instructor's test cells run, it **observes** the
lab's interface (the functions and classes the lab's answer cells define): every
call a test makes to one of them is recorded as plain data, the value it returned
(tensors as dtype, shape, strides, storage offset, which argument's storage they
share, and their values) or the exception it raised. The trusted judge outside
(`autograder/judge.py`) compares those observations with the ones the reference
solution produced on the same inputs, and decides the points. A hand-in that
switches off the test cells' own checks gains nothing: its observations still
have to match the reference.

The job comes on stdin (the notebook is never on disk, so hidden tests cannot be
read back from a file) as JSON, schema 2:

    {"schema": 2, "nonce": str, "cell_timeout": int, "output_limit": int, "seed": int,
     "interface": [names], "max_observations": int, "fields": {name: [dict keys observed]},
     "cells": [{"kind": "trusted" | "answer" | "test", "label": str, "source": str, "hidden": bool}]}

For every cell it writes one JSON line to the result channel (the original stdout,
duplicated before any learner code runs; fd 1 itself then points at stderr):

    {"nonce", "i", "outputs": [...nbformat outputs], "error": {...} | null, "seconds", "stop",
     "obs": [{"fn": name, "out": encoded value or {"t": "raised", "types": [...]}[, "autograd": true]
              [, "tol": {"rtol"|"atol"|"ulps": float}][, "launches": [Triton kernel names]]}, ...],
     "obs_cut": int}

A hidden test cell arrives as its probe (autograder/probe.py): its checks are gone, and what they
looked at is handed to `__observe__(lambda: value)`, which records it under the name OBSERVED.

Standalone on purpose (imports nothing from the course): the sandbox sees this
one file, not the autograder package.
"""

import ast
import base64
import builtins
import functools
import hashlib
import io
import json
import os
import random
import signal
import sys
import time
import traceback
import types

SCHEMA = 2
INLINE_ELEMENTS = 1024  # integer tensors up to this many elements travel whole; bigger ones as a summary and a sample
# Float and complex values travel whole, or as a summary and a sample, in at most this many bytes, so that an
# observation stays under OBS_BYTES and the judge compares it within a tolerance (a digest compares exactly).
FLOAT_VALUE_BYTES = 2048
OBS_BYTES = 16384  # an observation bigger than this travels as its kind and a digest of its encoding
OBSERVED_PER_CELL = 20_000  # __observe__ values recorded per test cell (the lab's own calls are not capped here)
TRAFFIC = ("loaded", "stored")  # in a launch rule: element counts of an interpreted launch, not constexprs
LAUNCHES_PER_CALL = 16  # Triton kernel launches named per observed call; past it, one "..." stands for the rest
CELL_BYTES = 2 << 20  # a test cell's observations past this many bytes travel as digests too
MAX_DEPTH = 6  # nesting of containers encoded
MAX_ITEMS = 256  # items of one container encoded (the length is always sent)
MAX_FIGURES = 8  # figures kept per cell (a lab's cell draws one or two); the rest are closed unsent
FIGURE_BYTES = 1 << 20  # a figure's PNG past this size is replaced by a line saying so


OBSERVE = "__observe__"  # the name a hidden test's probe calls (autograder/probe.py spells it too)
QUIET = "__quiet__"  # and the one it runs a `# probe: quiet` statement through
OBSERVED = "(a value a hidden check looked at)"  # the "fn" of its observations


class CellTimeout(BaseException):
    pass


class _Capture(io.TextIOBase):
    """A cell's stdout or stderr, capped so a flood of output cannot fill memory."""

    def __init__(self, name, limit):
        self.name, self.limit, self.parts, self.size, self.cut = name, limit, [], 0, False

    def writable(self):
        return True

    def write(self, s):
        s = str(s)
        if self.size < self.limit:
            self.parts.append(s[: self.limit - self.size])
        else:
            self.cut = True
        self.size += len(s)
        return len(s)

    def text(self):
        out = "".join(self.parts)
        if self.cut or self.size > self.limit:
            out += f"\n[... output cut by the grader: {self.size} characters in all]\n"
        return out


# ---- observations: a value as plain data ----

def _tensors_in(args, kwargs):
    """The tensor arguments of a call, in order (one level into lists and tuples): a result that shares
    storage with one of them is reported by its position, which means the same thing in every run."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    found = []
    for a in list(args) + list(kwargs.values()):
        for x in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(x, torch.Tensor):
                found.append(x)
    return found


def _storage(t):
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # noqa: BLE001 - fake, meta, sparse and functional tensors have no plain storage
        return None


def _values(flat, kind):
    """(how, data) for a flat NumPy array: whole when small, else a summary and an evenly spaced sample."""
    import numpy as np

    n = flat.size
    limit = FLOAT_VALUE_BYTES // flat.itemsize if kind in "fc" else INLINE_ELEMENTS
    if n <= limit:
        return "all", base64.b64encode(np.ascontiguousarray(flat).tobytes()).decode("ascii")
    sample = flat[np.linspace(0, n - 1, limit).astype(np.int64)]
    summary = {"sample": base64.b64encode(np.ascontiguousarray(sample).tobytes()).decode("ascii")}
    if kind == "f":
        finite = np.where(np.isfinite(flat), flat, 0.0)
        summary.update(sum=float(finite.sum()), abs=float(np.abs(finite).sum()), nan=int(np.isnan(flat).sum()),
                       inf=int(np.isinf(flat).sum()))
    elif kind == "c":
        summary.update(sum=[float(flat.real.sum()), float(flat.imag.sum())])
    else:
        summary.update(sum=int(flat.sum()), digest=hashlib.sha256(flat.tobytes()).hexdigest())
    return "summary", summary


def _array(arr, out):
    """Fill `out` with the values of a NumPy array, widened to float64, complex128 or int64."""
    import numpy as np

    kinds = {"f": ("f", np.float64), "c": ("c", np.complex128), "b": ("i", np.int64), "i": ("i", np.int64),
             "u": ("i", np.int64)}
    if arr.dtype.kind not in kinds:
        return out
    kind, wide = kinds[arr.dtype.kind]
    flat = arr.astype(wide).ravel()
    out["kind"] = kind
    out["how"], out["data"] = _values(flat, kind)
    return out


def _encode_tensor(t, tensor_args):
    torch = sys.modules["torch"]
    out = {"t": "tensor", "dtype": str(t.dtype), "shape": list(t.shape), "device": t.device.type,
           "requires_grad": bool(t.requires_grad), "share": -1, "data": None}
    try:
        out["strides"], out["offset"] = list(t.stride()), int(t.storage_offset())
    except Exception:  # noqa: BLE001 - sparse and nested tensors have no strides
        out["strides"], out["offset"] = None, None
    ptr = _storage(t)
    if ptr:
        for k, a in enumerate(tensor_args):
            if _storage(a) == ptr:
                out["share"] = k
                break
    if t.device.type == "meta":
        return out
    try:
        x = t.detach()
        if x.is_quantized:
            out["qscheme"] = str(x.qscheme())
            x = x.int_repr()
        if x.layout != torch.strided:
            x = x.to_dense()
        x = x.cpu()
        if x.dtype in (torch.bfloat16, torch.float16) or "float8" in str(x.dtype):
            x = x.float()
        elif x.dtype == torch.complex32:
            x = x.to(torch.complex64)
        return _array(x.resolve_conj().resolve_neg().numpy(), out)
    except Exception as e:  # noqa: BLE001 - a tensor whose values cannot be read is reported without them
        out["unreadable"] = type(e).__name__
        return out


# torch's own counts of the dispatch modes in force, taken when the warm sandbox imports torch (before any
# hand-in runs, so a hand-in cannot swap them for functions that say "none"): where both are 0, `encode` skips
# `_disable_current_modes`, a thirtieth of a millisecond per value. Empty (always hide) in a cold sandbox.
_NO_MODES: tuple = ()


def _take_mode_counts() -> None:
    global _NO_MODES
    torch = sys.modules.get("torch")
    try:
        state = torch._ops.mode_stack_state_for_pre_dispatch()
        _NO_MODES = (torch._C._len_torch_dispatch_stack, functools.partial(type(state).count, state))
    except Exception:  # noqa: BLE001 - a torch without them: always hide
        _NO_MODES = ()


def encode(value, tensor_args=(), depth=0):
    """`value` as JSON-ready plain data. Never raises; never calls the value's own __repr__ or __eq__.
    What it does to read tensors is hidden from the modes a test may have active (an op recorder must
    see the answer's ops, not the observer's)."""
    torch = sys.modules.get("torch")
    try:
        if torch is None or depth:
            return _encode(value, tensor_args, depth)
        if _NO_MODES and not any(length() for length in _NO_MODES):  # the usual case: no mode to hide from
            with torch._C.DisableTorchFunction():
                return _encode(value, tensor_args, depth)
        from torch.utils._python_dispatch import _disable_current_modes
        with _disable_current_modes(), torch._C.DisableTorchFunction():
            return _encode(value, tensor_args, depth)
    except Exception as e:  # noqa: BLE001
        return {"t": "object", "cls": type(value).__name__, "error": type(e).__name__}


def _encode(value, tensor_args, depth):
    torch = sys.modules.get("torch")
    np = sys.modules.get("numpy")
    t = type(value)
    if value is None:
        return {"t": "none"}
    if t is bool:
        return {"t": "bool", "v": value}
    if t is int:
        return {"t": "int", "v": value if abs(value) < 2**53 else str(value)}
    if t is float:
        return {"t": "float", "v": repr(value)}
    if t is complex:
        return {"t": "complex", "v": [repr(value.real), repr(value.imag)]}
    if t is str:
        if len(value) <= 256:
            return {"t": "str", "v": value}
        return {"t": "str", "n": len(value), "h": hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()}
    if t in (bytes, bytearray):
        return {"t": "bytes", "n": len(value), "h": hashlib.sha256(bytes(value)).hexdigest()}
    if torch is not None and isinstance(value, torch.Tensor):
        return _encode_tensor(value, tensor_args)
    if np is not None and isinstance(value, np.ndarray):
        return _array(value, {"t": "ndarray", "dtype": str(value.dtype), "shape": list(value.shape)})
    if np is not None and isinstance(value, np.generic):
        return encode(value.item(), tensor_args, depth)
    if torch is not None and isinstance(value, (torch.dtype, torch.device, torch.memory_format, torch.layout)):
        return {"t": "token", "v": str(value)}
    if depth >= MAX_DEPTH:
        return {"t": "deep"}
    if isinstance(value, (tuple, list)):
        kind = "size" if torch is not None and isinstance(value, torch.Size) else \
            "tuple" if isinstance(value, tuple) else "list"
        items = list(value)
        return {"t": kind, "n": len(items), "v": [encode(x, tensor_args, depth + 1) for x in items[:MAX_ITEMS]]}
    if isinstance(value, (set, frozenset)):
        items = sorted((encode(x, tensor_args, depth + 1) for x in list(value)[:MAX_ITEMS]), key=json.dumps)
        return {"t": "set", "n": len(value), "v": items}
    if isinstance(value, dict):
        items = list(value.items())[:MAX_ITEMS]
        return {"t": "dict", "n": len(value),
                "v": [[encode(k, tensor_args, depth + 1), encode(v, tensor_args, depth + 1)] for k, v in items]}
    if "jax" in sys.modules and t.__module__.startswith(("jax", "jaxlib")) and np is not None:
        try:
            arr = np.asarray(value)
            return _array(arr, {"t": "ndarray", "dtype": str(arr.dtype), "shape": list(arr.shape), "jax": True})
        except Exception:  # noqa: BLE001 - a jax object that is not an array
            pass
    structured = _structured(value, torch)
    if structured is not None:
        return structured
    member = _enum_member(value, t)
    if member is not None:
        return {"t": "token", "v": member}
    if isinstance(value, type):
        return {"t": "type", "v": _class_name(value)}
    record = _record(value)
    if record is not None:
        cls, items = record
        return {"t": "record", "cls": cls, "n": len(items),
                "v": [[encode(k, tensor_args, depth + 1), encode(v, tensor_args, depth + 1)]
                      for k, v in items[:MAX_ITEMS]]}
    return {"t": "object", "cls": t.__name__}


def _enum_member(value, t) -> str | None:
    """A member of a library's enum (Python's `enum` or a pybind11 enum such as the profiler's
    `torch.autograd.DeviceType`) by its class and name, "torch._C._autograd.DeviceType.CPU". An enum the
    notebook defines is not one: its class name would be empty, and it is judged as any other object."""
    name = _class_name(t)
    if not name:
        return None
    try:
        members = type.__getattribute__(t, "__members__")
        if type(members) in (dict, types.MappingProxyType):
            key = next((k for k, v in members.items() if v is value), None)
            if isinstance(key, str):
                return f"{name}.{key}"
    except AttributeError:
        return None
    return None


def _class_name(cls) -> str:
    """A class by its module and qualified name; a class the notebook defined (in `__main__`) by nothing, since a
    right answer names its own classes as it likes."""
    module = type.__getattribute__(cls, "__module__")
    return "" if not isinstance(module, str) or module == "__main__" else \
        f"{module}.{type.__getattribute__(cls, '__qualname__')}"


def _record(value):
    """A plain record as (its class, its fields): a dataclass instance by the fields that decide its equality
    (labkit's `Launch`, `Op`; not a class the notebook defined, which stays an object), a SimpleNamespace by
    its attributes (labkit.profiling's rows), a Triton `Config` by its constexprs, warps and stages. None for
    anything else."""
    t = type(value)
    if t is types.SimpleNamespace:
        return "namespace", sorted(object.__getattribute__(value, "__dict__").items())[:MAX_ITEMS]
    fields = getattr(t, "__dataclass_fields__", None)
    if isinstance(fields, dict) and _class_name(t):  # the notebook's own dataclasses are a right answer's choice
        kept = [f.name for f in fields.values() if getattr(f, "compare", True) and
                str(getattr(f, "_field_type", "_FIELD")) == "_FIELD"]
        return _class_name(t), [(name, object.__getattribute__(value, name)) for name in kept[:MAX_ITEMS]]
    autotuner = sys.modules.get("triton.runtime.autotuner")
    if autotuner is not None and t is getattr(autotuner, "Config", None):
        get = functools.partial(object.__getattribute__, value)
        return "triton.Config", [("kwargs", dict(get("kwargs"))), ("num_warps", get("num_warps")),
                                 ("num_stages", get("num_stages"))]
    return None


def _target(target):
    """An FX node's target as plain text: an op's qualified name, a function's module and name, a method's or
    a submodule's attribute path."""
    if isinstance(target, str):
        return target
    name = getattr(target, "__name__", None)
    if type(target).__module__.startswith("torch._ops"):
        return str(target)
    module = getattr(target, "__module__", None) or ""
    return f"{module}.{name}" if name else type(target).__qualname__


def _graph_nodes(graph):
    """A graph as the multiset of what its nodes do (op kind and target; placeholders and outputs by kind, their
    names are a right answer's own), sorted, so two graphs that compute the same way in another order agree."""
    nodes = []
    for node in list(graph.nodes)[:4 * MAX_ITEMS]:
        nodes.append([node.op, "" if node.op in ("placeholder", "output", "get_attr") else _target(node.target)])
    return sorted(nodes)


def _structured(value, torch):
    """Values of torch's own kinds as the data they stand for: an operator handle by its qualified name and
    schema, an FX graph (or a GraphModule) by its nodes, an exported program by its graph and signature."""
    if torch is None:
        return None
    ops = sys.modules.get("torch._ops")
    if ops is not None and isinstance(value, (ops.OpOverload, ops.OpOverloadPacket)):
        enc = {"t": "op", "v": str(value)}
        schema = getattr(value, "_schema", None)
        if schema is not None:
            enc["schema"] = str(schema)
        # which overloads decompose before autograd (a CompositeImplicitAutograd kernel): read from the
        # dispatcher's table here, not from an op trace the hand-in's cells could rebind (lab 2's CPU kernel)
        overloads = [value] if isinstance(value, ops.OpOverload) else \
            [getattr(value, name, None) for name in value.overloads()]
        decomposes = []
        for overload in overloads:
            try:
                own = overload._schema
                name = own.name + (f".{own.overload_name}" if own.overload_name else "")
                if torch._C._dispatch_has_kernel_for_dispatch_key(
                        name, torch._C.DispatchKey.CompositeImplicitAutograd):
                    decomposes.append(overload._overloadname)
            except Exception:  # noqa: BLE001 - an overload the dispatcher cannot name decomposes nothing
                continue
        enc["decomposes"] = sorted(decomposes)
        return enc
    fx = sys.modules.get("torch.fx")
    if fx is not None and isinstance(value, fx.Graph):
        return {"t": "graph", "nodes": _graph_nodes(value)}
    if fx is not None and isinstance(value, fx.GraphModule):
        # whether the module runs its graph: its code is regenerated only by recompile() (a pass that edits
        # the graph and forgets it returns a module that still runs the old code)
        try:
            recompiled = value.code == value.graph.python_code("self").src
        except Exception:  # noqa: BLE001 - a graph that cannot generate code does not run either
            recompiled = False
        return {"t": "graph", "nodes": _graph_nodes(value.graph), "recompiled": recompiled}
    export = sys.modules.get("torch.export")
    if export is not None and isinstance(value, getattr(export, "ExportedProgram", ())):
        signature = value.graph_signature
        return {"t": "exported", "nodes": _graph_nodes(value.graph),
                "inputs": [str(spec.kind) for spec in signature.input_specs],
                "outputs": [str(spec.kind) for spec in signature.output_specs]}
    return None


def _exception_types(e):
    return [c.__name__ for c in type(e).__mro__ if c not in (object, BaseException)][:12]


class Observer:
    """Wraps the lab's interface so each call a test makes is recorded (calls made inside other observed
    calls are not: they are the answer's business, and a right answer may make them or not)."""

    def __init__(self, limit):
        self.limit, self.active, self.depth, self.records, self.cut, self.bytes = limit, False, 0, [], 0, 0
        self.observed = 0  # __observe__ calls in this cell
        self.fields = {}  # name -> the dict keys of its result that are observed (the rest is not)
        self.watching = False  # Triton launches are recorded (`watch_launches`)
        self.launches = None  # the kernels the call being observed has launched so far, while watching
        self.launch_rules = {}  # name -> the constexprs whose values its launches record, with their grids
        self.launch_fn = None  # the name of the call being observed (whose launch rule applies)
        self.traffic = None  # {"loaded": n, "stored": n} of the interpreted launch being counted
        self.integer_only = set()  # names whose calls record whether every ATen op they ran was integer-only
        self.dtype_rule = None  # (labkit.amp's op recorder, its rule), taken before any answer cell runs
        self.kernel_only = set()  # names whose calls record the ATen ops that compute they ran (lab 7)
        self.math_recorder = None  # the runner's own dispatch mode for them, made before any answer cell runs

    def configure(self, job):
        """What the job says to record besides values (settings.RECORDING): the dict fields of out-of-process
        trials' results, for which functions a launch records its grid and some constexprs, and which
        functions' calls record whether they kept to integer ops."""
        self.fields = {k: set(v) for k, v in (job.get("fields") or {}).items()}
        self.launch_rules = {k: [str(c) for c in v] for k, v in (job.get("launch_rules") or {}).items()}
        self.integer_only = {str(k) for k in job.get("integer_only") or ()}
        self.kernel_only = {str(k) for k in job.get("kernel_only") or ()}

    def watch(self):
        """Take the instruments the job's rules need, once the lab's set-up has run and before any answer cell
        does: Triton's launch path, and labkit.amp's dtype recorder."""
        self.watch_launches()
        self.watch_op_dtypes()
        self.watch_math_ops()

    def watch_op_dtypes(self):
        """Take labkit.amp's dtype recorder and its integer-only rule (lab 5: "integer ops only") before any
        answer cell runs, so that a call of a function the job names records, with its result, whether every
        ATen op it ran kept to the rule: the judge compares that with the reference's, so a hand-in that
        rebinds the test's recorder or check still shows the float ops it ran."""
        amp = sys.modules.get("labkit.amp")
        if self.dtype_rule is None and self.integer_only and amp is not None:
            self.dtype_rule = (amp._DtypeRecorder, amp.integer_only_violations)

    def watch_math_ops(self):
        """Lab 7's "the arithmetic belongs in the kernel": a call of a function the job names records the ATen
        ops it ran that compute or convert dtypes (labkit.fusion's list, copied here), under a dispatch mode of
        the runner's own, made before any answer cell runs. The judge compares them with the reference's (none),
        so a hand-in that adds in torch and rebinds the test's op recorder still shows the add."""
        fusion, torch = sys.modules.get("labkit.fusion"), sys.modules.get("torch")
        if self.math_recorder is not None or not self.kernel_only or fusion is None or torch is None:
            return
        from torch.utils._python_dispatch import TorchDispatchMode

        math = frozenset(fusion.MATH_OPS)

        class MathOps(TorchDispatchMode):
            def __init__(self):
                super().__init__()
                self.ops = set()

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                parts = str(func).split(".")
                if len(parts) > 1 and parts[1].rstrip("_") in math and len(self.ops) < 32:
                    self.ops.add(".".join(parts))
                return func(*args, **(kwargs or {}))

        self.math_recorder = MathOps

    def take(self):
        records, cut = self.records, self.cut
        self.records, self.cut, self.bytes, self.observed = [], 0, 0, 0
        return records, cut

    def record(self, name, out, by_autograd=False, tol=None, launches=None, integer_only=None, math_ops=None):
        if len(self.records) >= self.limit:
            self.cut += 1
            return
        text = json.dumps(out, sort_keys=True, separators=(",", ":"))
        if len(text) > OBS_BYTES or self.bytes + len(text) > CELL_BYTES:
            out = {"t": out.get("t", "object"), "digest": hashlib.sha256(text.encode()).hexdigest()}
            text = "x" * 80
        self.bytes += len(text) + sum(len(k) + 3 for k in (launches or []) + (math_ops or []))
        self.records.append({"fn": name, "out": out, **({"autograd": True} if by_autograd else {}),
                             **({"tol": tol} if tol else {}),
                             **({"launches": launches} if launches is not None else {}),
                             **({"integer_only": integer_only} if integer_only is not None else {}),
                             **({"math_ops": math_ops} if math_ops is not None else {})})

    def watch_launches(self):
        """Record which Triton kernels each observed call launches, by the kernel's name, in order (lab 7's
        "one launch", "the kernels the task names"). The hook sits under Triton's own launch path
        (`JITFunction.run`, and the interpreter's `InterpretedFunction.run`), set before any answer cell
        runs, and the list travels with the call's record: the judge compares it with the reference's, so a
        hand-in that computes with torch ops, launches more, or switches a labkit recorder off shows as a
        difference. An autotuner's timing runs are left out (how many there are depends on the clock). Only in a
        lab whose set-up imported labkit.fusion (the labs with launch rules)."""
        if self.watching or "triton" not in sys.modules or "labkit.fusion" not in sys.modules:
            return
        self.watching = True
        classes = []
        for module, cls in (("triton.runtime.jit", "JITFunction"), ("triton.runtime.interpreter",
                                                                   "InterpretedFunction")):
            try:
                classes.append(getattr(__import__(module, fromlist=[cls]), cls))
            except Exception:  # noqa: BLE001 - a Triton without the interpreter
                pass
        observer = self
        timing = [0]  # inside an autotuner's timing runs, whose number depends on the clock: not recorded

        def hooked(original, interpreted):
            def run(kernel, *args, **kwargs):
                launched, counted = observer.launches, []
                if launched is not None and not kwargs.get("warmup") and not timing[0]:
                    if len(launched) < LAUNCHES_PER_CALL:
                        name = getattr(getattr(kernel, "fn", None), "__name__", None)
                        name = name[:40] if isinstance(name, str) else "?"
                        rule = observer.launch_rules.get(observer.launch_fn)
                        launched.append(name if rule is None else f"{name} {_launch_shape(kernel, args, kwargs, rule)}")
                        counted = [c for c in rule or () if c in TRAFFIC] if interpreted else []
                    elif launched[-1] != "...":
                        launched.append("...")
                if not counted:
                    return original(kernel, *args, **kwargs)
                outer, observer.traffic = observer.traffic, dict.fromkeys(TRAFFIC, 0)
                entry = len(launched) - 1
                try:
                    return original(kernel, *args, **kwargs)
                finally:
                    counts, observer.traffic = observer.traffic, outer
                    launched[entry] += "".join(f" {c}={counts[c]}" for c in counted)
            return run

        for cls in classes:
            cls.run = hooked(cls.run, cls.__name__ == "InterpretedFunction")
        self.count_traffic()
        try:
            from triton.runtime.autotuner import Autotuner
        except Exception:  # noqa: BLE001 - a Triton without the autotuner
            return
        bench = Autotuner._bench

        def timed(tuner, *args, **kwargs):
            timing[0] += 1
            try:
                return bench(tuner, *args, **kwargs)
            finally:
                timing[0] -= 1

        Autotuner._bench = timed

    def count_traffic(self):
        """Count the elements each interpreted launch's loads and stores touch (active lanes, as labkit.fusion
        does), under the interpreter's own masked load and store, set before any answer cell runs: the
        counts of a launch whose rule names "loaded" or "stored" (`settings.LAUNCH_RULES`) travel with it, so a
        kernel that reads its input three times shows as a difference even where a hand-in feeds the test's
        own recorder other numbers. On a GPU launches are compiled, and neither side has counts."""
        np = sys.modules.get("numpy")
        try:
            from triton.runtime.interpreter import InterpreterBuilder
        except Exception:  # noqa: BLE001 - a Triton without the interpreter
            return
        if np is None:
            return
        observer = self

        def lanes(ptrs, mask):
            return int(np.broadcast_to(np.asarray(mask.data).astype(bool), np.shape(ptrs.data)).sum())

        load, store = InterpreterBuilder.create_masked_load, InterpreterBuilder.create_masked_store

        def masked_load(builder, ptrs, mask, *rest):
            if observer.traffic is not None:
                observer.traffic["loaded"] += lanes(ptrs, mask)
            return load(builder, ptrs, mask, *rest)

        def masked_store(builder, ptrs, value, mask, *rest):
            if observer.traffic is not None:
                observer.traffic["stored"] += lanes(ptrs, mask)
            return store(builder, ptrs, value, mask, *rest)

        InterpreterBuilder.create_masked_load, InterpreterBuilder.create_masked_store = masked_load, masked_store

    def observe(self, thunk, outcome=False, **tolerance):
        """`__observe__(lambda: value[, rtol=, atol=, ulps=])`: a hidden test's probe (autograder/probe.py)
        calls it for each value a check of the instructor's looked at; the check itself, and its expected
        value, stay outside. The judge takes the tolerance from the reference's record, never a hand-in's."""
        if not self.active or self.depth:
            return
        self.observed += 1
        if self.observed > OBSERVED_PER_CELL:  # the same count in every run: the rest are not compared
            return
        tol = {k: float(v) for k, v in tolerance.items() if k in ("rtol", "atol", "ulps")
               and isinstance(v, (int, float)) and not isinstance(v, bool)}
        try:
            value = thunk()
        except Exception as e:  # noqa: BLE001 - recorded: the judge compares it with the reference's
            self.record(OBSERVED, {"t": "raised", "types": _exception_types(e)}, tol=tol)
            return
        # outcome=True: a check run whole, and only whether it held counts (check_raises returns the message,
        # whose wording is the answer's own)
        self.record(OBSERVED, encode(None if outcome else value), tol=tol)

    def quiet(self, thunk):
        """`__quiet__(lambda: ...)`: a hidden test's probe runs a statement marked `# probe: quiet` (a timed replay)
        with the lab's calls inside it unrecorded: how many there are depends on the clock, not on the answer."""
        if not self.active or self.depth:
            return thunk()
        self.depth += 1
        try:
            return thunk()
        finally:
            self.depth -= 1

    def wrap_function(self, fn, name, by_autograd=False):
        if getattr(fn, "__observed__", False):
            return fn
        observer = self

        @functools.wraps(fn)
        def observed(*args, **kwargs):
            if not observer.active or observer.depth or _compiling():
                return fn(*args, **kwargs)
            observer.depth += 1
            observer.launches = [] if observer.watching else None
            observer.launch_fn = name
            recorder = observer.dtype_rule[0]() if observer.dtype_rule and name in observer.integer_only else None
            math = observer.math_recorder() if observer.math_recorder and name in observer.kernel_only else None
            try:
                if recorder is None and math is None:
                    result = fn(*args, **kwargs)
                elif math is None:
                    with recorder:
                        result = fn(*args, **kwargs)
                elif recorder is None:
                    with math:
                        result = fn(*args, **kwargs)
                else:
                    with recorder, math:
                        result = fn(*args, **kwargs)
            except BaseException as e:
                observer.depth -= 1
                observer.record(name, {"t": "raised", "types": _exception_types(e)}, by_autograd,
                                launches=observer.launches)
                observer.launches = None
                raise
            observer.depth -= 1
            tensors = _tensors_in(args, kwargs)
            # a call on an empty tensor may launch or not: both are right
            launched = None if any(_empty(t) for t in tensors) else observer.launches
            observer.launches = None
            kept = _fields(result, observer.fields[name]) if name in observer.fields else result
            integer_only = None if recorder is None else not observer.dtype_rule[1](recorder.calls)
            observer.record(name, encode(kept, tensors), by_autograd, launches=launched, integer_only=integer_only,
                            math_ops=None if math is None else sorted(math.ops))
            return result

        observed.__observed__ = True
        return observed

    def wrap(self, namespace, name):
        obj = namespace.get(name)
        if isinstance(obj, types.FunctionType):
            namespace[name] = self.wrap_function(obj, name)
        elif isinstance(obj, type) and obj.__module__ == "__main__" and _autograd_function(obj):
            # A custom autograd.Function is used through `apply`, which calls the class's forward, and
            # autograd later calls its backward: both are looked up on the class, so both are observed.
            # How often autograd calls backward depends on the answer (double backward through a saved
            # output calls it again), so those records are marked and judged as a subsequence.
            for attr in ("forward", "backward"):
                fn = vars(obj).get(attr)
                if isinstance(fn, staticmethod) and isinstance(fn.__func__, types.FunctionType):
                    setattr(obj, attr, staticmethod(self.wrap_function(fn.__func__, f"{name}.{attr}",
                                                                       by_autograd=attr == "backward")))
        elif isinstance(obj, type) and obj.__module__ == "__main__":
            # its methods and those it inherits from the answer's other classes (a subclass that overrides one
            # method still has the rest observed), each set on the class itself; the nearest definition wins
            seen = set()
            for klass in obj.__mro__:
                if klass.__module__ != "__main__":
                    continue
                for attr, fn in list(vars(klass).items()):
                    if attr in seen:
                        continue
                    seen.add(attr)
                    if isinstance(fn, types.FunctionType) and (not attr.startswith("__") or
                                                               attr in ("__init__", "__call__")):
                        setattr(obj, attr, self.wrap_function(fn, f"{name}.{attr}"))


def _empty(t):
    try:
        return t.numel() == 0
    except Exception:  # noqa: BLE001 - a tensor subclass that cannot say
        return False


def _launch_shape(kernel, args, kwargs, constexprs):
    """A Triton launch's grid (three ints, a grid function of meta evaluated as Triton does) and the values of
    `constexprs`, as text: what a task fixes about a launch (one program per row; BLOCK = ...)."""
    try:
        import inspect

        given = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        bound = inspect.signature(kernel.fn).bind_partial(*args, **{k: v for k, v in given.items()
                                                                   if k in kernel.arg_names})
        bound.apply_defaults()
        meta = {**given, **bound.arguments}
        grid = kwargs.get("grid")
        grid = grid(meta) if callable(grid) else grid
        grid = tuple(int(g) for g in grid)
        grid += (1,) * (3 - len(grid))
        parts = [f"grid={grid}"] + [f"{c}={meta.get(c)!r}" for c in constexprs if c not in TRAFFIC]
        return " ".join(parts)[:120]
    except Exception:  # noqa: BLE001 - a launch that cannot be read is recorded as such, and differs
        return "grid=?"


def _fields(value, keys, depth=0):
    """`value` with every dict in it reduced to `keys` (lists and tuples kept, in order)."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {k: _fields(v, keys, depth + 1) for k, v in value.items() if k in keys}
    if isinstance(value, (list, tuple)):
        return [_fields(v, keys, depth + 1) for v in value]
    return value


def _autograd_function(cls):
    torch = sys.modules.get("torch")
    return torch is not None and issubclass(cls, torch.autograd.Function)


def _compiling():
    """Inside a torch.compile trace the observer stays out of the way (dynamo would trace it)."""
    torch = sys.modules.get("torch")
    try:
        return torch is not None and torch.compiler.is_compiling()
    except Exception:  # noqa: BLE001
        return False


def cell_seed(seed, label):
    """A test cell's seed, from the run's seed and the cell's grade_id: the same in every run and in the quality
    check, whatever cells a hand-in added before it (a seed by position would shift with every scratch cell)."""
    import zlib

    return int(seed) * 1000 + zlib.crc32(str(label).encode("utf-8", "replace")) % 100_000


def _reseed(seed):
    """Each test cell starts from the same random state in every run, whatever the answers drew before."""
    random.seed(seed)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(seed % 2**32)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


class Runner:
    def __init__(self, job, channel):
        self.job, self.channel = job, channel
        self.cells = job["cells"]
        self.nonce = job["nonce"]
        self.interface = [n for n in job.get("interface", []) if isinstance(n, str)]
        self.observer = Observer(int(job.get("max_observations", 100_000)))
        self.observer.configure(job)
        self.main = types.ModuleType("__main__")
        self.main.__dict__["__builtins__"] = builtins
        self.main.__dict__[OBSERVE] = self.observer.observe
        self.main.__dict__[QUIET] = self.observer.quiet

    def send(self, record):
        record["nonce"] = self.nonce
        self.channel.write(json.dumps(record) + "\n")
        self.channel.flush()

    def run(self):
        limit = int(self.job.get("output_limit", 200_000))
        timeout = int(self.job.get("cell_timeout", 120))
        sys.modules["__main__"] = self.main
        self.send({"event": "start", "cells": len(self.cells), "schema": SCHEMA})
        for i, cell in enumerate(self.cells):
            record = self.run_cell(i, cell, limit, timeout)
            self.send(record)
            if record.get("stop"):
                break
        self.send({"event": "end"})

    def run_cell(self, i, cell, limit, timeout):
        filename = f"<cell {i}: {cell['label']}>"
        if not cell.get("hidden"):
            import linecache  # tracebacks and inspect.getsource see visible cells' lines; hidden ones never
            linecache.cache[filename] = (len(cell["source"]), None, cell["source"].splitlines(True), filename)
        out, err = _Capture("stdout", limit), _Capture("stderr", limit)
        outputs, error, stop = [], None, False
        test = cell["kind"] == "test"
        if test:
            _reseed(cell_seed(self.job.get("seed", 0), cell["label"]))
        self.observer.take()
        if cell["kind"] != "trusted":  # the lab's set-up has run: watch its launches before any answer runs
            self.observer.watch()
        t0 = time.perf_counter()
        old = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        signal.setitimer(signal.ITIMER_REAL, timeout)
        self.observer.active, self.observer.depth = test, 0
        try:
            result = self.execute(cell["source"], filename)
            if result is not None:
                outputs.append({"output_type": "execute_result", "metadata": {}, "execution_count": i + 1,
                                "data": {"text/plain": _safe_repr(result)}})
        except CellTimeout:
            error, stop = {"ename": "CellTimeout", "evalue": f"the cell ran past {timeout} s", "traceback": []}, True
        except BaseException as e:  # noqa: BLE001 - SystemExit and KeyboardInterrupt fail the cell too
            error = self.describe(e)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self.observer.active = False
            sys.stdout, sys.stderr = old
        seconds = time.perf_counter() - t0
        if error is None and seconds > timeout + 1:
            error, stop = {"ename": "CellTimeout", "evalue": f"the cell ran past {timeout} s", "traceback": []}, True
        obs, cut = self.observer.take()
        if cell["kind"] == "answer":
            for name in self.interface:
                self.observer.wrap(self.main.__dict__, name)
        outputs = self.figures() + outputs
        for stream in (out, err):
            if stream.size:
                outputs.insert(0 if stream is out else len(outputs), {"output_type": "stream", "name": stream.name,
                                                                      "text": stream.text()})
        if error is not None:
            outputs.append({"output_type": "error", **error})
        return {"i": i, "outputs": outputs, "error": error, "seconds": round(seconds, 3), "stop": stop,
                "obs": obs if test else [], "obs_cut": cut}

    def execute(self, source, filename):
        tree = ast.parse(_transform(source), filename=filename)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
            last = ast.Expression(tree.body.pop().value)
        code = compile(tree, filename, "exec", dont_inherit=True)
        exec(code, self.main.__dict__)  # noqa: S102 - running the notebook is the point
        if last is not None:
            return eval(compile(last, filename, "eval", dont_inherit=True), self.main.__dict__)  # noqa: S307
        return None

    def describe(self, e):
        try:
            evalue = str(e)
        except BaseException:  # noqa: BLE001 - a hand-in's exception whose __str__ fails
            evalue = "<unprintable>"
        try:
            tb = traceback.format_exception(type(e), e, e.__traceback__)
        except BaseException:  # noqa: BLE001
            tb = []
        return {"ename": type(e).__name__, "evalue": evalue[:5000], "traceback": [line[:5000] for line in tb[-30:]]}

    @staticmethod
    def figures():
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return []
        outputs = []
        try:
            for num in plt.get_fignums()[:MAX_FIGURES]:
                buf = io.BytesIO()
                plt.figure(num).savefig(buf, format="png", dpi=72, bbox_inches="tight")
                data = {"text/plain": f"<Figure {num}>"}
                if buf.tell() <= FIGURE_BYTES:
                    data["image/png"] = base64.b64encode(buf.getvalue()).decode("ascii")
                else:
                    data["text/plain"] = f"<Figure {num}: its image is too large to keep>"
                outputs.append({"output_type": "display_data", "metadata": {}, "data": data})
            plt.close("all")
        except Exception:  # noqa: BLE001 - a broken figure must not stop the run
            pass
        return outputs


def _safe_repr(value):
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001
        text = "<unprintable value>"
    return text[:20000]


def _transform(source):
    """IPython syntax (`%time ...`, `!ls`) becomes calls on a minimal stand-in shell."""
    if "%" not in source and "!" not in source:
        return source
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - leave it to the parser to report
        return source


class _Shell:
    """What `get_ipython()` returns here: line and cell magics that only run their code."""

    def __init__(self, namespace):
        self.ns = namespace

    def run_line_magic(self, name, line, _stack_depth=1):
        if name in ("time", "timeit", "prun") and line.strip():
            code = line.split(None, 0)[0]
            if name == "timeit":
                code = " ".join(w for w in code.split() if not w.startswith("-") and not w.isdigit())
            return eval(compile(code, "<magic>", "eval"), self.ns)  # noqa: S307
        print(f"%{name}: not available in the grader (ignored)")
        return None

    def run_cell_magic(self, name, line, cell):
        if name in ("time", "timeit", "capture"):
            exec(compile(cell, "<magic>", "exec"), self.ns)  # noqa: S102
            return None
        print(f"%%{name}: not available in the grader (ignored)")
        return None

    def system(self, cmd):
        print(f"!{cmd}: shell commands do not run in the grader")

    getoutput = system


def main():
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdin.close()
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    fd = channel.fileno()
    os.register_at_fork(after_in_child=lambda: _close(fd))  # forked workers cannot write to the channel
    os.dup2(2, 1)  # C-level writes to fd 1 (and prints to sys.__stdout__) go to stderr, not the channel
    os.environ.setdefault("MPLBACKEND", "Agg")
    _copy_lab_files(os.environ.get("COURSE_FILES", ""))
    sys.path.insert(0, os.getcwd())  # as in Jupyter, files beside the notebook import
    signal.signal(signal.SIGALRM, _alarm)
    runner = Runner(job, channel)
    runner.main.__dict__["get_ipython"] = lambda: _Shell(runner.main.__dict__)
    runner.run()
    channel.close()
    return 0


def _copy_lab_files(folder):
    """The lab's released data files (read-only in the sandbox) go beside the notebook, as in JupyterLab."""
    if not folder or not os.path.isdir(folder):
        return
    for name in os.listdir(folder):
        src = os.path.join(folder, name)
        if os.path.isfile(src) and not os.path.exists(name):
            with open(src, "rb") as f, open(name, "wb") as g:
                g.write(f.read())


def _close(fd):
    try:
        os.close(fd)
    except OSError:
        pass


def _alarm(signum, frame):
    raise CellTimeout()


# ---- warm mode: one sandbox imports torch once and forks a fresh, isolated child per hand-in ----
#
#     python sandbox_runner.py --warm torch,numpy,... <fd of the control socket>
#
# The parent (the "zygote") never runs learner code and never reads a job: it imports the heavy modules,
# then for each hand-in receives three file descriptors from the grader (the job's stdin, the result
# channel, stderr), forks, and waits. The child reports itself to the grader (whose kernel learns its pid
# from the socket's credentials), closes the socket, gives itself private mounts (new, empty tmpfs for the
# hand-in's folder, /tmp and /dev/shm, locked under a second user namespace so they cannot be unmounted),
# a private IPC namespace, and then runs `main()` exactly as a cold sandbox would: it blocks
# on reading its job, which the grader writes only once it has moved the child into the hand-in's own
# memory cgroup. When the child ends, the parent kills every process the hand-in left (kill(-1): all of
# this sandbox's processes but itself and init), reaps them (it is their subreaper) and only then tells
# the grader it is free. It is not dumpable, so a hand-in can neither trace it nor read its memory; if a
# hand-in kills it, the grader starts another. If the grader goes away, so does the sandbox.

PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 3, 4, 36
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x20000, 0x08000000, 0x10000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 0x1000, 0x4000, 1 << 18


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _user_namespace(libc, flags):
    """Enter a new user namespace (and the namespaces in `flags`) as the same uid and gid."""
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER | flags), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)


def isolate(spec):
    """Private, empty writable places for one hand-in; see the comment above."""
    libc = _libc()
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # else /proc/self/uid_map belongs to root and cannot be written
    # Not a new network namespace: its loopback would be down (ranks rendezvous on 127.0.0.1), and the
    # sandbox's own has no way out; sockets die with the processes that hold them. IPC objects outlive
    # their processes, so IPC is private to each child.
    _user_namespace(libc, CLONE_NEWNS | CLONE_NEWIPC)
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    for path, mode in spec["tmpfs"]:
        # Read-only binds that lie under the folder (a venv under /tmp) are kept: held by a descriptor
        # while the new tmpfs covers them, then bound back at the same place.
        held = [(m, os.open(m, os.O_PATH)) for m in _mounts_under(path)]
        options = f"size={int(spec['disk'])},mode={mode}".encode()
        _check(libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options), f"mount {path}")
        for m, fd in held:
            os.makedirs(m, exist_ok=True)
            _check(libc.mount(f"/proc/self/fd/{fd}".encode(), m.encode(), None, MS_BIND | MS_REC, None),
                   f"bind {m}")
            os.close(fd)
    _user_namespace(libc, CLONE_NEWNS)  # the mounts above are now locked: the hand-in cannot unmount them
    os.chdir(spec["cwd"])
    import resource

    if spec.get("cpu_seconds"):
        resource.setrlimit(resource.RLIMIT_CPU, (int(spec["cpu_seconds"]),) * 2)
    if spec.get("memory"):  # where the grader has no memory cgroup
        resource.setrlimit(resource.RLIMIT_DATA, (int(spec["memory"]),) * 2)


def _mounts_under(path):
    """The outermost mount points strictly below `path`, from /proc/self/mountinfo."""
    points = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            point = line.split()[4].encode().decode("unicode_escape")  # octal escapes: \040 for a space
            if point.startswith(path.rstrip("/") + "/"):
                points.append(point)
    return [p for p in points if not any(p != q and p.startswith(q + "/") for q in points)]


def _receive(sock):
    """(message, fds) from the grader; ({}, []) when it has gone."""
    import socket

    try:
        data, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, 8)
    except OSError:
        return {}, []
    if not data:
        return {}, []
    return json.loads(data.decode("utf-8")), fds


def _kill_the_rest(libc):
    """Kill and reap every process of this sandbox but this one (and its init, which kill(-1) spares)."""
    for _ in range(100):
        libc.kill(-1, signal.SIGKILL)
        try:
            while True:
                os.waitpid(-1, 0)
        except ChildProcessError:
            pass
        if not [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]:
            return True
        time.sleep(0.01)
    return False


def _wait_or_orphaned(pid, sock):
    """The child's wait status, or None as soon as the grader's end of the socket closes (the grader died:
    the sandbox must not outlive it). The grader sends nothing while a child runs."""
    import select

    pidfd = os.pidfd_open(pid)
    try:
        while True:
            ready, _, _ = select.select([pidfd, sock], [], [])
            if pidfd in ready:
                return os.waitpid(pid, 0)[1]
            if not sock.recv(1 << 12):
                return None
    finally:
        os.close(pidfd)


def zygote(sock_fd, warm):
    import socket

    libc = _libc()
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    os.environ.setdefault("MPLBACKEND", "Agg")
    sock = socket.socket(fileno=sock_fd)
    t0, failed = time.perf_counter(), []
    for name in warm:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - a module that fails here is imported (or fails) in the hand-in
            failed.append(name)
    seconds = round(time.perf_counter() - t0, 2)
    _take_mode_counts()
    marker = f"/tmp/.warm-{os.getpid()}"
    open(marker, "w").close()
    why_r, why_w = os.pipe()
    probe = os.fork()  # can this machine give a child its private mounts? (nested user namespaces)
    if probe == 0:
        why = "the sandbox's own /tmp is still visible after isolation"
        try:
            isolate({"disk": 1 << 20, "cwd": "/", "tmpfs": [["/tmp", "1777"]]})
            if not os.path.exists(marker) and os.path.isfile(sys.executable):
                os._exit(0)
        except BaseException as e:  # noqa: BLE001
            why = f"{type(e).__name__}: {e}"
        os.write(why_w, why.encode()[:4000])
        os._exit(1)
    os.close(why_w)
    os.waitpid(probe, 0)
    why = os.read(why_r, 4096).decode("utf-8", "replace")
    os.close(why_r)
    sock.send(json.dumps({"event": "warm", "seconds": seconds, "failed": failed, "isolation": not why,
                          "why": why, "dumpable": libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)}).encode())
    if why:
        return 1
    while True:
        spec, fds = _receive(sock)
        if not spec:
            return 0
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                sock.send(b'{"event": "ready"}')  # the grader reads this child's pid from the credentials
                sock.close()
                for target, fd in enumerate(fds):
                    os.dup2(fd, target)
                os.closerange(3, 1 << 16)
                isolate(spec)
                code = main()
            except BaseException:  # noqa: BLE001 - whatever happens, the child never returns into the loop
                traceback.print_exc()
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code or 0)
        for fd in fds:
            os.close(fd)
        wait_status = _wait_or_orphaned(pid, sock)
        clean = _kill_the_rest(libc)
        if wait_status is None:
            return 0  # the grader has gone: nothing the hand-in started survives it
        sock.send(json.dumps({"event": "free", "status": os.waitstatus_to_exitcode(wait_status),
                              "clean": clean}).encode())


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--warm":
        sys.exit(zygote(int(sys.argv[3]), [m for m in sys.argv[2].split(",") if m]))
    sys.exit(main())
