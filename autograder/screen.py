"""A static look at a hand-in's answer code, read from the hand-in file in the trusted process.

Two uses:
- **review flags**: things no answer in this course needs (assigning to or deleting
  attributes of imported modules, `setattr`/`delattr` on them, names that reach into the
  interpreter: `__builtins__`, `sys.modules`, frames, code objects). A flag costs no
  points: it lists the hand-in under "Needs a human look" in the report. The points are
  the judge's business (`judge.py`), which does not rely on any of this.
- **constraints** (`constraint_failures`): a task that says *how* to build its answer
  ("with as_strided only") declares, in its answer cell's metadata (`grader.forbid`,
  `grader.constrains`), the names it may not use and the tests that enforce it. The
  tests' own op traces run in the learner's process and could be switched off; this
  reading of the source cannot.
"""

from __future__ import annotations

import ast
import functools

from autograder import notebooks as nbs

INTERNALS = {"__builtins__", "__import__", "get_ipython", "__subclasses__", "__globals__", "__code__",
             "__closure__", "f_back", "f_globals", "f_locals", "f_code", "tb_frame", "gi_frame", "cr_frame",
             "_getframe", "settrace", "setprofile", "excepthook", "displayhook", "addaudithook", "_exit",
             "get_objects", "get_referrers", "get_referents"}
SYS_ATTRS = {"modules", "meta_path", "path_hooks", "exit"}  # printing to sys.stderr is fine; replacing it is not
MODULE_ROOTS = {"builtins", "sys", "os", "signal", "atexit", "gc", "ctypes", "importlib", "inspect", "linecache"}


def _imported_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names}
    return names


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


ALLOWED_SETTINGS = ("torch.backends.", "os.environ[", "torch._dynamo.config.", "torch._inductor.config.")
MODULE_ALIASES = {"torch", "np", "numpy", "F", "nn", "labkit", "testing", "math", "operator", "functools"}


def bound_names(sources: list[str]) -> set[str]:
    """Names the given cells bind at top level (the set-up cells' imports, helpers, parameters)."""
    names = set()
    for source in sources:
        try:
            tree = nbs.parse_python(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def screen(sources: list[str], protected: set[str] | None = None) -> list[str]:
    """Flags ("answer line N: what") for the hand-in's answer and added cells; `protected` are the
    names the set-up cells define."""
    flags = []
    protected = protected or set()
    modules = MODULE_ALIASES | MODULE_ROOTS | {n for n in protected if n[:1].islower()}
    for n, source in enumerate(sources):
        try:
            tree = nbs.parse_python(source)
        except SyntaxError:
            continue  # it will fail when it runs; nothing to screen
        local_modules = modules | _imported_names(tree)
        for node in tree.body:
            bound = {node.name} if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else \
                {n.id for t in getattr(node, "targets", []) for n in ast.walk(t) if isinstance(n, ast.Name)}
            if bound & protected - {"DEVICE"}:
                flags.append(f"answer code, cell {n + 1} line {node.lineno}: rebinds "
                             f"{sorted(bound & protected)[0]!r}, which the set-up cells defined")
        for node in ast.walk(tree):
            what = None
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                for t in targets:
                    if isinstance(t, (ast.Attribute, ast.Subscript)) and _root(t) in local_modules \
                            and not ast.unparse(t).startswith(ALLOWED_SETTINGS):
                        what = f"changes {ast.unparse(t)}"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("setattr", "delattr") and node.args and _root(node.args[0]) in local_modules:
                what = f"calls {node.func.id} on {ast.unparse(node.args[0])}"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                    "exec", "eval", "compile", "globals", "locals", "breakpoint", "exit", "quit"):
                what = f"calls {node.func.id}()"
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and \
                    (not node.args or _root(node.args[0]) in local_modules):  # vars(module)[...] = ... is setattr
                what = "calls vars()" + (f" on {ast.unparse(node.args[0])}" if node.args else "")
            elif isinstance(node, ast.Global) and set(node.names) & protected:
                name = sorted(set(node.names) & protected)[0]
                what = f"rebinds {name!r} (defined by the set-up cells) from a function"
            elif isinstance(node, ast.Name) and node.id in INTERNALS:
                what = f"uses {node.id}"
            elif isinstance(node, ast.Attribute) and node.attr in INTERNALS:
                what = f"uses .{node.attr}"
            elif isinstance(node, ast.Attribute) and _root(node) == "sys" and node.attr in SYS_ATTRS:
                what = f"uses sys.{node.attr}"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                bad = [m for m in mods if m.split(".")[0] in ("ctypes", "atexit", "signal", "importlib",
                                                            "linecache", "builtins", "IPython", "nbgrader")]
                if bad:
                    what = f"imports {bad[0]}"
            if what:
                flags.append(f"answer code, cell {n + 1} line {getattr(node, 'lineno', '?')}: {what}")
    return flags


