"""Stage "probe": what of a hidden test runs in the learner's process.

An instructor writes a hidden test cell as a whole test: it builds inputs, calls the lab's
functions and checks what comes back against expected values, often computed by a reference
written in the cell itself. Only the first two parts may run where the learner's code runs:
anything else there can be read by that code (a plain `reference_bfs(t)` inside an answer finds
the cell's own reference at call time) and used to answer without solving the task.

`probe(source, interface)` derives, on the trusted side, the program the sandbox runs in place of
a hidden cell. It keeps what builds inputs and every call that reaches the lab's interface, and
drops the checks and what only the checks needed:

- a check is an `assert`, a `raise`, or a call to `fail`, `check*`, `expect*` or `assert*` (a name or
  a method) that the cell does not define as a function calling the lab;
- a dropped check's arguments that call the lab run on their own (`check_int(w, f(x), 3)` keeps
  `f(x)`; a `lambda: f(x)` is called), inside `try` so that a raise is recorded, not fatal;
- a check handed a lab function itself (`check_raises(w, f, bad)`, which calls it) is kept whole,
  and listed in `Probe.kept`: its arguments reach the sandbox;
- functions the cell defines are probed the same way; an argument a probed function no longer
  reads is passed as None at every call, and its default dropped;
- then, until nothing changes, a definition no kept code reads is dropped (an `expected = ...`,
  a `def reference(...)`, a `cases.append(...)` into a list nobody reads), and a `for` over a
  literal table loses the columns nobody reads (the expected results of test vectors); a
  statement whose line says `# probe: keep` stays (a bound measured on the machine, no secret);
- a cell with a line `# probe: whole` runs as written, checks and all: the escape hatch for a test
  whose probe does not keep its meaning yet (listed in `Probe.kept`; THREATS.md names them);
- a statement on a line that says `# probe: quiet` runs with the lab's calls inside it unrecorded
  (a timed replay whose retries depend on the clock);
- a name assigned on a line that says `# probe: lab` counts as one of the lab's functions (an
  operator the lab registered, `torch.ops.lab02.scaled_add`, or a compiled function that calls it);
- last, each dropped check becomes `__observe__(lambda: e)` for every part `e` of it that reads
  only names the probe kept: the judge compares those values with the reference's (a
  condition such as `calls > n_relu` is observed whole; `got != expected`, with `expected`
  dropped, as `got`).

The reference solution and every hand-in run the same probe, so the calls line up one for one;
the judge (`judge.py`) compares what they returned. Comments do not survive (`ast.unparse`).
"""

from __future__ import annotations

import ast
import copy
import re
from collections import Counter
from dataclasses import dataclass, field

CHECK = re.compile(r"^_*(check|fail|expect(?!ed)|assert)", re.I)  # not `expected_round(...)`: a value
DROPPED_CALLS = {"print", "display"}
LAB = re.compile(r"#\s*probe:\s*lab\b")  # names that reach the lab's code: `op = torch.ops.lab.f  # probe: lab`
RAISES_INPUTS_FROM = 3  # check_raises(what, exception, fn, *inputs): the inputs' index
WHOLE = re.compile(r"#\s*probe:\s*whole\b")  # a cell whose probe does not yet keep its meaning: it runs whole
QUIET_LINE = re.compile(r"#\s*probe:\s*quiet\b")  # a statement whose calls of the lab are not recorded
QUIET_FN = "__quiet__"  # sandbox_runner.Observer.quiet
KEEP = re.compile(r"#\s*probe:\s*keep\b")  # a definition the probe keeps: a check's bound that is no secret
OBSERVE = "__observe__"  # the runner's: records what a thunk returns or raises (sandbox_runner.Observer.observe)
PLACEHOLDER = "\0check "
AUTOGRAD = {"grad", "backward", "gradcheck", "gradgradcheck", "vjp", "jvp"}  # they run the answer's backward
CALLERS = {"call", "call_backward", "record_aten_ops"}  # labkit helpers that call the function they are handed
# labkit helpers the runner observes (settings.OUT_OF_PROCESS_TRIALS) that run whatever they are handed in other
# processes: to the probe they are not lab functions, so `run_ranks(_train, 2)` reaches the lab through `_train`
# and `expected = run_ranks(_reference, 2)`, a reference run in ranks, is dropped like any expected value
RUNS_ANYTHING = {"run_ranks"}
WRAPPERS = {"compile", "partial", "jit", "vmap"}  # f = torch.compile(lambda x: lab(x)) is a lab function too
TOLERANCE = {"rtol", "atol", "ulps"}  # a check's keywords that travel with the values it looked at
QUIET = {"what", "where", "cause", "msg", "message", "hint"}  # descriptions a check prints, not what it checks
FILLS = {"append", "extend", "add", "update", "insert", "setdefault"}  # methods that only fill a container


@dataclass
class Probe:
    source: str
    kept: list[str] = field(default_factory=list)  # checks kept whole, as "line N: text"
    restored: list[str] = field(default_factory=list)  # the cell's own check functions, run as written
    dropped: int = 0  # statements the probe does not run


def probe(source: str, interface) -> Probe:
    from autograder.notebooks import parse_python

    tree = parse_python(source)
    lines = source.splitlines()
    if any(WHOLE.search(line) for line in lines):  # the cell runs as written (listed: its checks reach the sandbox)
        return Probe(source, [f"the whole cell ({next(line.strip() for line in lines if WHOLE.search(line))})"])
    keep = {n for n, line in enumerate(lines, 1) if KEEP.search(line)}
    lab = {n for n, line in enumerate(lines, 1) if LAB.search(line)}
    quiet = {n for n, line in enumerate(lines, 1) if QUIET_LINE.search(line)}
    for st in ast.walk(tree):  # `seconds = timed(sim)  # probe: quiet`: run, its calls of the lab unrecorded
        if isinstance(st, (ast.Assign, ast.Expr)) and st.lineno in quiet and isinstance(st.value, ast.Call):
            st.value = ast.copy_location(
                ast.Call(ast.Name(QUIET_FN, ast.Load()), [ast.Lambda(_no_args(), st.value)], []), st.value)
            keep.add(st.lineno)
    ast.fix_missing_locations(tree)
    names = {t for s in ast.walk(tree) if isinstance(s, ast.Assign) and s.lineno in lab
             for target in s.targets for t in _target_names(target)}
    return _Prober(tree, (set(interface) - RUNS_ANYTHING) | names, keep).run()


def _names(node) -> set[str]:
    """The names `node` reads from outside it (a comprehension's or a lambda's own variables excluded)."""
    names, bound = set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.comprehension):
            bound.update(_target_names(n.target))
        elif isinstance(n, ast.Lambda):
            a = n.args
            bound.update(x.arg for x in a.posonlyargs + a.args + a.kwonlyargs)
    return names - bound


