"""An honest but untidy hand-in, generated from a lab's solution.

Learners do not hand in the instructor's tidy notebook. A right answer must keep full marks when its
notebook also has what real hand-ins have (issue "Grader v3", point 5, "no false zeros"):

- a scratch cell after every answer that draws from Python's and torch's random generators, so a test
  cell's position and the generators' state both move;
- every public function an answer defines wrapped so that each call prints to stderr, logs a warning
  and raises a Python warning (`NOISY_WRAPPER`);
- in every answer cell that declares a constraint (`grader.constrains` in its metadata), an unused helper
  that uses a name the constraint forbids: constraints follow functions, not cells.

`coursetools.quality` grades this hand-in for every lab beside the solution and requires full marks;
tests/test_exploits.py grades it beside the exploit corpus.
"""

from __future__ import annotations

import ast
import copy

import nbformat

from autograder import notebooks as nbs
from autograder.run import interface

NOISY_WRAPPER = """
import functools
import logging
import sys
import warnings


def _noisy(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        print("note: calling", fn.__name__, file=sys.stderr)
        logging.getLogger("lab").warning("called %s", fn.__name__)
        warnings.warn("a warning from a right answer")
        return fn(*args, **kwargs)
    return inner
"""

SCRATCH = "import random\nimport torch\nscratch = 1\nrandom.random(), torch.rand(3)\n"


def _plain_functions(source: str, names: set[str]) -> list[str]:
    """Interface functions the cell defines at top level without a decorator. A decorated one (a
    `@triton.jit` kernel, a registered op) is an object the decorator made; wrapping it in a Python
    function would change what it is, which no honest learner does."""
    try:
        tree = nbs.parse_python(source)
    except SyntaxError:
        return []
    return [n.name for n in tree.body
            if isinstance(n, ast.FunctionDef) and not n.decorator_list and n.name in names]


def _forbidden_helper(cell) -> str:
    """An unused helper beside a constrained function that touches every name its constraint forbids."""
    rule = cell.metadata.get("grader", {})
    forbidden = [f for f in rule.get("forbid", []) if f.isidentifier()]
    if not rule.get("constrains") or not forbidden:
        return ""
    return "\n\ndef _scratch_helper(x):\n    return (" + "".join(f"x.{f}, " for f in forbidden) + ")\n"


def untidy_handin(solution_nb):
    """The filled-in solution notebook `solution_nb`, made untidy as the module docstring says."""
    nb = copy.deepcopy(solution_nb)
    answers = [n for n, c in enumerate(nb.cells) if nbs.is_solution(c)]
    names = set(interface(nb))
    for n in answers:
        nb.cells[n].source += _forbidden_helper(nb.cells[n])
    for n in reversed(answers):  # after each answer: a scratch cell that also wraps what the answer defined
        wrap = "".join(f"{name} = _noisy({name})\n" for name in _plain_functions(nb.cells[n].source, names))
        nb.cells.insert(n + 1, nbformat.v4.new_code_cell((NOISY_WRAPPER if n == answers[0] else "") + SCRATCH + wrap))
    return nb
