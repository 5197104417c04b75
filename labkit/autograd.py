"""Week 3 (autograd): a picture of the backward graph, and random graphs for tests.

`plot_graph` draws the graph autograd records during a forward pass, read from
`grad_fn` and `next_functions` alone, with matplotlib (no graphviz needed). Each
box is a node; an arrow goes from a node to each entry of its `next_functions`,
the way gradients flow. Nodes sit in rows by their longest distance from the
outputs, so every arrow points down the page.

`random_graph` builds a small random forward computation over the lab's op set
(add, mul, sum, matmul, relu, exp and view ops) with shared subexpressions,
tensors used twice and leaves that no output depends on. The lab's tests use it,
with `forbid_autograd_engine` (torch's own engine is off limits while a
learner's `backward` runs), `call_backward` (a crash becomes a hint) and
`check_gradients`.

Depends only on torch and matplotlib. It holds no lab answers.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass, field

import torch
import torch.autograd.variable

from labkit.testing import LabCheckFailure, check_tensor, fail, not_implemented_hint

__all__ = ["plot_graph", "random_graph", "RandomGraph", "forbid_autograd_engine", "check_gradients",
           "call_backward", "AutogradEngineForbidden"]

_COLORS = {"output": "#f4a582", "op": "#92c5de", "leaf": "#a6dba0"}
_ROW = 1.2  # vertical distance between rows, in data units
_COL = 2.5  # horizontal distance between boxes in a row


def _label(node, names: dict[str, torch.Tensor]) -> tuple[str, str]:
    """(text, kind) for one node; AccumulateGrad boxes name their leaf."""
    if hasattr(node, "variable"):
        var = node.variable
        name = next((k for k, v in names.items() if v is var), "leaf")
        return f"AccumulateGrad\n{name} {tuple(var.shape)}", "leaf"
    return node.name(), "op"


def plot_graph(outputs, names: dict[str, torch.Tensor] | None = None, order=None, ax=None,
               title: str | None = None):
    """Draw the backward graph behind `outputs` (a tensor or a list of tensors).

    Parameters
    ----------
    outputs : torch.Tensor or sequence of tensors
        Tensors with a `grad_fn`: the graph is everything reachable from them.
    names : dict, optional
        `{"x": x, ...}`: leaves to name in their AccumulateGrad boxes.
    order : sequence of nodes, optional
        The order the engine ran the nodes in (collect it with `register_prehook`);
        each box then shows its step number.
    ax : matplotlib Axes, optional
        Where to draw; a new figure sized to the graph is made when omitted.
    title : str, optional

    Returns
    -------
    The matplotlib Axes drawn on.
    """
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch  # here: the lab's tests do not need matplotlib

    if isinstance(outputs, torch.Tensor):
        outputs = [outputs]
    names = names or {}
    roots = [t.grad_fn for t in outputs if t.grad_fn is not None]
    if not roots:
        raise ValueError("plot_graph needs at least one tensor with a grad_fn (a result of a tracked op)")

    # Every node (in discovery order) and every edge, duplicates included.
    index: dict[object, int] = {}
    nodes: list = []
    edges: list[tuple[int, int]] = []
    todo = list(roots)
    for r in roots:
        if r not in index:
            index[r] = len(nodes)
            nodes.append(r)
    while todo:
        node = todo.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            if nxt not in index:
                index[nxt] = len(nodes)
                nodes.append(nxt)
                todo.append(nxt)
            edges.append((index[node], index[nxt]))

    # Rows: the longest distance from an output (relax the edges until nothing changes).
    row = [0] * len(nodes)
    changed = True
    while changed:
        changed = False
        for a, b in edges:
            if row[b] < row[a] + 1:
                row[b] = row[a] + 1
                changed = True

    # Columns: the first row evenly spaced; every later box under the mean of the boxes pointing at it,
    # then pushed apart (keeping the row's mean) so that no two boxes overlap.
    col = [0.0] * len(nodes)
    parents: dict[int, list[int]] = {}
    for a, b in edges:
        parents.setdefault(b, []).append(a)
    n_rows = max(row) + 1
    for k in range(n_rows):
        members = [i for i in range(len(nodes)) if row[i] == k]
        if k == 0:
            want = {i: (j - (len(members) - 1) / 2) * _COL for j, i in enumerate(members)}
        else:
            want = {i: sum(col[p] for p in parents[i]) / len(parents[i]) for i in members}
        members.sort(key=lambda i: (want[i], i))
        placed: list[float] = []
        for i in members:
            placed.append(want[i] if not placed else max(want[i], placed[-1] + _COL))
        shift = sum(want.values()) / len(members) - sum(placed) / len(placed)
        for i, x in zip(members, placed):
            col[i] = x + shift
    span = max(col) - min(col)

    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(max(5.0, 0.95 * span + 2.6), max(3.0, 1.05 * n_rows + 0.9)))

    step = {id(n): k + 1 for k, n in enumerate(order or [])}
    root_ids = {id(r) for r in roots}
    half_w, half_h = 1.05, 0.32
    for i, node in enumerate(nodes):
        text, kind = _label(node, names)
        if id(node) in root_ids:
            kind = "output"
        x, y = col[i], -row[i] * _ROW
        ax.add_patch(FancyBboxPatch((x - half_w, y - half_h), 2 * half_w, 2 * half_h,
                                    boxstyle="round,pad=0.02,rounding_size=0.12",
                                    facecolor=_COLORS[kind], edgecolor="0.3", lw=1))
        ax.text(x, y, text, ha="center", va="center", fontsize=8, linespacing=1.1)
        if id(node) in step:
            ax.text(x - half_w, y + half_h, str(step[id(node)]), ha="center", va="center", fontsize=7,
                    color="white", fontweight="bold",
                    bbox=dict(boxstyle="circle,pad=0.2", facecolor="0.2", edgecolor="none"))

    count: dict[tuple[int, int], int] = {}
    for e in edges:
        count[e] = count.get(e, 0) + 1
    drawn: dict[tuple[int, int], int] = {}
    for a, b in edges:
        k = drawn.get((a, b), 0)
        drawn[(a, b)] = k + 1
        n = count[(a, b)]
        rad = 0.0 if n == 1 else 0.6 * (k / (n - 1) - 0.5)  # repeated edges fan out
        start = (col[a], -row[a] * _ROW - half_h)
        end = (col[b], -row[b] * _ROW + half_h)
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=11, color="0.25", lw=1,
                                     connectionstyle=f"arc3,rad={rad}", shrinkA=1, shrinkB=1))

    ax.set_xlim(min(col) - half_w - 0.3, max(col) + half_w + 0.3)
    ax.set_ylim(-(n_rows - 1) * _ROW - half_h - 0.3, half_h + 0.35)
    ax.axis("off")
    handles = [FancyBboxPatch((0, 0), 1, 1, facecolor=c, edgecolor="0.3") for c in _COLORS.values()]
    ax.legend(handles, ["output's grad_fn", "backward node", "AccumulateGrad (a leaf)"], loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8, frameon=False)
    if title:
        ax.set_title(title, fontsize=11, pad=22)
    return ax


@dataclass
class RandomGraph:
    """A random forward computation, ready for `torch.autograd.grad(outputs, inputs, grad_outputs)`."""

    inputs: list[torch.Tensor]  # leaves with requires_grad=True, in random order
    outputs: list[torch.Tensor]  # non-leaf results (each has a grad_fn)
    grad_outputs: list[torch.Tensor]  # one per output, same shape
    other_leaves: list[torch.Tensor]  # leaves that require grad but are not in `inputs`
    steps: list[str] = field(default_factory=list)  # what was built, for failure messages

    def describe(self) -> str:
        return "; ".join(self.steps)


def _values(rng: random.Random, shape, dtype, device) -> torch.Tensor:
    gen = torch.Generator().manual_seed(rng.randrange(2**31))
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1).to(dtype=dtype, device=device)


def _shape(rng: random.Random, allow_zero: bool) -> tuple[int, ...]:
    sizes = []
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        sizes.append(0 if allow_zero and r < 0.08 else 1 if r < 0.3 else rng.randint(2, 4))
    return tuple(sizes)


def random_graph(rng: random.Random, n_ops: int = 8, n_leaves: int = 3, n_outputs: int = 2,
                 dtype: torch.dtype = torch.float64, device: str = "cpu",
                 allow_zero: bool = False) -> RandomGraph:
    """A random graph over add, mul, sum, matmul, relu, exp and view ops.

    Leaves have values in [-1, 1]; some of them require grad and become `inputs`
    (in random order), one may be left out of every output (its gradient is zero),
    one may require grad but stay out of `inputs`, and one constant does not
    require grad at all. Ops pick their operands from everything built so far, so
    tensors are reused (shared subexpressions, `a * a`), broadcasting happens, and
    some view ops (`unbind`, `chunk`) make nodes with several outputs.
    """
    steps: list[str] = []
    names: dict[int, str] = {}
    n_made = [0]

    def leaf(shape, requires_grad):
        t = _values(rng, shape, dtype, device).requires_grad_(requires_grad)
        names[id(t)] = f"{'x' if requires_grad else 'c'}{n_made[0]}"
        n_made[0] += 1
        steps.append(f"{names[id(t)]} = leaf{tuple(shape)}{'' if requires_grad else ' (no grad)'}")
        return t

    leaves = [leaf(_shape(rng, allow_zero), True) for _ in range(n_leaves)]
    const = leaf(_shape(rng, allow_zero), False)
    pool: list[torch.Tensor] = leaves + [const]
    results: list[torch.Tensor] = []

    def add(t: torch.Tensor, text: str) -> None:
        names[id(t)] = f"t{len(results)}"
        steps.append(f"{names[id(t)]} = {text}")
        pool.append(t)
        results.append(t)

    def n(t):
        return names[id(t)]

    def compatible(a, b):
        try:
            torch.broadcast_shapes(a.shape, b.shape)
            return True
        except RuntimeError:
            return False

    ops = ["add", "mul", "sum", "matmul", "relu", "exp", "view", "view", "share"]
    for _ in range(n_ops):
        op = rng.choice(ops)
        a = rng.choice(pool[-4:] if rng.random() < 0.6 else pool)
        if op in ("add", "mul", "share"):
            if op == "share" or rng.random() < 0.15:
                b = a  # a tensor used twice by one op
            else:
                cands = [b for b in pool if compatible(a, b)]
                b = rng.choice(cands) if cands else None
            if b is None:
                src = rng.choice(pool)
                b = src.sum()
                add(b, f"{n(src)}.sum()")
            if op == "share":
                op = rng.choice(["add", "mul"])
            big = a.detach().abs().amax().item() if a.numel() else 0.0
            if op == "mul" and big > 8:
                op = "add"
            add(a + b if op == "add" else a * b, f"{n(a)} {'+' if op == 'add' else '*'} {n(b)}")
        elif op == "sum":
            if a.dim() and rng.random() < 0.6:
                d, keep = rng.randrange(a.dim()), rng.random() < 0.5
                add(a.sum(d, keepdim=keep), f"{n(a)}.sum({d}, keepdim={keep})")
            else:
                add(a.sum(), f"{n(a)}.sum()")
        elif op == "matmul":
            if a.dim() == 0:
                src, a = a, a.reshape(1)
                add(a, f"{n(src)}.reshape(1)")
            if a.dim() >= 2 and rng.random() < 0.5:
                add(a @ a.mT, f"{n(a)} @ {n(a)}.mT")
            else:
                k = a.shape[-1]
                w = leaf((k, rng.randint(1, 3)) if rng.random() < 0.7 else (k,), rng.random() < 0.8)
                if w.requires_grad:
                    leaves.append(w)
                add(a @ w, f"{n(a)} @ {n(w)}")
        elif op == "relu":
            add(a.relu(), f"{n(a)}.relu()")
        elif op == "exp":
            big = a.detach().amax().item() if a.numel() else 0.0
            if big > 4:
                add(a.relu(), f"{n(a)}.relu()")
            else:
                add(a.exp(), f"{n(a)}.exp()")
        else:
            _random_view(rng, a, add, n)

    tracked = [t for t in results if t.grad_fn is not None]
    if not tracked:  # every op happened to use the constant only: add one that cannot
        add(leaves[0] * 2, f"{n(leaves[0])} * 2")
        tracked = [results[-1]]
    outputs = [tracked[-1]]
    while len(outputs) < n_outputs and len(tracked) > 1:
        outputs.append(rng.choice(tracked[:-1]))
    rng.shuffle(outputs)
    grad_outputs = [_values(rng, o.shape, dtype, device) for o in outputs]

    inputs = list(leaves)
    unused = leaf(_shape(rng, allow_zero), True)  # no output depends on it: its gradient is zero
    if rng.random() < 0.5:
        inputs.append(unused)
    rng.shuffle(inputs)
    other = []
    if len(inputs) > 1 and rng.random() < 0.4:
        other.append(inputs.pop())  # requires grad, but not asked for
    steps.append(f"outputs [{', '.join(n(o) for o in outputs)}], inputs [{', '.join(n(i) for i in inputs)}]")
    return RandomGraph(inputs, outputs, grad_outputs, other, steps)


def _random_view(rng: random.Random, a: torch.Tensor, add, n) -> None:
    choices = ["reshape", "unsqueeze", "expand"]
    if a.dim() >= 2:
        choices += ["transpose", "permute", "mT"]
    if a.dim() >= 1 and a.shape[0] > 0:
        choices += ["select", "slice", "unbind", "chunk"]
    if 1 in a.shape:
        choices.append("squeeze")
    kind = rng.choice(choices)
    if kind == "reshape":
        if a.is_contiguous():
            add(a.view(-1), f"{n(a)}.view(-1)")
        else:
            add(a.reshape(-1), f"{n(a)}.reshape(-1)")
    elif kind == "unsqueeze":
        d = rng.randint(0, a.dim())
        add(a.unsqueeze(d), f"{n(a)}.unsqueeze({d})")
    elif kind == "expand":
        add(a.unsqueeze(0).expand(2, *a.shape), f"{n(a)}.unsqueeze(0).expand(2, ...)")
    elif kind == "transpose":
        d0, d1 = rng.sample(range(a.dim()), 2)
        add(a.transpose(d0, d1), f"{n(a)}.transpose({d0}, {d1})")
    elif kind == "permute":
        dims = list(range(a.dim()))
        rng.shuffle(dims)
        add(a.permute(*dims), f"{n(a)}.permute{tuple(dims)}")
    elif kind == "mT":
        add(a.mT, f"{n(a)}.mT")
    elif kind == "select":
        i = rng.randrange(a.shape[0])
        add(a[i], f"{n(a)}[{i}]")
    elif kind == "slice":
        add(a[::2], f"{n(a)}[::2]")
    elif kind == "unbind":
        parts = a.unbind(0)
        i = rng.randrange(len(parts))
        add(parts[i], f"{n(a)}.unbind(0)[{i}]")
        if len(parts) > 1 and rng.random() < 0.5:
            j = rng.randrange(len(parts))
            add(parts[j], f"{n(a)}.unbind(0)[{j}]")
    elif kind == "chunk":
        parts = a.chunk(2, dim=0)
        i = rng.randrange(len(parts))
        add(parts[i], f"{n(a)}.chunk(2)[{i}]")
    else:
        d = a.shape.index(1)
        add(a.squeeze(d), f"{n(a)}.squeeze({d})")


class AutogradEngineForbidden(Exception):
    """Raised when code asks torch's autograd engine to run while it is forbidden."""


