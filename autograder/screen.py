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
                    "exec", "eval", "compile", "globals", "breakpoint", "exit", "quit"):
                what = f"calls {node.func.id}()"
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

DYNAMIC = {"getattr", "setattr", "delattr", "vars", "eval", "exec", "compile", "__import__", "globals", "locals"}
DYNAMIC_ATTRS = {"__dict__", "__getattribute__", "__getattr__", "methodcaller", "attrgetter", "import_module",
                 "__wrapped__", "__code__", "__func__"}


def constraint_failures(cells: list[dict]) -> dict[str, str]:
    """{test label: why} for the tests whose constraint the hand-in's code breaks. A constrained answer cell
    (`forbid`: names the task may not use; `constrains`: the tests that enforce it) is read together with
    every helper of the hand-in it calls, wherever that helper is defined. Using a forbidden name, or
    reaching attributes by computed names (getattr with a variable, eval, __dict__), fails those tests:
    the constraint must be visible in the source for the grader to credit it. Never raises."""
    learner = [c for c in cells if c["kind"] == "answer"]
    trees = []
    for c in learner:
        try:
            trees.append(nbs.parse_python(c["source"]))
        except (SyntaxError, ValueError, RecursionError):
            trees.append(None)
    helpers: dict[str, list[ast.AST]] = {}
    for tree in trees:
        for node in tree.body if tree else []:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                helpers.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        helpers.setdefault(t.id, []).append(node.value)
    failures = {}
    for cell, tree in zip(learner, trees):
        forbid, tests = set(cell.get("forbid") or []), list(cell.get("constrains") or [])
        if not tests or tree is None:
            continue
        why = _breaks(tree, forbid, helpers)
        if why:
            for label in tests:
                failures.setdefault(label, f"constraint of `{cell['label']}`: {why}")
    return failures


def _breaks(tree: ast.AST, forbid: set[str], helpers: dict[str, list[ast.AST]]) -> str:
    seen: set[str] = set()
    todo = [tree]
    while todo:
        for node in ast.walk(todo.pop()):
            if isinstance(node, ast.Attribute) and node.attr in forbid:
                return f"the code uses `.{node.attr}` (line {node.lineno}), which this task may not use"
            if isinstance(node, ast.ImportFrom) and any(a.name in forbid for a in node.names):
                return f"the code imports a name this task may not use (line {node.lineno})"
            if isinstance(node, ast.Attribute) and node.attr in DYNAMIC_ATTRS:
                return f"the code reaches attributes through `.{node.attr}` (line {node.lineno}); write the calls out"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in DYNAMIC and not (
                    node.func.id in ("getattr", "setattr") and len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant) and node.args[1].value not in forbid):
                return (f"the code calls `{node.func.id}` with a computed name (line {node.lineno}), so the "
                        "grader cannot see which operations it uses; write the calls out")
            if isinstance(node, ast.Name) and node.id in helpers and node.id not in seen:
                seen.add(node.id)
                todo += helpers[node.id]
    return ""
