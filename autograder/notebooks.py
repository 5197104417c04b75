"""Reading nbgrader metadata and transforming notebooks (plain functions, no I/O state)."""

from __future__ import annotations

import ast
import copy
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder import settings

# CPython 3.11 before 3.11.8 keeps ast.parse's recursion depth in interpreter-wide state, so two threads
# parsing at once can fail with "SystemError: AST constructor recursion depth mismatch" (gh-106905). The
# grader runs hand-ins on threads, so every parse in it goes through this lock.
_PARSE_LOCK = threading.Lock()


def parse_python(source: str) -> ast.Module:
    """ast.parse, safe to call from the grader's threads."""
    with _PARSE_LOCK:
        return ast.parse(source)

SOLUTION_BLOCK = re.compile(r"^([ \t]*)### BEGIN SOLUTION\n(.*?)^[ \t]*### END SOLUTION[ \t]*\n?",
                            re.S | re.M)
HIDDEN_BLOCK = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS\n.*?^[ \t]*### END HIDDEN TESTS[ \t]*\n?",
                          re.S | re.M)


def read(path: Path) -> NotebookNode:
    return nbformat.read(str(path), as_version=4)


def write(nb: NotebookNode, path: Path | str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


def nbgrader_meta(cell: NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def is_grade(cell: NotebookNode) -> bool:
    return bool(nbgrader_meta(cell).get("grade"))


def is_solution(cell: NotebookNode) -> bool:
    return bool(nbgrader_meta(cell).get("solution"))


def is_test(cell: NotebookNode) -> bool:
    """An autograded test cell: graded code that is not a solution."""
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


def grade_id(cell: NotebookNode) -> str:
    return nbgrader_meta(cell).get("grade_id", "")


def tags(cell: NotebookNode) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def parameters_cell(nb: NotebookNode) -> NotebookNode | None:
    for cell in nb.cells:
        if cell.cell_type == "code" and "parameters" in tags(cell):
            return cell
    return None


def inject_parameters(nb: NotebookNode, params: dict) -> NotebookNode:
    """Return a copy whose parameters cell ends with `NAME = value` overrides.

    The grader restores the locked parameters cell from the instructor's source,
    so rewriting that cell (not adding papermill's extra cell) is what reaches
    every graded run.
    """
    nb = copy.deepcopy(nb)
    if not params:
        return nb
    cell = parameters_cell(nb)
    if cell is None:
        raise ValueError("notebook has no cell tagged 'parameters'")
    lines = "".join(f"{k} = {v!r}\n" for k, v in params.items())
    cell.source = cell.source.rstrip("\n") + "\n# injected for this run\n" + lines
    return nb


def fill_solutions(student_nb: NotebookNode, solution_nb: NotebookNode) -> NotebookNode:
    """The student notebook with every solution cell answered as the instructor did:
    what a perfect learner hands in (markers stripped, no hidden tests)."""
    answers = {grade_id(c): c.source for c in solution_nb.cells if is_solution(c)}
    nb = copy.deepcopy(student_nb)
    for cell in nb.cells:
        if is_solution(cell) and grade_id(cell) in answers:
            cell.source = strip_solution_markers(answers[grade_id(cell)])
    return nb


def strip_solution_markers(source: str) -> str:
    return SOLUTION_BLOCK.sub(lambda m: m.group(2), source)


def strip_hidden_tests(source: str) -> str:
    return HIDDEN_BLOCK.sub("", source)


def clear_outputs(nb: NotebookNode) -> NotebookNode:
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


@dataclass(frozen=True)
class CellScore:
    grade_id: str
    score: float
    max_score: float
    error: str  # first line of the failure, "" when the cell passed


def score_test_cell(cell: NotebookNode) -> CellScore:
    """The course's rule for an executed test cell: an error scores 0, otherwise full points. Output on
    stderr (a warning, a log line) costs nothing: the grader hands nbgrader test cells whose stderr is
    shown as stdout (`run.test_outputs`), since nbgrader's `determine_grade` would score it 0."""
    points = float(nbgrader_meta(cell).get("points", 0))
    for out in cell.get("outputs", []):
        if out.output_type == "error":
            first = (out.get("evalue") or "").strip().splitlines()
            return CellScore(grade_id(cell), 0.0, points, f"{out.ename}: {first[0] if first else ''}")
    return CellScore(grade_id(cell), points, points, "")


def count_skips(nb: NotebookNode) -> int:
    n = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                n += out.text.count(settings.SKIP_MARK)
    return n