@dataclass
class EngineGuard:
    """What `forbid_autograd_engine` saw: calls into torch's engine, and nodes it ran."""

    calls: list[str] = field(default_factory=list)
    nodes_run: list[str] = field(default_factory=list)

    def check(self, what: str) -> None:
        if self.calls or self.nodes_run:
            fail(f"{what}: torch's autograd engine must not run", "no call into the engine",
                 self.calls + [f"the engine ran node {n}" for n in self.nodes_run][:5],
                 "walk the graph yourself and call each node (node(*grads)); torch.autograd.grad, "
                 "torch.autograd.backward, Tensor.backward and torch.func all run torch's own engine")


class _NoEngine:
    def __init__(self, guard: EngineGuard):
        self._guard = guard

    def __getattr__(self, attr):
        self._guard.calls.append(f"torch's engine ({attr})")
        raise AutogradEngineForbidden(
            "torch's autograd engine is off limits here: walk the graph and call each node yourself")


def _recorder(guard: EngineGuard, name: str):
    def prehook(grads):
        guard.nodes_run.append(name)
    return prehook


@contextlib.contextmanager
def forbid_autograd_engine(outputs=()):
    """Inside the block, torch's autograd engine refuses to run.

    `torch.autograd.grad`, `torch.autograd.backward` and `Tensor.backward` raise
    `AutogradEngineForbidden`, and so does the engine object they all end up in
    (whatever the route: torch.func, a saved reference to `grad`). Every node
    reachable from `outputs` also gets a pre-hook: hooks run only when torch's
    engine executes a node, never when Python calls `node(*grads)` directly.
    Yields an `EngineGuard`; call its `check(what)` after the block.
    """
    guard = EngineGuard()
    if isinstance(outputs, torch.Tensor):
        outputs = [outputs]
    handles = []
    seen: set = set()
    todo = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        handles.append(node.register_prehook(_recorder(guard, node.name())))
        todo.extend(nxt for nxt, _ in node.next_functions if nxt is not None)

    def refuse(name):
        def refused(*args, **kwargs):
            guard.calls.append(name)
            raise AutogradEngineForbidden(f"{name} is off limits here: walk the graph and call each node yourself")
        return refused

    Variable = torch.autograd.variable.Variable
    saved = (torch.autograd.grad, torch.autograd.backward, torch.Tensor.backward, Variable._execution_engine)
    torch.autograd.grad = refuse("torch.autograd.grad")
    torch.autograd.backward = refuse("torch.autograd.backward")
    torch.Tensor.backward = refuse("Tensor.backward")
    Variable._execution_engine = _NoEngine(guard)
    try:
        yield guard
    finally:
        torch.autograd.grad, torch.autograd.backward, torch.Tensor.backward, Variable._execution_engine = saved
        for h in handles:
            h.remove()