def _root(expr) -> str:
    """The variable a call's callee starts from: `alloc` for `alloc.malloc`, `torch` for
    `torch.empty(s).stride`."""
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else ""


def _loads(node) -> Counter:
    return Counter(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store))


def _own_loads(st) -> Counter:
    """What a definition reads (a def: its decorators and defaults; its body counts once it lives)."""
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = st.args
        return sum((_loads(x) for x in st.decorator_list + a.defaults + [d for d in a.kw_defaults if d]), Counter())
    return _loads(st)


CONTAINERS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)


def _header(st) -> ast.AST:
    """The part of a compound statement that runs by itself: a loop's iterable, a branch's test, a with's items."""
    if isinstance(st, (ast.For, ast.AsyncFor)):
        return st.iter
    if isinstance(st, (ast.If, ast.While)):
        return st.test
    if isinstance(st, (ast.With, ast.AsyncWith)):
        return ast.Tuple([i.context_expr for i in st.items], ast.Load())
    return ast.Tuple([], ast.Load())


def _header_loads(st) -> Counter:
    """What a statement that stays reads itself, its nested statements apart."""
    if isinstance(st, (ast.For, ast.AsyncFor)):
        return _loads(st.iter) + _loads(st.target)
    if isinstance(st, (ast.If, ast.While)):
        return _loads(st.test)
    if isinstance(st, (ast.With, ast.AsyncWith)):
        return sum((_loads(i) for i in st.items), Counter())
    if isinstance(st, ast.Try):
        return sum((_loads(h.type) for h in st.handlers if h.type is not None), Counter())
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _own_loads(st)
    return _loads(st)


def _target_names(target) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _target_names(e)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _tolerance_splat(k: ast.keyword) -> bool:
    """`**tol32` or `**(dict(rtol=2e-3, atol=1e-3) if large else tol32)` in a check: the tolerance the test states,
    spelled as a dict. It travels with each value observed, like rtol=/atol= (__observe__ keeps only those keys);
    a check that has one is always observed by its values, never run whole."""
    if k.arg is not None:
        return False
    parts = [k.value.body, k.value.orelse] if isinstance(k.value, ast.IfExp) else [k.value]
    return all(isinstance(p, ast.Name) or (isinstance(p, ast.Call) and isinstance(p.func, ast.Name)
                                           and p.func.id == "dict" and not p.args
                                           and all(x.arg in TOLERANCE for x in p.keywords)) for p in parts)


def _literal_inside(e) -> bool:
    """Whether `e` compares with a literal an expected value may be (numbers written out: `m.shape != (4, 3)`
    is observed as `m.shape`, so that (4, 3) stays out). Strings are names the task gives (`"softplus" in
    op`), a lone number a bound (`t < 0.3 * floor`), and the arguments of a call (`ops.count(2)`) inputs."""
    return any(isinstance(n, ast.Compare) and any(_expected_literal(x) and not isinstance(x, ast.Constant)
                                                  for x in [n.left, *n.comparators])
               for n in ast.walk(e))


def _expected_literal(e) -> bool:
    """A check's argument that is an expected value written out: a number, or a collection holding one."""
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (int, float, complex)) and not isinstance(e.value, bool)
    if isinstance(e, ast.UnaryOp) and isinstance(e.operand, ast.Constant):
        return _expected_literal(e.operand)
    return isinstance(e, (ast.Tuple, ast.List, ast.Set, ast.Dict)) and \
        all(isinstance(y, (ast.Constant, ast.Tuple, ast.List, ast.UnaryOp, ast.unaryop))
            for y in ast.walk(e) if y is not e and not isinstance(y, ast.expr_context)) and \
        any(_expected_literal(y) for y in ast.walk(e) if isinstance(y, ast.Constant))


def _text_names(tree) -> set[str]:
    """Names every assignment of which is a string (a literal, an f-string, a literal table's string column)."""
    def is_text(e) -> bool:
        return isinstance(e, ast.JoinedStr) or (isinstance(e, ast.Constant) and isinstance(e.value, str)) or \
            (isinstance(e, ast.BinOp) and is_text(e.left) and is_text(e.right)) or \
            (isinstance(e, ast.IfExp) and is_text(e.body) and is_text(e.orelse))

    verdict: dict[str, bool] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    verdict[t.id] = verdict.get(t.id, True) and is_text(n.value)
                else:
                    for x in _target_names(t):
                        verdict[x] = False
        elif isinstance(n, (ast.For, ast.comprehension)):
            rows = n.iter.elts if isinstance(n.iter, (ast.List, ast.Tuple)) else None
            elts = n.target.elts if isinstance(n.target, ast.Tuple) else None
            for k, t in enumerate(elts or [n.target]):
                for x in _target_names(t):
                    column = rows is not None and elts is not None and isinstance(t, ast.Name) and all(
                        isinstance(r, ast.Tuple) and len(r.elts) == len(elts) and is_text(r.elts[k]) for r in rows)
                    verdict[x] = verdict.get(x, True) and column
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and isinstance(n.target, ast.Name):
            verdict[n.target.id] = False
    return {k for k, v in verdict.items() if v}


def _prints(st) -> bool:
    return isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and \
        isinstance(st.value.func, ast.Name) and st.value.func.id in DROPPED_CALLS