# ---- constraints: "build it with as_strided only", read from the hand-in's source ----
#
# A constrained answer cell names the function it constrains (its grade_id, or `grader.functions`). The reader
# starts at every binding of that name in the hand-in's code (any answer or added cell, a `def` nested under
# `if`, a lambda in a tuple assignment, a later rebinding) and follows, statically, every name and attribute
# the code reaches: the hand-in's module-level bindings of a name it uses, the methods and attributes of that
# name defined anywhere in the hand-in (in a class, attached afterwards, `setattr` with a constant name), the
# imports behind a name. Names local to a function are its own. What it cannot resolve fails the constrained
# tests with a reason: a computed attribute name, getattr passed around as a value, attrgetter and friends,
# code loaded at run time, a module the grader cannot find (a file the hand-in wrote), and anywhere in the
# hand-in, code that rebinds names behind the reader's back (exec, globals(), __code__, setattr on a module).

DYNAMIC = {"getattr", "setattr", "delattr", "vars", "eval", "exec", "compile", "__import__", "globals", "locals",
           "breakpoint"}
DYNAMIC_ATTRS = {"__dict__", "__getattribute__", "__getattr__", "methodcaller", "attrgetter", "import_module",
                 "__wrapped__", "__code__", "__func__", "__globals__", "__builtins__", "__subclasses__", "__setattr__",
                 "__delattr__", "__closure__", "__defaults__", "__kwdefaults__", "_getframe", "f_globals", "f_locals",
                 "f_back", "tb_frame"}
# Calls and attributes that can rebind code the reader follows, wherever they stand in the hand-in.
REBINDING_CALLS = {"exec", "eval", "compile", "globals", "locals", "__import__"}  # and vars() with no argument
REBINDING_ATTRS = {"__code__", "__dict__", "__globals__", "__builtins__", "__setattr__", "modules", "meta_path",
                   "path_hooks", "path"}
REBINDING_STORES = REBINDING_ATTRS | {"__class__", "__bases__", "__call__", "__getattr__", "__getattribute__"}
# Modules that load or build code the reader cannot see.
CODE_LOADERS = {"importlib", "imp", "runpy", "marshal", "types", "ctypes", "pickle", "dill", "cloudpickle", "code",
                "codeop", "builtins", "inspect", "pkgutil", "zipimport", "gc", "__main__"}
SOURCE_FILE_SUFFIXES = (".py", ".pyc", ".pth", ".so", ".pyd")


