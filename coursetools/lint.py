"""Lint: notebooks are well-formed and follow the lab contract; mutants are well-formed.

Each problem is one line naming the file, the cell and the fix, so a maintainer
never has to read a traceback to learn that a grade_id is duplicated.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder import notebooks as nbs
from autograder import settings

GPU_TAG = "gpu"
GPU_MODULE_ROOTS = ("torch.cuda", "triton")


@dataclass(frozen=True)
class Problem:
    path: Path
    where: str  # "cell 3 (grade_id 'x')" or "" for the whole file
    message: str

    def __str__(self) -> str:
        rel = _rel(self.path)
        return f"{rel}: {self.where + ': ' if self.where else ''}{self.message}"


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(settings.ROOT))
    except ValueError:
        return str(path)


def _where(i: int, cell) -> str:
    gid = nbs.grade_id(cell)
    return f"cell {i}" + (f" (grade_id {gid!r})" if gid else "")


def load(path: Path) -> tuple[nbformat.NotebookNode | None, list[Problem]]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return None, [Problem(path, "", f"not valid JSON (line {exc.lineno}, column {exc.colno}: "
                                        f"{exc.msg}); fix: repair the file or restore it from git")]
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # noqa: BLE001 - nbformat raises several types
        msg = str(exc).strip().splitlines()[0]
        return None, [Problem(path, "", f"not a valid nbformat 4 notebook ({msg}); "
                                        "fix: open and re-save it in JupyterLab")]
    return nb, []


def check_clean(path: Path, nb) -> list[Problem]:
    problems = []
    spec = nb.metadata.get("kernelspec", {}).get("name")
    if spec != settings.KERNEL:
        problems.append(Problem(path, "", f"kernelspec is {spec!r}, expected {settings.KERNEL!r}; "
                                          "fix: Kernel > Change Kernel > Python 3, then save"))
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            problems.append(Problem(path, _where(i, cell), "has outputs; fix: `make clean-notebooks` "
                                                           "(or Edit > Clear Outputs of All Cells) before committing"))
        if cell.get("execution_count") is not None:
            problems.append(Problem(path, _where(i, cell), "has an execution count; "
                                                           "fix: `make clean-notebooks` before committing"))
    return problems


def check_parameters(path: Path, nb, locked: bool) -> list[Problem]:
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    params = [(i, c) for i, c in code if "parameters" in nbs.tags(c)]
    if not params:
        return [Problem(path, "", "no cell tagged 'parameters'; fix: make the first code cell "
                                  "`DEVICE = \"auto\"` / `SEED = 0` and add the tag 'parameters'")]
    i, cell = params[0]
    problems = []
    if code and code[0][0] != i:
        problems.append(Problem(path, _where(i, cell), "the parameters cell must be the first code cell"))
    names = _assigned_names(cell.source)
    for required in ("DEVICE", "SEED"):
        if required not in names:
            problems.append(Problem(path, _where(i, cell), f"parameters cell does not set {required}; "
                                                           f"fix: add `{required} = ...`"))
    if locked and not (nbs.nbgrader_meta(cell).get("locked") and nbs.grade_id(cell)):
        problems.append(Problem(path, _where(i, cell), "parameters cell must be a locked nbgrader cell "
                                                       "(grade_id 'parameters') so a hand-in cannot change it"))
    return problems


def _assigned_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {t.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)}


def check_nbgrader(path: Path, nb) -> list[Problem]:
    problems = []
    seen: dict[str, int] = {}
    for i, cell in enumerate(nb.cells):
        meta = nbs.nbgrader_meta(cell)
        if not meta:
            continue
        gid = meta.get("grade_id")
        if not gid:
            problems.append(Problem(path, f"cell {i}", "nbgrader cell without a grade_id; "
                                                       "fix: give it a unique grade_id"))
            continue
        if gid in seen:
            problems.append(Problem(path, _where(i, cell), f"duplicate grade_id (also cell {seen[gid]}); "
                                                           "fix: rename one of them"))
        seen[gid] = i
        if meta.get("grade"):
            pts = meta.get("points")
            if not isinstance(pts, (int, float)) or pts <= 0:
                problems.append(Problem(path, _where(i, cell), f"graded cell has points={pts!r}; "
                                                               "fix: give it a positive number of points"))
            if not meta.get("solution") and not meta.get("locked"):
                problems.append(Problem(path, _where(i, cell), "test cell is not locked; fix: set locked true"))
        if meta.get("solution") and cell.cell_type == "code" and "### BEGIN SOLUTION" not in cell.source:
            problems.append(Problem(path, _where(i, cell), "solution cell without ### BEGIN/END SOLUTION "
                                                           "markers; fix: wrap the answer in them"))
    if not any(nbs.is_test(c) for c in nb.cells):
        problems.append(Problem(path, "", "lab has no graded test cell; fix: add test cells with points"))
    return problems


_ATTR_CHAIN = re.compile(r"\b(torch\.cuda(?:\.\w+)+|triton(?:\.\w+)+)")


def check_gpu_cells(path: Path, nb) -> list[Problem]:
    """GPU-only cells never run in CI: at least compile them and check that every
    torch.cuda.* / triton.* name they use exists in the pinned versions."""
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or GPU_TAG not in nbs.tags(cell):
            continue
        python = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            compile(python, f"{path.name}[{i}]", "exec")
        except SyntaxError as exc:
            problems.append(Problem(path, _where(i, cell), f"GPU-only cell does not compile: {exc.msg} "
                                                           f"(line {exc.lineno})"))
            continue
        for chain in sorted(set(_ATTR_CHAIN.findall(python))):
            missing = _missing_attribute(chain)
            if missing:
                problems.append(Problem(path, _where(i, cell), f"GPU-only cell uses {chain}, but {missing} "
                                                               "does not exist in the pinned version"))
    return problems


def _missing_attribute(chain: str) -> str:
    parts = chain.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except ImportError:
        return ""  # triton is Linux-only; nothing to check where it is absent
    for k in range(1, len(parts)):
        name = ".".join(parts[: k + 1])
        if hasattr(obj, parts[k]):
            obj = getattr(obj, parts[k])
            continue
        try:
            obj = importlib.import_module(name)
        except ImportError:
            return name
    return ""


def check_catalogues(lab: str, solution_nb) -> list[Problem]:
    """The lab's mutant and alternative catalogues parse, apply to the solution and are big enough."""
    from coursetools.mutants import load_alternatives, load_mutants

    problems = []
    tests = {nbs.grade_id(c) for c in solution_nb.cells if nbs.is_test(c)}
    mutants, alternatives = load_mutants(lab, strict=False), load_alternatives(lab, strict=False)
    for e in mutants + alternatives:
        if e.error:
            problems.append(Problem(e.path, e.name, e.error))
        for gid in e.must_fail:
            if gid not in tests:
                problems.append(Problem(e.path, e.name, f"must fail {gid!r}, which is not a test cell "
                                                        f"of {lab} (test cells: {', '.join(sorted(tests))})"))
    need = 8 if lab.startswith("lab06") else 6
    if len(mutants) < need:
        problems.append(Problem(settings.MUTANTS / f"{lab}.md", "",
                                f"{len(mutants)} mutants, the design asks for at least {need}"))
    if len(alternatives) < 2:
        problems.append(Problem(settings.ALTERNATIVES / f"{lab}.md", "",
                                f"{len(alternatives)} correct alternatives, the design asks for at least 2"))
    return problems