def check_gradients(what: str, got, expected, inputs, rtol: float | None = None, atol: float | None = None) -> None:
    """`got` must be a tuple with one gradient per input, as `torch.autograd.grad(..., allow_unused=True,
    materialize_grads=True)` returns: a real tensor of the input's shape, dtype and device (zeros, not None,
    for an input no output depends on) that does not require grad, close to `expected`.

    The lab's own rules come first, each with the engine-specific hint; the values are then compared by
    `labkit.testing.check_tensor` (float64: rtol 1e-9, atol 1e-12; else 1e-4, 1e-5, unless given). On the
    meta device there are no values: shape, dtype and device are all there is to check."""
    if type(got) is not tuple:
        fail(f"{what}: return type", "a tuple (one gradient per input)", type(got).__name__,
             "return tuple(gradients), in the order of `inputs`")
    if len(got) != len(inputs):
        fail(f"{what}: number of gradients", len(inputs), len(got), "one gradient per input, in order")
    for i, (g, e, x) in enumerate(zip(got, expected, inputs)):
        label = f"{what}: gradient {i} (input of shape {tuple(x.shape)})"
        if g is None:
            fail(label, "a tensor of zeros", None,
                 "no output depends on this input: return torch.zeros_like(input), not None")
        if type(g) is not torch.Tensor:
            fail(label, "a torch.Tensor", type(g).__name__, "return the gradient tensors themselves")
        if tuple(g.shape) != tuple(x.shape):
            fail(f"{label}: shape", tuple(x.shape), tuple(g.shape),
                 "a broadcast input gets a gradient of the broadcast shape from its consumer: reduce it with "
                 "grad.sum_to_size(next_node._input_metadata[nr].shape), as torch's engine does")
        if g.dtype != x.dtype or g.device != x.device:
            fail(f"{label}: dtype/device", (x.dtype, x.device), (g.dtype, g.device),
                 "a gradient has its input's dtype and device: make zeros with torch.zeros_like(input), which "
                 "keeps both (torch.zeros(input.shape) is float32 on the CPU)")
        if g.requires_grad:
            fail(f"{label}: requires_grad", False, True,
                 "call the nodes under torch.no_grad(): without create_graph, gradients are plain tensors")
        if x.device.type == "meta":
            continue  # no data to compare
        r, a = ((1e-9, 1e-12) if x.dtype == torch.float64 else (1e-4, 1e-5)) if rtol is None else (rtol, atol)
        check_tensor(label, g, e, rtol=r, atol=a,
                     cause="a node ran before all of its gradients had arrived (use a topological order), a "
                           "gradient was overwritten instead of added, or the outputs' nodes were not seeded "
                           "with grad_outputs (each into slot output.output_nr)")


