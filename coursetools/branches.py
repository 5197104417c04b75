"""Which branches of the reference solution's answers the hidden tests reach (the quality table's
"branches" column).

A branch is a way out of a decision in an answer's functions: an `if`'s true and false sides (an `elif`
is the false side of the `if` before it, and an `if` of its own), a loop entered and a loop left, each
`except` handler, each `match` case. The quality run executes the answer cells again under names of its own,
records with `Recorder` the line-to-line steps each call of their code takes while the hidden tests run,
and `report` says which branches no step took. A branch the hidden tests never reach is a place where a
wrong answer cannot be told from a right one.

Line steps are what Python's tracer gives, so a decision whose whole body sits on its own line
(`if x: y = 1`) cannot be split into its sides and is left out of the count (`if x: return y` and
`if x: raise E` can: the true side leaves the frame from that line). Code running in other processes (lab
10's ranks) is not seen.
"""

from __future__ import annotations

import ast
import sys
import threading
from dataclasses import dataclass

RETURN = -1  # the step out of a frame (a return, or an exception leaving it)


@dataclass(frozen=True)
class Branch:
    function: str
    line: int
    what: str  # "if true", "if false", "loop entered", "loop left", "except ValueError", "case 2"

    def __str__(self) -> str:
        return f"`{self.function}` line {self.line}: {self.what}"


def _span(nodes) -> tuple[int, int]:
    return nodes[0].lineno, max(getattr(n, "end_lineno", n.lineno) or n.lineno for n in nodes)


def _inside(line: int, span: tuple[int, int]) -> bool:
    return span[0] <= line <= span[1]


class _Decisions(ast.NodeVisitor):
    """Each branch with the test that says it was taken: (Branch, test(lines, arcs) -> bool)."""

    def __init__(self):
        self.found: list[tuple[Branch, object]] = []
        self.function = ""

    def visit_FunctionDef(self, node):
        outer, self.function = self.function, (f"{self.function}.{node.name}" if self.function else node.name)
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def _add(self, line, what, test):
        if self.function:
            self.found.append((Branch(self.function, line, what), test))

    def visit_If(self, node):
        head = (node.lineno, node.test.end_lineno or node.lineno)
        body = _span(node.body)
        if body[0] > head[1]:
            self._add(node.lineno, "if true", lambda lines, arcs, b=body[0]: b in lines)
            if node.orelse:
                self._add(node.lineno, "if false", lambda lines, arcs, o=node.orelse[0].lineno: o in lines)
            else:
                self._add(node.lineno, "if false", lambda lines, arcs, h=head, b=body: any(
                    _inside(a, h) and not _inside(z, h) and not _inside(z, b) for a, z in arcs))
        elif isinstance(node.body[0], (ast.Return, ast.Raise)) and len(node.body) == 1:
            line = node.lineno  # `if x: return y`: the true side leaves the frame from this very line
            self._add(line, "if true", lambda lines, arcs, h=line: (h, RETURN) in arcs)
            self._add(line, "if false", lambda lines, arcs, h=line: any(a == h and z not in (h, RETURN)
                                                                         for a, z in arcs))
        self.generic_visit(node)

    def _loop(self, node, head_end):
        head, body = (node.lineno, head_end), _span(node.body)
        if body[0] <= head[1]:
            return
        self._add(node.lineno, "loop entered", lambda lines, arcs, b=body[0]: b in lines)
        endless = isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and node.test.value
        if not endless:
            self._add(node.lineno, "loop left without break", lambda lines, arcs, h=head, b=body: any(
                _inside(a, h) and not _inside(z, h) and not _inside(z, b) for a, z in arcs))

    def visit_For(self, node):
        self._loop(node, node.iter.end_lineno or node.lineno)
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_While(self, node):
        self._loop(node, node.test.end_lineno or node.lineno)
        self.generic_visit(node)

    def visit_Try(self, node):
        for h in node.handlers:
            name = ast.unparse(h.type) if h.type is not None else "(any exception)"
            if h.body[0].lineno > h.lineno:
                self._add(h.lineno, f"except {name}", lambda lines, arcs, b=h.body[0].lineno: b in lines)
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_Match(self, node):
        for k, case in enumerate(node.cases):
            if case.body[0].lineno > case.pattern.lineno:
                self._add(case.pattern.lineno, f"case {k + 1} ({ast.unparse(case.pattern)})",
                          lambda lines, arcs, b=case.body[0].lineno: b in lines)
        self.generic_visit(node)


def decisions(source: str) -> list[tuple[Branch, object]]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    v = _Decisions()
    v.visit(tree)
    return v.found


class Recorder:
    """Record (line, next line) steps of every frame whose code comes from one of `files` (code object file
    names), in every thread, while in a `with` block."""

    def __init__(self, files: set[str]):
        self.files = set(files)
        self.arcs: dict[str, set[tuple[int, int]]] = {f: set() for f in files}
        self.lines: dict[str, set[int]] = {f: set() for f in files}

    def _global(self, frame, event, arg):
        name = frame.f_code.co_filename
        if event != "call" or name not in self.files:
            return None
        arcs, lines = self.arcs[name], self.lines[name]
        last = [-frame.f_code.co_firstlineno]

        def local(frame, event, arg):
            if event == "line":
                arcs.add((last[0], frame.f_lineno))
                lines.add(frame.f_lineno)
                last[0] = frame.f_lineno
            elif event == "return":
                arcs.add((last[0], RETURN))
            return local
        return local

    def __enter__(self):
        self._old = sys.gettrace()
        threading.settrace(self._global)
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc):
        sys.settrace(self._old)
        threading.settrace(None)
        return False


def report(sources: dict[str, str], recorder: Recorder) -> dict:
    """{"reached": n, "total": n, "missed": [str(Branch), ...]} over the answer sources ({file name: code})."""
    reached, missed = 0, []
    for name, code in sources.items():
        lines, arcs = recorder.lines.get(name, set()), recorder.arcs.get(name, set())
        for branch, taken in decisions(code):
            if taken(lines, arcs):
                reached += 1
            else:
                missed.append(str(branch))
    return {"reached": reached, "total": reached + len(missed), "missed": missed}