def lint_notebook(path: Path, kind: str) -> list[Problem]:
    """kind: 'solution' (instructor source), 'student' (generated) or 'course' (walkthrough)."""
    nb, problems = load(path)
    if nb is None:
        return problems
    problems += check_clean(path, nb)
    problems += check_parameters(path, nb, locked=kind != "course")
    problems += check_gpu_cells(path, nb)
    if kind == "solution":
        problems += check_nbgrader(path, nb)
        problems += check_catalogues(path.parent.name, nb)
    return problems


def lint_all(run_ruff: bool = True) -> list[Problem]:
    problems: list[Problem] = []
    for lab in settings.labs():
        problems += lint_notebook(settings.solution_notebook(lab), "solution")
        student = settings.student_notebook(lab)
        if not student.exists():
            problems.append(Problem(student, "", "missing; fix: `make release`"))
        else:
            problems += lint_notebook(student, "student")
    for path in settings.course_notebooks():
        problems += lint_notebook(path, "course")
    if run_ruff:
        problems += ruff()
    return problems


def ruff() -> list[Problem]:
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--quiet", "--output-format=concise", "."],
                          cwd=settings.ROOT, capture_output=True, text=True)
    if proc.returncode == 0:
        return []
    return [Problem(settings.ROOT / "ruff", "", line) for line in proc.stdout.splitlines() if line.strip()] or \
        [Problem(settings.ROOT / "ruff", "", proc.stderr.strip() or "ruff failed")]


def main() -> int:
    problems = lint_all()
    for p in problems:
        print(p)
    n_nb = len(settings.labs()) * 2 + len(settings.course_notebooks())
    print(f"lint: {n_nb} notebooks, {len(problems)} problem(s)")
    return 1 if problems else 0
