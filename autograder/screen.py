"""A static look at a hand-in's answer code, before it runs, for tampering.

The sandbox runner's tripwires catch tampering while it happens; this screen catches
what leaves no trace by the end of a cell (patch a test helper, let the test use it,
put it back). It looks for things no answer in this course needs: assigning to or
deleting attributes of imported modules, `setattr`/`delattr` on them, and names that
reach into the interpreter (`__builtins__`, `sys.modules`, frames, code objects,
`get_ipython`). Every flagged hand-in scores 0 and is listed in the report for a
person to review; formgrader's manual scores survive a regrade.
"""

from __future__ import annotations

import ast

INTERNALS = {"__builtins__", "__import__", "get_ipython", "__subclasses__", "__globals__", "__code__",
             "__closure__", "f_back", "f_globals", "f_locals", "f_code", "tb_frame", "gi_frame", "cr_frame",
             "_getframe", "settrace", "setprofile", "excepthook", "displayhook", "addaudithook", "_exit"}
SYS_ATTRS = {"modules", "stdout", "stderr", "meta_path", "path_hooks", "exit"}
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
            tree = ast.parse(source)
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
            tree = ast.parse(source)
        except SyntaxError:
            continue  # it will fail when it runs; nothing to screen
        local_modules = modules | _imported_names(tree)
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
                bad = [m for m in mods if m.split(".")[0] in ("ctypes", "gc", "atexit", "signal", "importlib",
                                                            "linecache", "builtins", "IPython", "nbgrader")]
                if bad:
                    what = f"imports {bad[0]}"
            if what:
                flags.append(f"answer code, cell {n + 1} line {getattr(node, 'lineno', '?')}: {what}")
    return flags