def constraint_failures(cells: list[dict]) -> dict[str, str]:
    """{test label: why} for the tests whose constraint the hand-in's code breaks. A constrained answer cell
    (`forbid`: names the task may not use; `constrains`: the tests that enforce it; `functions`: what it
    constrains, by default its grade_id) is read from each binding of those functions through everything it
    reaches (see above), wherever in the hand-in that is defined, and nothing else: a helper in the same cell that
    the function does not call is free to use anything. Never raises."""
    learner = [c for c in cells if c["kind"] == "answer"]
    # a name the lab's own cells (set-up and tests) bind -> what it is: "dist" -> "torch.distributed" for an
    # import, the name itself for anything else they define
    setup = _setup_bindings(tuple(c["source"] for c in cells if c["kind"] != "answer"))
    trees = []
    for c in learner:
        try:
            trees.append(nbs.parse_python(c["source"]))
        except (SyntaxError, ValueError, RecursionError):
            trees.append(None)
    index = _Index([t for t in trees if t is not None])
    failures = {}
    for cell in learner:
        forbid, tests = set(cell.get("forbid") or []), list(cell.get("constrains") or [])
        allow = cell.get("allow")
        if not tests:
            continue
        roots = [str(f) for f in cell.get("functions") or [cell["label"]]]
        try:
            reader = _Reader(index, forbid, None if allow is None else {str(a) for a in allow}, setup)
            why = index.rebinding or reader.check(roots)
        except RecursionError:
            why = "the code is nested too deeply for the grader to read"
        if why:
            for label in tests:
                failures.setdefault(label, f"constraint of `{cell['label']}`: {why}")
    return failures


