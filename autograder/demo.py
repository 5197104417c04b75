"""The demo class: a few hand-ins generated from the lab itself, so that
`make grade LAB=<lab>` works out of the box and its grades are predictable."""

from __future__ import annotations

import ast
import copy
import shutil
from pathlib import Path

from autograder import notebooks as nbs
from autograder import settings
from autograder.mutants import load_mutants


def apply_mutant(student_nb, solution_nb, mutant):
    """A complete hand-in in which one graded function is the mutant's."""
    nb = nbs.fill_solutions(student_nb, solution_nb)
    for cell in nb.cells:
        if nbs.is_solution(cell) and mutant.replaces in defined_names(cell.source):
            cell.source = mutant.source
            return nb
    raise ValueError(f"{mutant.path}: no solution cell defines {mutant.replaces!r}")


def defined_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def prepend_to_first_answer(nb, code: str):
    nb = copy.deepcopy(nb)
    cell = next(c for c in nb.cells if nbs.is_solution(c))
    cell.source = code + cell.source
    return nb


def build_demo_class(lab: str, dest: Path | None = None) -> Path:
    """ada: every answer right; bea: one plausible mistake (the first mutant); cal: handed in
    untouched; dan: eats memory; eve: kills the kernel in her first answer."""
    dest = dest or settings.DEMO / lab
    if dest.exists():
        shutil.rmtree(dest)
    student = nbs.read(settings.student_notebook(lab))
    solution = nbs.read(settings.solution_notebook(lab))
    hand_ins = {"ada": nbs.fill_solutions(student, solution), "cal": student}
    mutants = load_mutants(lab)
    if mutants:
        hand_ins["bea"] = apply_mutant(student, solution, mutants[0])
    # Hand-ins that break the run must get a clear status and 0 for what did not run.
    hand_ins["dan"] = prepend_to_first_answer(hand_ins["ada"], "_hog = bytearray(8 << 30)  # more than the limit\n")
    hand_ins["eve"] = prepend_to_first_answer(hand_ins["ada"], "import os\nos._exit(0)  # kills the kernel\n")
    for sid, nb in hand_ins.items():
        nbs.write(nb, dest / sid / f"{lab}.ipynb")
    return dest