def _backward_hint(exc: BaseException) -> str:
    msg = str(exc)
    if isinstance(exc, NotImplementedError):
        return not_implemented_hint(exc)
    if isinstance(exc, AutogradEngineForbidden):
        return "torch's engine is off limits: call each node yourself with node(*grads)"
    if isinstance(exc, RecursionError):
        return ("the graph is deeper than Python's recursion limit: walk it with an explicit stack or queue, "
                "not with recursion")
    if isinstance(exc, TypeError) and "argument" in msg:
        return ("node(*grads) takes one gradient per output of the forward op, len(node._input_metadata) of them, "
                "with None where no gradient arrived")
    if "0-d tensor" in msg or "expandable" in msg or "shape" in msg or "size" in msg:
        return ("a node with a single entry in next_functions returns a bare tensor, not a tuple (iterating over "
                "it walks its rows); and each gradient must be reduced to its slot's shape with "
                "grad.sum_to_size(next_node._input_metadata[nr].shape)")
    return "your code raised where it should have returned the gradients"


def call_backward(what: str, backward, outputs, inputs, grad_outputs):
    """Call a learner's `backward`, turning a crash into a failure that names the likely cause."""
    try:
        return backward(outputs, inputs, grad_outputs)
    except LabCheckFailure:
        raise
    except Exception as exc:  # noqa: BLE001 - every crash becomes a teaching message
        raise LabCheckFailure(f"{what} raised {type(exc).__name__}: {str(exc)[:300]}\n"
                              f"  likely cause: {_backward_hint(exc)}") from None