@functools.lru_cache(maxsize=16)  # the lab's own cells are the same for every hand-in of a class
def _setup_bindings(sources: tuple[str, ...]) -> dict[str, str]:
    setup: dict[str, str] = {}
    for source in sources:
        try:
            tree = nbs.parse_python(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        setup.update({name: name for name in _Index([tree]).names if name not in setup})
        setup.update(_import_origins(tree))
    return setup


def _targets(target: ast.expr, value: ast.expr | None) -> list[tuple[str, ast.AST | None]]:
    """(name, the expression bound to it) for an assignment target; a tuple target against a tuple value pairs
    them up, anything else binds each name to the whole value."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, ast.Starred):
        return _targets(target.value, value)
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) and \
                not any(isinstance(e, ast.Starred) for e in target.elts + value.elts):
            return [pair for t, v in zip(target.elts, value.elts) for pair in _targets(t, v)]
        return [(n.id, value) for n in ast.walk(target) if isinstance(n, ast.Name)]
    return []


class _Index:
    """What the hand-in's code binds at module level (statements nested in if/for/while/try/with included), the
    attributes it defines anywhere (methods, `X.name = ...`, `setattr(X, "name", ...)`), and whether it rebinds
    code dynamically anywhere."""

    def __init__(self, trees: list[ast.Module]):
        self.names: dict[str, list[ast.AST]] = {}
        self.attrs: dict[str, list[ast.AST]] = {}
        # id of an expression assigned inside functions -> the names those functions bind (`ctx.x = x` in a
        # forward: reading the value alone, x is the forward's parameter, not a global)
        self.context: dict[int, set[str]] = {}
        self.rebinding = ""
        for tree in trees:
            for node in tree.body:
                self._statement(node)
            for node in ast.walk(tree):
                self._anywhere(node)
                if self.rebinding:
                    break
            for fn in ast.walk(tree):
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    bound = _locals(fn)
                    for sub in ast.walk(fn):
                        if sub is not fn:
                            self.context.setdefault(id(sub), set()).update(bound)

    def _bind(self, name: str, node: ast.AST | None) -> None:
        self.names.setdefault(name, []).append(node if node is not None else ast.Constant(None))

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._bind(node.name, node)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                self._bind((a.asname or a.name).split(".")[0], node)
            return
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for name, value in _targets(t, node.value):
                    self._bind(name, value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            for name, _ in _targets(node.target, None):
                self._bind(name, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            for name, _ in _targets(node.target, None):
                self._bind(name, node.iter)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    for name, _ in _targets(item.optional_vars, None):
                        self._bind(name, item.context_expr)
        for expr in ast.walk(node):  # walrus at module level binds a module name
            if isinstance(expr, ast.NamedExpr) and isinstance(expr.target, ast.Name):
                self._bind(expr.target.id, expr.value)
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(node, field, []) or []:
                if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    for stmt in child.body:
                        self._statement(stmt)
                elif isinstance(child, ast.stmt):
                    self._statement(child)

    def _anywhere(self, node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            declared = {n for g in ast.walk(node) if isinstance(g, ast.Global) for n in g.names}
            if declared:  # `global f` inside a function or class: what it binds to f there is a module binding
                for sub in ast.walk(node):
                    if sub is not node and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                            and sub.name in declared:
                        self._bind(sub.name, sub)
                    elif isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                        for t in sub.targets if isinstance(sub, ast.Assign) else [sub.target]:
                            for name, value in _targets(t, sub.value):
                                if name in declared:
                                    self._bind(name, value)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.attrs.setdefault(item.name, []).append(item)
                elif isinstance(item, ast.Assign):
                    for t in item.targets:
                        for name, value in _targets(t, item.value):
                            self.attrs.setdefault(name, []).append(value)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store):
                        self.attrs.setdefault(sub.attr, []).append(node.value or ast.Constant(None))
                        if sub.attr in REBINDING_STORES:
                            self.rebinding = f"the code assigns `.{sub.attr}` (line {node.lineno}), which " \
                                "rebinds code the grader reads"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            fn = node.func.id
            if fn in REBINDING_CALLS or (fn == "vars" and not node.args):
                self.rebinding = f"the code calls `{fn}` (line {node.lineno}), so the grader cannot see " \
                    "which code runs; write the code out"
            elif fn in ("setattr", "delattr") and node.args and not (
                    isinstance(node.args[0], ast.Name) and node.args[0].id == "self"):
                if len(node.args) == 3 and isinstance(node.args[1], ast.Constant) and \
                        isinstance(node.args[1].value, str):
                    self.attrs.setdefault(node.args[1].value, []).append(node.args[2])
                else:
                    self.rebinding = f"the code calls `{fn}` with a computed name (line {node.lineno}); assign " \
                        "the attribute by name"
        elif isinstance(node, ast.Attribute) and node.attr in REBINDING_ATTRS and \
                not (node.attr == "path" and _root(node) != "sys") and \
                not (node.attr in ("modules", "meta_path", "path_hooks") and _root(node) != "sys"):
            self.rebinding = f"the code uses `.{node.attr}` (line {node.lineno}), which can rebind code the " \
                "grader reads"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.strip().endswith(SOURCE_FILE_SUFFIXES) and len(node.value) < 300:
            self.rebinding = f"the code names a Python file (line {node.lineno}); the grader reads only the " \
                "code in the notebook's cells"


def _import_origins(tree: ast.Module) -> dict[str, str]:
    """{name: the dotted path it stands for} for the module-level imports of `tree` (`import torch.distributed as
    dist` -> dist: torch.distributed; `import a.b` -> a: a; `from m import x as y` -> y: m.x)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for a in node.names:
                if a.name != "*":
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _annotations(root: ast.AST) -> set[int]:
    """ids of the nodes inside type annotations: naming a type there uses nothing."""
    out = set()
    for node in ast.walk(root):
        parts = []
        if isinstance(node, ast.arg) and node.annotation is not None:
            parts.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            parts.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            parts.append(node.annotation)
        for part in parts:
            out |= {id(n) for n in ast.walk(part)}
    return out


# What any constrained function may use besides what its task allows: Python's modules that compute nothing a
# task could forbid, and what a right answer uses to talk (print, log, warn) or to tidy itself up
ALWAYS_ALLOWED = {"math", "cmath", "itertools", "functools", "operator", "collections", "dataclasses", "enum",
                  "typing", "abc", "contextlib", "logging", "warnings", "time", "random", "string", "textwrap", "re",
                  "bisect", "heapq", "copy", "json", "numbers", "fractions", "decimal", "statistics",
                  "ast.literal_eval", "sys.stderr", "sys.stdout", "sys.maxsize", "sys.float_info",
                  # arithmetic on a shape, as a right answer may write it with NumPy (its arrays' `.strides` is
                  # out of reach: `numpy` itself is not allowed, nor its constructors)
                  "numpy.prod", "numpy.cumprod", "numpy.multiply", "numpy.asarray", "numpy.array", "numpy.int64"}


class _Reader:
    def __init__(self, index: _Index, forbid: set[str], allow: set[str] | None = None,
                 setup: dict[str, str] | None = None):
        self.index, self.forbid = index, forbid
        # `allow`: the dotted names (as the lab's own cells import them: "torch.as_strided") that the constrained
        # code may reach outside Python's built-ins and the hand-in's own code; None: no allowlist
        self.allow, self.setup = (None if allow is None else allow | ALWAYS_ALLOWED), setup or {}
        self.task_allows = sorted(allow or ())
        self.seen_names: set[str] = set()
        self.seen_attrs: set[str] = set()
        self.seen_nodes: set[int] = set()

    def check(self, roots: list[str]) -> str:
        todo: list[ast.AST] = []
        for name in roots:  # its bindings, and any attribute of that name set anywhere (`__main__.f = g`)
            self.seen_names.add(name)
            todo += self.index.names.get(name, []) + self.index.attrs.get(name, [])
        while todo:
            node = todo.pop()
            if id(node) in self.seen_nodes:
                continue
            self.seen_nodes.add(id(node))
            why = self._read(node, todo)
            if why:
                return why
        return ""

    def _origin(self, name: str) -> str | None:
        """The dotted path a free name stands for where the allowlist applies: an import of the hand-in's or of
        the lab's set-up; None for the hand-in's own definitions (followed instead) and Python's built-ins."""
        bindings = self.index.names.get(name, [])
        for b in bindings:
            if isinstance(b, (ast.Import, ast.ImportFrom)):
                return _import_origins(ast.Module(body=[b], type_ignores=[])).get(name, name)
        if bindings:
            return None
        # anything else is Python's built-in, or a name out of its context (an attribute's value read where the
        # function that assigned it had it as a parameter), which nothing outside binds
        return self.setup.get(name)

    def _allowed(self, node: ast.Name, parents: dict, local: set[str], imported: dict[str, str]) -> str:
        if self.allow is None or node.id in local or not isinstance(node.ctx, ast.Load):
            return ""
        origin = imported.get(node.id) or self._origin(node.id)  # an import inside the function first
        if origin is None:
            return ""
        chain, cur = [origin], node
        while isinstance(parents.get(id(cur)), ast.Attribute) and parents[id(cur)].value is cur:
            cur = parents[id(cur)]
            chain.append(cur.attr)
        dotted = ".".join(chain)
        parts = dotted.split(".")
        if any(".".join(parts[:k]) in self.allow for k in range(1, len(parts) + 1)):
            return ""
        allows = ", ".join(f"`{a}`" for a in self.task_allows[:12]) + (", ..." if len(self.task_allows) > 12 else "")
        return (f"the code uses `{dotted}` (line {node.lineno}), which this task does not allow: it allows Python's "
                f"built-ins and standard helpers (math, itertools, functools, collections, logging, ...)"
                f"{', and ' + allows if allows else ''}")

    def _read(self, root: ast.AST, todo: list[ast.AST]) -> str:
        local = _locals(root) | self.index.context.get(id(root), set())
        parents = {id(c): p for p in ast.walk(root) for c in ast.iter_child_nodes(p)}
        typing = _annotations(root)
        imported = _import_origins(ast.Module(body=[n for n in ast.walk(root) if isinstance(
            n, (ast.Import, ast.ImportFrom))], type_ignores=[])) if self.allow is not None else {}
        for node in ast.walk(root):
            line = getattr(node, "lineno", "?")
            if id(node) in typing:
                continue
            if isinstance(node, ast.Name):
                why = self._allowed(node, parents, local, imported)
                if why:
                    return why
            if isinstance(node, ast.Attribute):
                if node.attr in self.forbid:
                    return f"the code uses `.{node.attr}` (line {line}), which this task may not use"
                if node.attr in DYNAMIC_ATTRS:
                    return f"the code reaches attributes through `.{node.attr}` (line {line}); write the calls out"
                if node.attr not in self.seen_attrs:
                    self.seen_attrs.add(node.attr)
                    todo += self.index.attrs.get(node.attr, [])
            elif isinstance(node, ast.Name):
                if node.id in self.forbid and node.id not in local and node.id not in self.index.names:
                    return f"the code uses `{node.id}` (line {line}), which this task may not use"
                if node.id in DYNAMIC_ATTRS:
                    return f"the code uses `{node.id}` (line {line}), which reaches attributes by computed names"
                if node.id in DYNAMIC and node.id not in local:
                    call = parents.get(id(node))
                    if isinstance(call, ast.Call) and call.func is node and node.id == "vars" and \
                            len(call.args) == 1 and isinstance(call.args[0], ast.Name) and call.args[0].id in local:
                        continue  # the attributes of an object the function was given, not of a module or class
                    plain = isinstance(call, ast.Call) and call.func is node and node.id in ("getattr", "setattr") \
                        and len(call.args) > 1 and isinstance(call.args[1], ast.Constant) \
                        and isinstance(call.args[1].value, str) and call.args[1].value not in self.forbid
                    if not plain:
                        return (f"the code uses `{node.id}` with a computed name or as a value (line {line}), so "
                                "the grader cannot see which operations it uses; write the calls out")
                    self.seen_attrs.add(call.args[1].value)
                    todo += self.index.attrs.get(call.args[1].value, [])
                elif node.id not in local and node.id not in self.seen_names:
                    self.seen_names.add(node.id)
                    todo += self.index.names.get(node.id, [])
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                why = self._import(node)
                if why:
                    return why
        return ""

    def _import(self, node: ast.Import | ast.ImportFrom) -> str:
        line = node.lineno
        if isinstance(node, ast.ImportFrom):
            if node.level:
                return f"the code imports relatively (line {line}); the grader reads only the notebook's code"
            modules, names = [node.module or ""], [a.name for a in node.names]
        else:
            modules, names = [a.name for a in node.names], []
        if "*" in names:
            return f"the code imports `*` (line {line}), so the grader cannot see which names it uses"
        if any(n in self.forbid for n in names + [m.rsplit(".", 1)[-1] for m in modules]):
            return f"the code imports a name this task may not use (line {line})"
        if any(n in DYNAMIC_ATTRS for n in names):
            return f"the code imports a function that reaches attributes by computed names (line {line})"
        for m in modules:
            top = m.split(".")[0]
            if top in CODE_LOADERS:
                return f"the code imports `{top}` (line {line}), which loads or changes code the grader cannot read"
            if not _installed(top):
                return (f"the code imports `{top}` (line {line}), which is not an installed package: the grader "
                        "reads only the notebook's code")
        return ""


def _locals(root: ast.AST) -> set[str]:
    """Names a function (or lambda, comprehension, class) binds for itself: its parameters and what it assigns,
    less what it declares global."""
    names, declared = set(), set()
    for node in ast.walk(root):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared |= set(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not root:
            names.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    if not isinstance(root, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        # a module-level expression (the value of an assignment) binds only what its comprehensions and lambdas
        # bind inside it
        names = {n.arg for n in ast.walk(root) if isinstance(n, ast.arg)} | {
            t.id for c in ast.walk(root) if isinstance(c, ast.comprehension) for t in ast.walk(c.target)
            if isinstance(t, ast.Name)}
    return names - declared


_FOUND: dict[str, bool] = {}


def _installed(top: str) -> bool:
    """Whether `top` is a module of the grader's own environment (found, never imported)."""
    if top not in _FOUND:
        import importlib.util
        import sys

        try:
            _FOUND[top] = top in sys.builtin_module_names or importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            _FOUND[top] = False
    return _FOUND[top]
