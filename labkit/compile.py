"""Helpers for week 9 (graph capture and compilation: FX, Dynamo, AOTAutograd, inductor).

- `format_graph(gm)`: the nodes of an FX graph as an aligned table (opcode, name, target, args, users).
  FX's own `Graph.print_tabular()` needs the `tabulate` package, which the course does not install.
- `check_graph_module`, `check_counter`: the lab's own test checks, with teaching messages (a pass must return
  a GraphModule whose graph lints; a Counter must be a real Counter with exactly the expected entries). The
  generic ones (`check_close`, `check_int`, ...) are in `labkit.testing`.
- `recorded_calls(owner, name)`: a context manager that records every call of a method (say
  `torch.fx.Graph.eliminate_dead_code`) made inside it, for tests that forbid a built-in.
- `random_program(rng, ...)`: a small random Python function built from a menu of statements (silu
  patterns in every spelling, look-alikes that are not silu, other ops, dead code, in-place updates in
  several spellings, an assert),
  with what its traced graph must contain: test input for graph passes, like `random_view` for views.
- `plot_compile_tradeoff`: the walkthrough's picture of what compiling costs and what it pays back.

It ships to learners and holds no answers.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

from labkit.testing import LabCheckFailure, fail

__all__ = ["Program", "check_counter", "check_graph_module", "format_graph", "plot_compile_tradeoff", "random_program",
           "recorded_calls"]


# ---- reading graphs ------------------------------------------------------------------------------

_OPERATOR_NAMES = {getattr(operator, n): f"operator.{n}" for n in dir(operator) if not n.startswith("_")}


def _target_text(node: torch.fx.Node) -> str:
    t = node.target
    if node.op == "call_module":
        owner = node.graph.owning_module
        sub = owner.get_submodule(t) if owner is not None else None
        return f"self.{t} ({type(sub).__name__})" if sub is not None else f"self.{t}"
    if node.op == "call_method":
        return f".{t}()"
    if node.op == "get_attr":
        return f"self.{t}"
    if node.op in ("placeholder", "output"):
        return ""
    if isinstance(t, torch._ops.OpOverload):
        return str(t)  # aten.mm.default
    if t in _OPERATOR_NAMES:
        return _OPERATOR_NAMES[t]
    module = getattr(t, "__module__", None) or ""
    name = getattr(t, "__name__", None) or repr(t)
    if module.startswith("torch.nn.functional"):
        module = "F"
    elif module in ("torch._C._VariableFunctions", "torch._C"):
        module = "torch"
    return f"{module}.{name}" if module else name


def _arg_text(a: Any) -> str:
    if isinstance(a, torch.fx.Node):
        return f"%{a.name}"
    if isinstance(a, (tuple, list)):
        inner = ", ".join(_arg_text(x) for x in a)
        return f"({inner},)" if isinstance(a, tuple) and len(a) == 1 else (
            f"({inner})" if isinstance(a, tuple) else f"[{inner}]")
    if isinstance(a, torch.Tensor):
        return f"tensor{tuple(a.shape)}"
    return repr(a)


def format_graph(gm: torch.fx.GraphModule | torch.fx.Graph, width: int = 60) -> str:
    """The nodes of an FX graph, one per line: opcode, name, target, arguments, number of users.

    Arguments that are other nodes are written `%name`, as in `print(gm.graph)`. Cells wider than
    `width` characters are cut with an ellipsis.
    """
    graph = gm.graph if isinstance(gm, torch.fx.GraphModule) else gm
    rows = [("opcode", "name", "target", "args / kwargs", "users")]
    for n in graph.nodes:
        args = ", ".join([_arg_text(a) for a in n.args] + [f"{k}={_arg_text(v)}" for k, v in n.kwargs.items()])
        rows.append((n.op, n.name, _target_text(n), args, str(len(n.users))))

    def cut(s: str) -> str:
        return s if len(s) <= width else s[: width - 1] + "…"

    rows = [tuple(cut(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# ---- test checks ---------------------------------------------------------------------------------

def check_graph_module(what: str, got: Any) -> torch.fx.GraphModule:
    """`got` must be a torch.fx.GraphModule whose graph passes `lint()`; returns it."""
    if not isinstance(got, torch.fx.GraphModule):
        fail(f"{what}: type", "a torch.fx.GraphModule", type(got).__name__,
             "return the GraphModule (modified in place, or a new one), not its graph or its code")
    try:
        got.graph.lint()
    except Exception as exc:  # noqa: BLE001 - any lint failure is the learner's to fix
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LabCheckFailure(
            f"{what}: graph.lint() failed: {msg}\n  likely cause: a new node was inserted in the wrong place "
            "(use `with graph.inserting_before(node):`), or a node was erased while something still used it"
        ) from None
    return got


def check_counter(what: str, got: Any, expected: dict[str, int], cause: str = "") -> None:
    """`got` must be a collections.Counter with str keys and int counts, equal to `expected`
    (no extra keys, not even with a count of 0)."""
    if type(got) is not Counter:
        fail(f"{what}: type", "a collections.Counter", type(got).__name__,
             "build the result with collections.Counter() and return it")
    bad = [k for k, v in got.items() if type(k) is not str or type(v) is not int]
    if bad:
        fail(f"{what}: keys and counts", "str keys with int counts", {k: got[k] for k in bad[:3]},
             "key each operation by a name (a str), and count with += 1")
    want = {k: v for k, v in expected.items() if v}
    if dict(got) != want:
        missing = {k: v for k, v in want.items() if got.get(k) != v}
        extra = {k: v for k, v in got.items() if k not in want}
        fail(f"{what}\n  wrong or missing: {missing}\n  not expected:     {extra}", dict(sorted(want.items())),
             dict(sorted(got.items())), cause)


@contextlib.contextmanager
def recorded_calls(owner: Any, name: str) -> Iterator[list]:
    """Record every call of `owner.<name>` made inside the block (the call still happens).

        with recorded_calls(torch.fx.Graph, "eliminate_dead_code") as calls:
            my_pass(gm)
        assert not calls

    Each entry is the (args, kwargs) of one call. The original attribute is put back on exit,
    even when the block raises.
    """
    original = getattr(owner, name)
    calls: list = []

    @functools.wraps(original)
    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return original(*args, **kwargs)

    setattr(owner, name, spy)
    try:
        yield calls
    finally:
        setattr(owner, name, original)


# ---- random programs ----------------------------------------------------------------------------

# name: (source template, the ops symbolic_trace records for it keyed by function/method name,
#        silu patterns it holds, sigmoid and multiplication nodes a silu fusion must leave in place)
# {o} is the new variable, {a} and {b} earlier ones (b != a), {s} a helper variable.
STATEMENTS: dict[str, tuple[str, dict[str, int], int, int, int]] = {
    "silu": ("{o} = {a} * torch.sigmoid({a})", {"mul": 1, "sigmoid": 1}, 1, 0, 0),
    "silu_reversed": ("{o} = torch.sigmoid({a}) * {a}", {"mul": 1, "sigmoid": 1}, 1, 0, 0),
    "silu_torch_mul": ("{o} = torch.mul({a}, torch.sigmoid({a}))", {"mul": 1, "sigmoid": 1}, 1, 0, 0),
    "silu_method": ("{o} = {a}.mul({a}.sigmoid())", {"mul": 1, "sigmoid": 1}, 1, 0, 0),
    "silu_method_reversed": ("{o} = {a}.sigmoid().mul({a})", {"mul": 1, "sigmoid": 1}, 1, 0, 0),
    "silu_mixed": ("{o} = {a} * {a}.sigmoid()", {"mul": 1, "sigmoid": 1}, 1, 0, 0),
    "silu_shared": ("{s} = torch.sigmoid({a})\n{o} = {a} * {s} + {s}", {"sigmoid": 1, "mul": 1, "add": 1}, 1, 1, 0),
    "gate": ("{o} = {a} * torch.sigmoid({b})", {"mul": 1, "sigmoid": 1}, 0, 1, 1),
    "sigmoid_squared": ("{o} = torch.sigmoid({a}) * torch.sigmoid({a})", {"mul": 1, "sigmoid": 2}, 0, 2, 1),
    "scale": ("{o} = {a} * 0.5", {"mul": 1}, 0, 0, 1),
    "product": ("{o} = {a} * {b}", {"mul": 1}, 0, 0, 1),
    "cos": ("{o} = torch.cos({a})", {"cos": 1}, 0, 0, 0),
    "tanh": ("{o} = {a}.tanh()", {"tanh": 1}, 0, 0, 0),
    "relu": ("{o} = F.relu({a})", {"relu": 1}, 0, 0, 0),
    "add": ("{o} = {a} + {b}", {"add": 1}, 0, 0, 0),
    "centre": ("{o} = {a} - {a}.mean(dim=-1, keepdim=True)", {"mean": 1, "sub": 1}, 0, 0, 0),
    "sin": ("{o} = torch.sin({a})", {"sin": 1}, 0, 0, 0),
    "third": ("{o} = -{a} / 3.0", {"neg": 1, "truediv": 1}, 0, 0, 0),
    "flip": ("{o} = {a}.flip(-1)", {"flip": 1}, 0, 0, 0),
    "first_row": ("{o} = {a}[:1]", {"getitem": 1}, 0, 0, 0),
    "add_inplace": ("{a}.add_(0.25)", {"add_": 1}, 0, 0, 0),
    "mul_inplace": ("{a}.mul_(0.5)", {"mul_": 1}, 0, 0, 0),
    "clamp_inplace": ("{a}.clamp_(-2.0, 2.0)", {"clamp_": 1}, 0, 0, 0),
    "relu_inplace": ("torch.relu_({a})", {"relu_": 1}, 0, 0, 0),
    "sigmoid_inplace": ("torch.sigmoid_({a})", {"sigmoid_": 1}, 0, 0, 0),
    "relu_kw_inplace": ("F.relu({a}, inplace=True)", {"relu": 1}, 0, 0, 0),
    "hardtanh_kw_inplace": ("F.hardtanh({a}, inplace=True)", {"hardtanh": 1}, 0, 0, 0),
    "assert": ("torch._assert({a}.dim() == 2, 'expected a matrix')", {"dim": 1, "eq": 1, "_assert": 1}, 0, 0, 0),
}
PURE = tuple(k for k in STATEMENTS if not k.endswith("inplace") and k != "assert")


@dataclass
class Program:
    """A random function of `n_inputs` tensors and what its symbolically traced graph holds."""

    source: str
    fn: Callable
    n_inputs: int
    kinds: list[str] = field(default_factory=list)
    op_counts: Counter = field(default_factory=Counter)  # count of each call_function/call_method name
    silu_patterns: int = 0  # multiplications of a value by its own sigmoid
    sigmoids_left: int = 0  # sigmoid nodes a silu fusion must keep (other users, or not a silu)
    muls_left: int = 0  # multiplication nodes a silu fusion must keep

    def inputs(self, rng: random.Random, shape: Sequence[int] = (3, 5), dtype=torch.float32,
               device: str = "cpu") -> list[torch.Tensor]:
        gen = torch.Generator().manual_seed(rng.randrange(2**31))
        return [torch.randn(tuple(shape), generator=gen, dtype=dtype).to(device) for _ in range(self.n_inputs)]


def random_program(rng: random.Random, n_statements: int = 8, kinds: Sequence[str] = PURE,
                   n_inputs: int = 2, name: str = "program") -> Program:
    """A function `program(x0, ..., x{n_inputs-1})` of `n_statements` statements drawn from `kinds`
    (names in `STATEMENTS`), each reading earlier variables, returning the last one plus one earlier
    one. Variables nothing reads are dead code. The function is built with exec() and needs only
    `torch` and `torch.nn.functional as F`.
    """
    names = [f"x{i}" for i in range(n_inputs)]
    lines: list[str] = []
    prog = Program("", None, n_inputs)
    for k in range(n_statements):
        kind = rng.choice([c for c in kinds if c not in ("gate", "add", "product") or len(names) > 1])
        template, ops, silu, sig_left, mul_left = STATEMENTS[kind]
        a = rng.choice(names)
        b = rng.choice([n for n in names if n != a]) if len(names) > 1 else a
        out, helper = f"h{k}", f"s{k}"
        lines += template.format(o=out, a=a, b=b, s=helper).split("\n")
        if "{o}" in template:
            names.append(out)
        prog.kinds.append(kind)
        prog.op_counts.update(ops)
        prog.silu_patterns += silu
        prog.sigmoids_left += sig_left
        prog.muls_left += mul_left
    last = names[-1]
    other = rng.choice(names[:-1]) if len(names) > 1 else last
    lines.append(f"return {last} + {other}")
    prog.op_counts["add"] += 1
    prog.source = f"def {name}({', '.join(f'x{i}' for i in range(n_inputs))}):\n" + \
        "\n".join("    " + line for line in lines) + "\n"
    namespace = {"torch": torch, "F": torch.nn.functional}
    exec(compile(prog.source, f"<{name}>", "exec"), namespace)  # noqa: S102 - our own generated source
    prog.fn = namespace[name]
    return prog


# ---- plots ---------------------------------------------------------------------------------------

def plot_compile_tradeoff(axes: Sequence, sizes: Sequence[int], eager_s: Sequence[float],
                          compiled_s: Sequence[float], compile_s: float, label: str = "") -> None:
    """Two panels: the speed-up of the compiled function per call (left), and how many calls it takes
    before the time saved pays back the one-time compile cost (right), both against input size.

    `eager_s` and `compiled_s` are seconds per call at each size; `compile_s` is the one-time cost.
    Where compiling does not make a call faster, nothing is ever paid back: those sizes are marked
    "never" at the top of the right panel.
    """
    from matplotlib.ticker import FuncFormatter

    left, right = axes
    speedup = [e / c for e, c in zip(eager_s, compiled_s)]
    left.plot(sizes, speedup, marker="o", color="tab:blue")
    left.axhline(1.0, color="grey", lw=1, ls="--")
    left.text(sizes[-1], 1.0, "same speed ", va="top", ha="right", fontsize=8, color="grey")
    left.set(xscale="log", yscale="log", xlabel="elements per input",
             ylabel="eager time / compiled time, per call", title="speed-up per call" + (f"\n{label}" if label else ""))
    left.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    left.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    left.grid(True, which="both", alpha=0.3)
    for n, s in zip(sizes, speedup):
        text = f"{s:.2f}x" if s < 10 else f"{s:.0f}x"
        left.annotate(text, (n, s), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    lo, hi = min(speedup + [1.0]), max(speedup + [1.0])
    left.set_ylim(lo / 1.5, hi * 1.8)

    saved = [e - c for e, c in zip(eager_s, compiled_s)]
    pays = [(n, compile_s / s) for n, s in zip(sizes, saved) if s > 0]
    never = [n for n, s in zip(sizes, saved) if s <= 0]
    top = max([k for _, k in pays], default=10.0) * 4
    if pays:
        right.plot([n for n, _ in pays], [k for _, k in pays], marker="o", color="tab:red")
        for n, k in pays:
            right.annotate(f"{k:,.0f}", (n, k), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    for n in never:
        right.scatter([n], [top], marker="x", color="black")
        right.annotate("never", (n, top), textcoords="offset points", xytext=(0, -14), ha="center", fontsize=8)
    right.set(xscale="log", yscale="log", xlabel="elements per input", ylabel="calls to pay back the compile",
              title=f"break-even: calls before the {compile_s:.1f} s compile is paid back")
    right.set_xlim(left.get_xlim())
    right.set_ylim(min([k for _, k in pays], default=1.0) / 3, top * 2)
    right.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    right.grid(True, which="both", alpha=0.3)