def _stored(node) -> set[str]:
    """Every name `node` assigns (a loop's variables, and what its body assigns)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _iterated(head: ast.expr) -> list[ast.expr]:
    """What a loop walks: `got` and `expected` for `enumerate(zip(got, expected))`, `d` for `d.items()`."""
    if isinstance(head, ast.Call) and isinstance(head.func, ast.Name) and \
            head.func.id in ("enumerate", "zip", "reversed", "sorted", "list", "tuple", "iter"):
        return [x for a in head.args for x in _iterated(a)]
    if isinstance(head, ast.Call) and isinstance(head.func, ast.Attribute) and \
            head.func.attr in ("items", "keys", "values") and not head.args:
        return _iterated(head.func.value)
    if isinstance(head, ast.Call) and isinstance(head.func, ast.Name) and head.func.id == "range":
        return []
    if isinstance(head, ast.Call):  # model.parameters(): what the loop walked, as a list
        return [ast.Call(ast.Name("list", ast.Load()), [head], [])]
    return [head]


def _is_placeholder(s) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Tuple) and s.value.elts and \
        isinstance(s.value.elts[0], ast.Constant) and str(s.value.elts[0].value).startswith(PLACEHOLDER)


def _no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


def _try(expr: ast.expr) -> ast.stmt:
    """`try: expr` / `except Exception: pass`: a call whose raise the observer records, not one that ends the
    cell (a hand-in that raises where the reference returned loses on that observation)."""
    return ast.Try(body=[ast.Expr(expr)], handlers=[ast.ExceptHandler(type=ast.Name("Exception", ast.Load()),
                                                                        name=None, body=[ast.Pass()])],
                   orelse=[], finalbody=[])


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


class _Prober:
    def __init__(self, tree: ast.Module, interface: set[str], keep: set[int] = frozenset()):
        self.tree, self.interface, self.keep = tree, interface, keep
        # names that stand for other objects: loop variables, `with ... as` targets, parameters
        self.aliases = {n for s in ast.walk(tree) if isinstance(s, (ast.For, ast.AsyncFor, ast.comprehension))
                        for n in _target_names(s.target)}
        self.aliases |= {n for s in ast.walk(tree) if isinstance(s, (ast.With, ast.AsyncWith)) for i in s.items
                         if i.optional_vars is not None for n in _target_names(i.optional_vars)}
        self.aliases |= {a.arg for s in ast.walk(tree) if isinstance(s, ast.arguments)
                         for a in s.posonlyargs + s.args + s.kwonlyargs}
        # objects that share nothing with the rest of the cell: a call on one changes it alone
        self.copies = {n for s in ast.walk(tree) if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)
                       and _callee(s.value) in ("deepcopy", "clone") for t in s.targets for n in _target_names(t)}
        self.texts = _text_names(tree)  # names that only ever hold text (messages, hints)
        self.index(tree)
        self.events: dict[str, list[tuple[int, bool]]] = {}  # name -> (line, is a read), in line order
        for n in ast.walk(tree):
            if isinstance(n, ast.Name):
                self.events.setdefault(n.id, []).append((n.lineno, not isinstance(n.ctx, ast.Store)))
        for ev in self.events.values():
            ev.sort(key=lambda e: (e[0], not e[1]))  # on one line, the read (the right-hand side) comes first
        self.local_defs = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        # Functions of the cell that reach the lab (directly or through one another): they are probed, kept.
        self.active = set(interface)
        changed = True
        while changed:
            changed = False
            for name, node in self.local_defs.items():
                if name not in self.active and _names(node) & self.active:
                    self.active.add(name)
                    changed = True
        # (function of the cell, parameter, holds an object of the lab's) for the parameters the lab's values reach
        self.param_taint: set[tuple[str, str, bool]] = set()
        # the lab's classes (capitalised, by Python's convention) and the variables holding their objects: a
        # method call on one of those runs the lab's code (`alloc.malloc(8)`); on any other value it does not
        self.classes = {n for n in interface if n[:1].isupper()}
        self.objects: set[str] = set()
        self.conditions: set[int] = set()  # placeholders of a branch that only checked (`if cond: fail()`)
        self.loops: dict[int, ast.stmt] = {}  # placeholder number -> the checks-only loop it stands for
        self.whole: set[int] = set()  # checks kept whole (handed a lab function): they stay, whatever they assign
        self.nulled: set[str] = set()  # parameters every caller now passes None (what only checks read)
        self.instances: set[str] = set()  # objects of classes the cell defines (a reference simulator, say)
        self.tainted: set[str] = set()  # variables holding what the lab returned (or ran under its context)
        self.check_lines: list[int] = []  # the line of each dropped check (placeholder number -> line)
        self.line = 0
        self.handed: dict[str, list[int]] = {}  # variable -> lines where the lab was handed it (it may change it)
        self.kept: list[str] = []
        self.dropped = 0
        self.checks: list[tuple] = []  # (operands, tolerance, lab calls) of each dropped check, by placeholder
        self.bound: list[set[str]] = []  # names a check may not observe (the variables of a loop it replaced)


    def index(self, tree: ast.Module) -> None:
        """Plain single-name assignments of the cell as written, the block of statements each statement sits
        in, and the statement each expression belongs to (to compute a dropped value again at its check)."""
        self.assignments: dict[str, list] = {}
        self.block_of: dict[int, int] = {}
        self.stmt_of: dict[int, ast.stmt] = {}
        self.blocks: list[list] = []  # keeps the lists alive, so that their ids stay theirs

        def visit(stmts):
            self.blocks.append(stmts)
            for st in stmts:
                self.block_of[id(st)] = id(stmts)
                if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                    self.assignments.setdefault(st.targets[0].id, []).append(st)
                for _, value in ast.iter_fields(st):
                    if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                        visit(value)
                    elif isinstance(value, list) and value and isinstance(value[0], ast.excepthandler):
                        for h in value:
                            visit(h.body)
                    else:
                        for node in (value if isinstance(value, list) else [value]):
                            if isinstance(node, ast.AST):
                                for e in ast.walk(node):
                                    self.stmt_of.setdefault(id(e), st)

        visit(tree.body)
        # every assignment of each name (its Name node), with its line and the function it sits in
        functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

        def function_at(line):
            inside = [f for f in functions if f.lineno <= line <= (f.end_lineno or f.lineno)]
            return max(inside, key=lambda f: f.lineno) if inside else None

        self.function_at = function_at
        self.stores: dict[str, list] = {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                self.stores.setdefault(n.id, []).append((n.lineno, n, function_at(n.lineno)))
    # ---- what is a check, what calls the lab ----

    def is_check(self, call: ast.Call) -> bool:
        name = _callee(call)
        if isinstance(call.func, ast.Name) and name in self.active:
            return False
        return bool(CHECK.match(name))

    def calls_lab(self, node) -> bool:
        return bool(_names(node) & (self.active | self.tainted))

    def lab_calls(self, node) -> list[ast.expr]:
        """The outermost calls in `node` that reach the lab: a lab function (or a method of what it returned)
        called, or handed to a helper that calls it (`call(what, f, x)`)."""
        found = []

        def visit(n):
            if isinstance(n, ast.Lambda):
                if not n.args.args and not n.args.vararg and not n.args.kwonlyargs and self.calls_lab(n.body):
                    found.append(ast.Call(n, [], []))
                return
            if isinstance(n, ast.Call) and not self.is_check(n) and _callee(n) not in DROPPED_CALLS:
                handed = self.active | self.tainted if _callee(n) in CALLERS else self.active
                direct = _root(n.func) in self.active | self.objects or any(
                    isinstance(a, (ast.Name, ast.Attribute)) and _names(a) & handed
                    for a in list(n.args) + [k.value for k in n.keywords])
                # torch.autograd.grad(y.sum(), x), y.backward(): autograd runs the backward the lab's answer built
                direct = direct or (_callee(n) in AUTOGRAD and bool(_names(n) & self.tainted))
                if direct:
                    found.append(n)
                    return
            for child in ast.iter_child_nodes(n):
                visit(child)

        visit(node)
        return found

    def hoist(self, node) -> list[ast.stmt]:
        return [_try(c) for c in self.lab_calls(node)]

    # ---- statements ----

    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out = []
        for s in stmts:
            outer, self.line = self.line, getattr(s, "lineno", self.line)
            self.hand_over(s)
            new = self.stmt(s)
            self.line = outer
            if len(new) != 1 or new[0] is not s:
                self.dropped += 1
            out += new
        return out

    def hands_over(self, a: ast.expr) -> bool:
        """Whether a check's argument is the lab's code itself (`f`, `sim.malloc`): the check calls it."""
        chain = a
        while isinstance(chain, ast.Attribute):
            chain = chain.value
        return isinstance(chain, ast.Name) and (chain.id in self.active or
                                                (isinstance(a, ast.Attribute) and chain.id in self.objects))

    def makes_object(self, e: ast.expr) -> bool:
        """Whether `e` makes an object of one of the lab's classes (`Sim(...)`, `call(what, Sim, ...)`)."""
        for c in (n for n in ast.walk(e) if isinstance(n, ast.Call)):
            if isinstance(c.func, ast.Name) and c.func.id in self.classes:
                return True
            if _callee(c) in CALLERS and any(isinstance(a, ast.Name) and a.id in self.classes for a in c.args):
                return True
        return False

    def hand_over(self, s: ast.stmt) -> None:
        """Before `s` runs: a function of the cell called with something of the lab's gets it in its parameter;
        after, what `s` handed a lab function is the lab's too (it may have changed it in place)."""
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        for c in (n for n in ast.walk(s) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            fn = self.local_defs.get(c.func.id)
            if isinstance(fn, ast.FunctionDef) and fn.name in self.active:
                params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
                for k, a in enumerate(c.args):
                    if k < len(params) and not isinstance(a, ast.Starred) and self.calls_lab(a):
                        self.param_taint.add((fn.name, params[k], bool(_names(a) & self.objects)))
                for kw in c.keywords:
                    if kw.arg and self.calls_lab(kw.value):
                        self.param_taint.add((fn.name, kw.arg, bool(_names(kw.value) & self.objects)))
        for c in self.lab_calls(s) if not isinstance(s, (ast.For, ast.While, ast.If, ast.With, ast.Try)) else []:
            if isinstance(c, ast.Call):
                given = {a.id for a in c.args if isinstance(a, ast.Name) and a.id not in self.active}
                self.tainted |= given
                for name in given:
                    self.handed.setdefault(name, []).append(self.line)

    def check(self, operands: list[ast.expr], tolerance: list[ast.keyword] = (), bound=(),
              whole: ast.Call | None = None) -> list[ast.stmt]:
        """A dropped check: a placeholder that `observe_checks` later fills in with what of its operands may
        be observed (once dead code is known), and the calls to the lab in it, run on their own. The check's
        tolerance (rtol=, atol=, ulps=: no secret) stays, read by the placeholder, and goes with each value."""
        calls = self.lab_calls(ast.Tuple(operands, ast.Load()))
        self.checks.append((operands, list(tolerance), calls, whole))
        self.check_lines.append(self.line)
        self.bound.append(set(bound))
        marker = ast.Constant(f"{PLACEHOLDER}{len(self.checks) - 1}")
        # the placeholder reads what the lab calls in the check need, so that it stays defined
        return [ast.Expr(ast.Tuple([marker] + [k.value for k in tolerance] + calls, ast.Load()))]

    @staticmethod
    def number(placeholder: ast.Expr) -> int:
        return int(placeholder.value.elts[0].value[len(PLACEHOLDER):])

    def operands(self, placeholder: ast.Expr) -> list[ast.expr]:
        return self.checks[self.number(placeholder)][0]

    def bare_check(self, s: ast.stmt) -> bool:
        """A dropped check that calls nothing of the lab's."""
        return _is_placeholder(s) and not self.checks[int(s.value.elts[0].value[len(PLACEHOLDER):])][2]

    def definition(self, name: str, where: ast.expr):
        """The value of the last `name = value` before `where` in the same block of statements (so in the same
        with, try, branch and loop pass: moved to the check, it computes what it computed), or None."""
        block = self.block_of.get(id(self.stmt_of.get(id(where))))
        best = None
        for st in self.assignments.get(name, []):
            if self.block_of.get(id(st)) == block and block is not None and st.lineno < where.lineno and \
                    (best is None or st.lineno > best.lineno):
                best = st
        return None if best is None else best.value

    def lab_lines(self) -> set[int]:
        """The lines that name the lab's code (a function of its interface, a function of the cell that reaches
        it, an object of one of its classes): where the lab may run."""
        return {line for n in self.active | self.objects for line, load in self.events.get(n, []) if load}

    def private(self, s: ast.stmt) -> bool:
        """Whether no name `s` assigns is read after it (before being assigned again), so that `s` may turn
        into one check. A loop's own variables do not count."""
        own = set(_target_names(s.target)) if isinstance(s, (ast.For, ast.AsyncFor)) else set()
        stored = {n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - own
        end = getattr(s, "end_lineno", None) or s.lineno
        for name in stored:
            for line, load in self.events.get(name, []):
                if line <= end:
                    continue
                if not load:
                    break  # assigned again before any read: what s assigned is gone
                return False
        return True

    def diagnostic(self, s: ast.stmt) -> bool:
        """`missing = [...]` next to a check: text for its message, nothing the lab is called with."""
        if isinstance(s, ast.If) and not self.lab_calls(s.test):  # if missing: cause = ... elif ...
            return all(self.diagnostic(x) or self.bare_check(x) for x in s.body + s.orelse)
        return isinstance(s, (ast.Assign, ast.AugAssign, ast.Pass)) and not self.lab_calls(s)

    def stmt(self, s: ast.stmt) -> list[ast.stmt]:
        if isinstance(s, ast.Assert):
            return self.check([s.test])
        if isinstance(s, ast.Raise):
            return self.check([])
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            call = s.value
            if self.is_check(call):
                args = list(call.args) + [k.value for k in call.keywords]
                if any(self.hands_over(a) for a in args):
                    self.kept.append(f"line {s.lineno}: {ast.unparse(s)[:160]}")
                    self.whole.add(id(s))
                    return [s]
                return self.check([a for a in call.args if not isinstance(a, ast.Starred)],
                                  [k for k in call.keywords if k.arg in TOLERANCE or _tolerance_splat(k)],
                                  whole=call)
            return [s]  # (a print stays: `print` inside a compiled function is a graph break; one that shows
            # something the probe dropped goes last, in observe_checks)
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Call) and self.is_check(s.value):
            # msg = check_raises(...), got = check_graph_module(what, fuse(gm)): the test goes on with what the
            # check returns, so the check stays whole (and is listed)
            self.kept.append(f"line {s.lineno}: {ast.unparse(s)[:160]}")
            self.whole.add(id(s))
            if self.calls_lab(s.value):
                self.tainted.update(n for t in s.targets for n in _target_names(t))
            return [s]
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name) and \
                    isinstance(self.local_defs.get(s.value.func.id), ast.ClassDef) and \
                    s.value.func.id not in self.active:
                self.instances.update(n for t in targets for n in _target_names(t))
            if s.value is not None and self.calls_lab(s.value):
                self.tainted.update(n for t in targets for n in _target_names(t))
            if s.value is not None and self.makes_object(s.value):
                self.objects.update(n for t in targets for n in _target_names(t))
            v = s.value
            if isinstance(v, ast.Call) and _callee(v) in WRAPPERS and v.args:
                v = v.args[0]
            if isinstance(v, ast.Lambda) and _names(v.body) & self.active:
                # f = torch.compile(lambda x: lab_fn(x)): f is one more way to call the lab
                self.active.update(n for t in targets for n in _target_names(t))
            return [s]
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # a parameter the lab's values reach (a call site says so) is the lab's; names are the cell's, one
            # namespace, and what is tainted stays so (the dead-code pass reads it afterwards)
            self.tainted |= {p for f, p, _ in self.param_taint if f == s.name}
            self.objects |= {p for f, p, obj in self.param_taint if f == s.name and obj}
            s.body = self.block(s.body) or [ast.Pass()]  # every function of the cell loses its checks
            return [s]
        if isinstance(s, ast.ClassDef):
            if s.name in self.active:
                s.body = self.block(s.body) or [ast.Pass()]
            return [s]
        if isinstance(s, ast.If):
            n, private = len(self.checks), self.private(s)
            s.body, s.orelse = self.block(s.body), self.block(s.orelse)
            if len(self.checks) > n and private and \
                    all(self.bare_check(x) or self.diagnostic(x) for x in s.body + s.orelse):
                out = self.check([s.test])  # `if got != expected: fail(...)`: a check on the condition
                self.conditions.add(len(self.checks) - 1)
                return out
            if not s.body and not s.orelse:
                return self.hoist(s.test)
            s.body = s.body or [ast.Pass()]
            return [s]
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            if isinstance(s, (ast.For, ast.AsyncFor)) and self.calls_lab(s.iter):
                self.tainted.update(_target_names(s.target))
            if isinstance(s, (ast.For, ast.AsyncFor)) and isinstance(s.target, ast.Tuple) and \
                    isinstance(s.iter, (ast.List, ast.Tuple)) and s.iter.elts:
                # for what, fn in [("...", lambda: Lab().f()), ...]: fn is one more way to call the lab
                for k, t in enumerate(s.target.elts):
                    if isinstance(t, ast.Name) and all(
                            isinstance(r, ast.Tuple) and len(r.elts) == len(s.target.elts) and
                            isinstance(r.elts[k], ast.Lambda) and _names(r.elts[k].body) & (self.active | self.objects)
                            for r in s.iter.elts):
                        self.active.add(t.id)
            n, private = len(self.checks), self.private(s)
            s.body, s.orelse = self.block(s.body), self.block(s.orelse)
            head = s.iter if isinstance(s, (ast.For, ast.AsyncFor)) else s.test
            if len(self.checks) > n and private and not self.lab_calls(head) and \
                    all(self.bare_check(x) or self.diagnostic(x) for x in s.body + s.orelse):
                # `for k, v in expected.items(): if got[k] != v: fail(...)`: one check over the loop, of what
                # its checks looked at outside the loop's own variables (`got`)
                inner = [op for x in s.body + s.orelse if _is_placeholder(x) for op in self.operands(x)]
                bound = set(_target_names(s.target)) if isinstance(s, (ast.For, ast.AsyncFor)) else set()
                bound |= {n for x in s.body + s.orelse if _is_placeholder(x) for n in self.bound[self.number(x)]}
                out = self.check(_iterated(head) + inner, bound=bound)
                self.loops[len(self.checks) - 1] = s  # back whole if it turns out to need nothing dropped
                return out
            if not s.body and not s.orelse:
                head = s.iter if isinstance(s, (ast.For, ast.AsyncFor)) else s.test
                if not self.calls_lab(head):
                    return []
            s.body = s.body or [ast.Pass()]
            return [s]
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                if item.optional_vars is not None and self.calls_lab(item.context_expr):
                    self.tainted.update(_target_names(item.optional_vars))
                if item.optional_vars is not None and self.makes_object(item.context_expr):
                    self.objects.update(_target_names(item.optional_vars))
            lab_context = any(self.calls_lab(i.context_expr) for i in s.items)
            if lab_context:  # with offload_saved_tensors(): what runs inside runs under the lab's hooks
                self.tainted |= _stored(ast.Module(body=s.body, type_ignores=[]))
            s.body = self.block(s.body)
            if not s.body and not lab_context:
                return []
            s.body = s.body or [ast.Pass()]
            return [s]
        if isinstance(s, ast.Try):
            s.body = self.block(s.body)
            for h in s.handlers:
                h.body = self.block(h.body) or [ast.Pass()]
            s.orelse, s.finalbody = self.block(s.orelse), self.block(s.finalbody)
            if not s.body:
                return s.finalbody
            return [s]
        return [s]

    # ---- dead code ----

    def defines(self, s: ast.stmt) -> list[str] | None:
        """The names `s` only defines (None: it does more than define, or is marked to stay)."""
        if getattr(s, "lineno", None) in self.keep or id(s) in self.whole:
            return None
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None if s.name in self.active else [s.name]
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            if s.value is None or self.lab_calls(s.value):
                return None
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            names = []
            todo = list(targets)
            while todo:
                t = todo.pop()
                if isinstance(t, (ast.Subscript, ast.Attribute)) and (
                        _root(t) in self.aliases | self.tainted
                        or not any(not load for _, load in self.events.get(_root(t), []))):
                    # m[0].weight.grad[1] = inf for m in (model, twin): it changes what m stands for;
                    # module.attr = patch (a module, or a name the cell never assigns): state, it stays;
                    # stats["x"] = 1000 into what the lab returned: it may be the lab's own state, it stays
                    return None
                while isinstance(t, (ast.Subscript, ast.Attribute, ast.Starred)):  # want[0] = ...: still want's
                    t = t.value
                if isinstance(t, (ast.Tuple, ast.List)):
                    todo += t.elts
                elif isinstance(t, ast.Name):
                    names.append(t.id)
                else:
                    return None
            return names
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and _root(s.value.func) and not self.lab_calls(s.value):
            # cases.append(x), ref.free(p) on a reference simulator the cell defines, a deep copy's
            # .recompile(): a change to that object alone (and to what it is handed), needed only if it is
            call = s.value
            if _root(call.func) in self.aliases:
                return None  # p.grad.zero_() for p in params: it changes what p stands for
            if call.func.attr in FILLS or _root(call.func) in self.instances:
                return [_root(call.func)]
            handed = [n for a in list(call.args) + [k.value for k in call.keywords] for n in sorted(_names(a))
                      if n in self.events and any(not load for _, load in self.events[n])]
            if _root(call.func) not in self.events:  # torch.foo_(scale, tracker): a module changes what it is handed
                return handed or None  # torch._dynamo.reset(), warnings.simplefilter(...): state, it stays
            if _root(call.func) in self.copies:  # reference = copy.deepcopy(gm); reference.recompile()
                return [_root(call.func)] + handed
            return None  # opt.step() changes the parameters opt was handed: anything may depend on it
        return None

    def prune(self, tree: ast.Module) -> None:
        """Mark and sweep: statements that do more than define are the roots; a definition lives when a
        live statement reads what it defines; a function's body counts only once the function lives. So a
        reference and everything only it (or only the dropped checks) needed goes, cycles included."""
        while self._prune_once(tree):
            pass

    def _prune_once(self, tree: ast.Module) -> bool:
        """One mark-and-sweep pass (then the literal tables' columns and the unused parameters); whether it
        changed anything."""
        owner, parent, order = {}, {}, []

        def collect(stmts, fn, up):
            for st in stmts:
                owner[id(st)], parent[id(st)], _ = fn, up, order.append(st)
                if isinstance(st, ast.ClassDef):
                    continue  # a class's body is read through attributes: it stays whole
                is_fn = isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
                inner, inner_up = (st, None) if is_fn else (fn, st)
                for attr in ("body", "orelse", "finalbody"):
                    body = getattr(st, attr, None)
                    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                        collect(body, inner, inner_up)
                for h in getattr(st, "handlers", []):
                    collect(h.body, inner, inner_up)

        collect(tree.body, None, None)
        defines = {id(st): self.defines(st) for st in order}
        marked, live = set(), set()

        def mark(st):
            """`st` lives: what it reads lives, and so do the statements it sits in (their headers)."""
            while st is not None and id(st) not in marked:
                marked.add(id(st))
                names = defines[id(st)]
                if not _prints(st):  # what a print shows keeps nothing alive (observe_checks drops it)
                    live.update(_header_loads(st) if names is None else _own_loads(st))
                st = parent[id(st)]

        def root(st) -> bool:
            if isinstance(st, ast.Pass):
                return False
            if isinstance(st, (ast.Continue, ast.Break)):  # `if i % 3: continue`: the loop's flow stays
                return True
            if isinstance(st, CONTAINERS):  # a branch, a loop, a with or a try lives through what it holds
                return bool(self.lab_calls(_header(st)))
            return defines[id(st)] is None

        grew = True
        while grew:
            grew = False
            for st in order:
                fn = owner[id(st)]
                if id(st) in marked or (fn is not None and id(fn) not in marked):
                    continue
                names = defines[id(st)]
                if root(st) or (names is not None and any(n in live for n in names)):
                    mark(st)
                    grew = True

        def sweep(stmts):
            out = []
            for st in stmts:
                if id(st) not in marked and not isinstance(st, (ast.Continue, ast.Break)):
                    self.dropped += 1
                    continue
                if not isinstance(st, ast.ClassDef):
                    for attr in ("body", "orelse", "finalbody"):
                        body = getattr(st, attr, None)
                        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                            setattr(st, attr, sweep(body) or ([ast.Pass()] if attr == "body" else []))
                    for h in getattr(st, "handlers", []):
                        h.body = sweep(h.body) or [ast.Pass()]
                if isinstance(st, ast.Try) and not st.handlers and not st.finalbody:
                    out += st.body + st.orelse  # try/finally whose finally went: the body alone
                    continue
                if isinstance(st, (ast.If, ast.For, ast.AsyncFor, ast.While)) and not st.orelse and \
                        all(isinstance(x, ast.Pass) for x in st.body) and \
                        not self.lab_calls(st.test if isinstance(st, (ast.If, ast.While)) else st.iter):
                    self.dropped += 1  # nothing left to do inside: the loop or the branch goes
                    continue
                out.append(st)
            return out

        before = ast.dump(tree)
        tree.body = sweep(tree.body)
        total = _loads(tree)
        for loop in [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.AsyncFor))]:
            self.strip_columns(loop, total)
        self.unused_arguments(tree)
        return ast.dump(tree) != before

    def strip_columns(self, loop: ast.For, total: Counter) -> None:
        """`for args, expected in [(a1, e1), ...]` or `in zip(inputs, expected)` (or `enumerate` of either)
        with `expected` read by nothing kept: the column goes, so the expected values do too."""
        if loop.lineno in self.keep:
            return
        def unread(t) -> bool:
            return all(total[n] == 0 for n in _target_names(t)) and bool(_target_names(t))

        def strip(t, it):
            if isinstance(it, ast.Call) and _callee(it) == "enumerate" and it.args and \
                    isinstance(t, ast.Tuple) and len(t.elts) == 2:
                new_t, new_it = strip(t.elts[1], it.args[0])
                t.elts[1], it.args[0] = new_t, new_it
                return t, it
            if not isinstance(t, ast.Tuple) or not all(isinstance(e, (ast.Name, ast.Tuple)) for e in t.elts):
                return t, it
            drop = [k for k, e in enumerate(t.elts) if unread(e)]
            if not drop:
                return t, it
            keep = [k for k in range(len(t.elts)) if k not in drop]
            if isinstance(it, ast.Call) and _callee(it) == "zip" and len(it.args) == len(t.elts) and \
                    not it.keywords and not any(isinstance(a, ast.Starred) for a in it.args):
                if not keep:
                    return ast.Name("_", ast.Store()), it.args[0]
                it.args = [it.args[k] for k in keep]
            elif isinstance(it, (ast.List, ast.Tuple)) and it.elts and \
                    all(isinstance(r, ast.Tuple) and len(r.elts) == len(t.elts) for r in it.elts):
                for r in it.elts:
                    r.elts = [r.elts[k] for k in keep] if keep else []
                if not keep:
                    it.elts = [ast.Constant(None) for _ in it.elts]
                    return ast.Name("_", ast.Store()), it
            else:
                return t, it
            self.dropped += 1
            t.elts = [t.elts[k] for k in keep]
            return t, it

        loop.target, loop.iter = strip(loop.target, loop.iter)

    def unused_arguments(self, tree: ast.Module) -> bool:
        """A probed function's parameter nothing in it reads any more is passed as None by every caller."""
        changed = False
        for name in self.active - self.interface:
            fn = self.local_defs.get(name)
            if not isinstance(fn, ast.FunctionDef) or fn.args.vararg or fn.args.kwarg or fn.lineno in self.keep:
                continue  # (a def marked `# probe: keep` keeps its parameters: what they carry is no secret)
            reads = _loads(ast.Module(body=fn.body, type_ignores=[]))
            params = fn.args.posonlyargs + fn.args.args
            unused = {p.arg for p in params + fn.args.kwonlyargs if not reads[p.arg]}
            self.nulled |= unused
            if not unused:
                continue
            defaults = fn.args.defaults
            for p, d in zip(params[len(params) - len(defaults):], list(defaults)):
                if p.arg in unused and not (isinstance(d, ast.Constant) and d.value is None):
                    defaults[defaults.index(d)] = ast.Constant(None)
                    changed = True
            for k, (p, d) in enumerate(zip(fn.args.kwonlyargs, fn.args.kw_defaults)):
                if p.arg in unused and d is not None and not (isinstance(d, ast.Constant) and d.value is None):
                    fn.args.kw_defaults[k] = ast.Constant(None)
                    changed = True
            for call in ast.walk(tree):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == name):
                    continue
                for k, a in enumerate(call.args):
                    if isinstance(a, ast.Starred) or k >= len(params):
                        break
                    if params[k].arg in unused and not (isinstance(a, ast.Constant) and a.value is None):
                        call.args[k] = ast.Constant(None)
                        changed = True
                for kw in call.keywords:
                    if kw.arg in unused and not (isinstance(kw.value, ast.Constant) and kw.value.value is None):
                        kw.value = ast.Constant(None)
                        changed = True
        return changed

    def observe_checks(self, tree: ast.Module, defined: set[str]) -> None:
        """Fill each check's placeholder with `__observe__(lambda: e)` for the parts `e` of its operands that
        read no name the probe dropped (`dead`) and at least one the cell defines: the values a check looked
        at, which the judge compares with the reference's; never an expected value the probe dropped."""
        alive = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        alive |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        alive |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
                  for a in n.posonlyargs + n.args + n.kwonlyargs + [x for x in (n.vararg, n.kwarg) if x]}
        dead = (defined - alive) | self.nulled

        def inline(e, bound=frozenset(), extra=frozenset(), depth=0, at=None):
            """`e` with each dropped name replaced by the value its nearest earlier definition (in the same
            function) computed, when that value reads nothing dropped and calls nothing of the lab's: `bad` for
            `bad = {k: v for k, v in result.items() if v != "SUCCESS"}`, `expected` for `expected = torch.add(a, b)`.
            Evaluated where the check stood, after the calls, it is what the check compared. None if it cannot."""
            if depth > 3:
                return None
            names = (_names(e) - bound - extra) & dead
            if not names:
                return e
            if getattr(e, "lineno", None) is None:
                return None
            at = at or self.check_line  # where the value is computed again: the check's line
            swap = {}
            for n in names:
                if n in self.nulled or n in self.local_defs:
                    return None
                value = self.definition(n, e)
                if value is None or self.lab_calls(value) or _literal_inside(value) or any(
                        value.lineno <= line < at for name in _names(value) for line in self.handed.get(name, [])):
                    return None  # (what the lab was handed may have changed since: `out[covered:]` after a launch)
                if any(isinstance(c, ast.Call) for c in ast.walk(value)) and \
                        any(value.lineno < line < at for line in self.lab_lines()):
                    return None  # `state = random.getstate()`: the lab ran since, and may have changed global state
                value = inline(value, bound, extra, depth + 1, at)
                if value is None:
                    return None
                swap[n] = value

            class Swap(ast.NodeTransformer):
                def visit_Name(self, node):
                    return copy.deepcopy(swap[node.id]) if node.id in swap and isinstance(node.ctx, ast.Load) \
                        else node

            return Swap().visit(copy.deepcopy(e))

        def parts(e, bound=frozenset(), extra=frozenset()) -> list[ast.expr]:
            if isinstance(e, (ast.Starred, ast.FormattedValue)):
                return parts(e.value, bound, extra)
            if isinstance(e, ast.Slice):
                return [p for x in (e.lower, e.upper, e.step) if x is not None for p in parts(x, bound, extra)]
            names = _names(e)
            dead_here = (dead - extra) | bound
            if isinstance(e, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp, ast.Lambda)) and \
                    (names & dead_here or _literal_inside(e)):
                return []  # whole or not at all: its own variables mean nothing outside it
            if names & dead_here and not _literal_inside(e):
                whole_e = inline(e, bound, extra)
                if whole_e is not None and not _names(whole_e) & bound:
                    return [whole_e]
            if names & dead_here or _literal_inside(e):
                return [p for child in ast.iter_child_nodes(e) if isinstance(child, ast.expr)
                        for p in parts(child, bound, extra)]
            if isinstance(e, ast.Name) and (e.id in self.objects or e.id in self.local_defs):
                return []  # an object of the lab's (its methods' results show what it holds), a function
            computes = any(isinstance(n, ast.Call) for n in ast.walk(e))  # random.getstate(): global state
            if not (names & (alive | self.active) or computes) or \
                    isinstance(e, (ast.Constant, ast.JoinedStr, ast.Lambda)) or \
                    (isinstance(e, ast.Name) and e.id in QUIET):
                return []
            return [e]

        restored: dict[str, ast.FunctionDef] = {}

        def restorable(func, seen=frozenset()) -> bool:
            """A check the cell defines (`_check_repeats`) runs as written if what it reads, apart from its own
            names, is kept or comes from outside the cell, and the cell's checks it calls can run too; it then
            comes back, as written, at the top of the probe."""
            name = func.id if isinstance(func, ast.Name) else ""
            if name not in dead:
                return not (isinstance(func, ast.Attribute) and _names(func) & dead)
            fn = self.checkers.get(name)
            if fn is None or name in seen:
                return fn is not None
            own = _stored(fn) | {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
            for n in _names(fn) - own - {name}:
                if n in dead and not (n in self.checkers and restorable(ast.Name(n, ast.Load()), seen | {name})):
                    return False
            restored[name] = fn
            return True

        def runnable(whole, bound):
            """The check call to run whole, or None: not `fail` (it always raises), no expected value written out,
            nothing dropped read, except in its first argument (the description: replaced, if need be)."""
            if whole is None or _callee(whole) == "fail" or any(_tolerance_splat(k) for k in whole.keywords):
                return None
            # check_raises(what, ValueError, sim.malloc, -5) (labkit.testing's signature: what, exception, fn,
            # *args): what follows the callable is its input, passed to the lab, never an expected value
            inputs_from = RAISES_INPUTS_FROM if _callee(whole) == "check_raises" else len(whole.args)
            if any(_expected_literal(a) for a in whole.args[:inputs_from]):
                return None
            # the description (first argument) and the message keywords (cause=...) may read what was dropped:
            # they are only text, so they are replaced
            def text(e) -> bool:  # a message: its dropped names held only text (`cause`, a table's hint column)
                return isinstance(e, (ast.Name, ast.JoinedStr)) and bool((_names(e) - bound) & dead) and \
                    all(n in self.texts or n not in dead for n in _names(e) - bound)

            words = [k for k in whole.keywords
                     if (k.arg in QUIET or text(k.value)) and (_names(k.value) - bound) & dead]
            keywords = [ast.keyword(k.arg, ast.Constant("")) if k in words else k for k in whole.keywords]
            args = [ast.Constant("") if k and text(a) else a for k, a in enumerate(whole.args)]
            args = [a if k == 0 else (inline(a, bound) or a) for k, a in enumerate(args)]
            keywords = [ast.keyword(k.arg, inline(k.value, bound) or k.value) for k in keywords]
            rest = ast.Tuple(args[1:] + [k.value for k in keywords], ast.Load())
            if (_names(rest) - bound) & dead or not restorable(whole.func):
                return None
            if args and (_names(args[0]) - bound) & dead:
                args = [ast.Constant("(a hidden test)")] + args[1:]
            return ast.Call(whole.func, args, keywords)

        def runs_whole(st, bound) -> bool:
            """A check that can run where it stands in a loop: a call (not `fail`) or a condition reading nothing
            dropped (the enclosing loops' variables aside), or a loop of such checks over nothing dropped."""
            if not _is_placeholder(st):  # a pass, or text for a message (a diagnostic) over what stays
                return isinstance(st, ast.Pass) or (self.diagnostic(st) and not (_names(st) - bound) & dead)
            k = self.number(st)
            operands, _, _, whole = self.checks[k]
            loop = self.loops.get(k)
            if loop is not None:
                inner = bound | _stored(loop)
                head = loop.iter if isinstance(loop, (ast.For, ast.AsyncFor)) else loop.test
                if (_names(head) - bound) & dead and isinstance(loop, (ast.For, ast.AsyncFor)):
                    again = inline(head, bound)  # for p in found: found computed again, in the loop's place
                    if again is None or (_names(again) - bound) & dead:
                        return False
                    loop.iter = head = again
                return not (_names(head) - bound) & dead and all(runs_whole(x, inner) for x in loop.body + loop.orelse)
            if k in self.conditions:  # a condition on what the loop reads: observed once per pass (the runner
                # records at most OBSERVED_PER_CELL such values per cell)
                return not (_names(operands[0]) - bound) & dead and not _literal_inside(operands[0])
            return runnable(whole, bound) is not None

        kept = {id(n) for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        everywhere = dead

        def gone_at(line) -> set[str]:
            """Names whose last assignment before `line` (in the same function) the probe dropped, though another
            of their assignments stays: `expected` after a dropped `expected = ...`, where another loop keeps
            its own `expected`."""
            fn, out = self.function_at(line), set()
            for name, stores in self.stores.items():
                if name in everywhere:
                    continue
                before = [(ln, node) for ln, node, f in stores if ln < line and f is fn]
                if before and id(max(before, key=lambda x: x[0])[1]) not in kept:
                    out.add(name)
            return out

        def fill(stmts, extra=frozenset()):
            nonlocal dead
            out = []
            for st in stmts:
                if _is_placeholder(st):
                    self.check_line = self.check_lines[self.number(st)]
                    dead = everywhere | gone_at(self.check_line)
                if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and \
                        isinstance(st.value.func, ast.Name) and st.value.func.id in DROPPED_CALLS and \
                        (_names(st.value) - extra) & dead:
                    self.dropped += 1  # print(f"... {expected}"): it would show what the probe dropped
                    continue
                if _is_placeholder(st):
                    k, seen = int(st.value.elts[0].value[len(PLACEHOLDER):]), set()
                    operands, tolerance, calls, whole = self.checks[k]
                    loop = self.loops.get(k)
                    if loop is not None and runs_whole(st, set(extra)):
                        # for p, q in zip(model.parameters(), twin.parameters()): check_tensor(w, q.grad, p.grad):
                        # nothing it reads was dropped, so the loop stays and each check is observed whole
                        out += fill([loop], extra | _stored(loop))
                        continue
                    run = runnable(whole, extra)
                    if run is not None:
                        # check_integer_only(what, ops): it reads nothing the probe dropped, so it runs, after
                        # the calls, and its outcome (None, or what it raised) is what the judge compares
                        out.append(ast.Expr(ast.Call(ast.Name(OBSERVE, ast.Load()), [ast.Lambda(_no_args(), run)],
                                                     [ast.keyword("outcome", ast.Constant(True))])))
                        continue
                    observed = [p for op in operands for p in parts(op, self.bound[k], extra)]
                    inside = {id(n) for p in observed for n in ast.walk(p)}
                    # a lab call no observed value makes runs on its own, first (as the check would have)
                    out += [_try(c) for c in calls if id(c) not in inside and
                            not (isinstance(c, ast.Call) and isinstance(c.func, ast.Lambda)
                                 and id(c.func.body) in inside)]
                    for e in observed:
                        if ast.dump(e) in seen:
                            continue
                        seen.add(ast.dump(e))
                        out.append(ast.Expr(ast.Call(ast.Name(OBSERVE, ast.Load()),
                                                     [ast.Lambda(_no_args(), e)], tolerance)))
                    if not seen:  # nothing of it can be observed: that it was reached is (an else: fail(...))
                        out.append(ast.Expr(ast.Call(ast.Name(OBSERVE, ast.Load()),
                                                     [ast.Lambda(_no_args(), ast.Constant(self.check_line))], [])))
                    continue
                for attr in ("body", "orelse", "finalbody"):
                    inner = getattr(st, attr, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        setattr(st, attr, fill(inner, extra) or ([ast.Pass()] if attr == "body" else []))
                for h in getattr(st, "handlers", []):
                    h.body = fill(h.body, extra) or [ast.Pass()]
                out.append(st)
            return out

        tree.body = fill(tree.body)
        tree.body = list(restored.values()) + tree.body
        self.restored = list(restored)

    def run(self) -> Probe:
        # Taint flows forward, statement by statement; the cell's functions are defined before the calls that
        # hand them the lab's values, so a first pass finds those, and the second uses them.
        import copy

        original = copy.deepcopy(self.tree)
        # the checks the cell defines, as written (module level, not calling the lab): a whole check may need one
        self.checkers = {n.name: copy.deepcopy(n) for n in original.body if isinstance(n, ast.FunctionDef)
                         and CHECK.match(n.name) and not _names(n) & self.active}
        self.block(copy.deepcopy(original).body)  # first pass: which parameters the lab's values reach
        self.kept, self.dropped, self.checks, self.bound, self.tainted, self.objects = [], 0, [], [], set(), set()
        self.whole, self.loops, self.conditions, self.handed = set(), {}, set(), {}
        self.check_lines, self.line, self.check_line = [], 0, 0
        tree = original
        self.index(tree)
        self.local_defs = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        defined = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        defined |= set(self.local_defs)
        tree.body = self.block(tree.body)
        self.prune(tree)
        self.observe_checks(tree, defined)
        ast.fix_missing_locations(tree)
        return Probe(ast.unparse(tree) + "\n", self.kept, getattr(self, "restored", []), self.dropped)
