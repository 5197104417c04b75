"""Grading hand-ins with nbgrader in a scratch course directory.

This is the one place the pipeline turns notebooks into scores: the lab-quality
check and `make grade` both call `autograde`, so hardening the grader (sandbox,
parallel jobs) replaces this module and nothing else.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from autograder import notebooks as nbs
from autograder import sandbox, settings

SCRATCH_CONFIG = """\
# Scratch course for one grading run; everything but the directories comes
# from the course's own nbgrader_config.py.
c = get_config()  # noqa: F821
load_subconfig({main!r})  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///" + {db!r}
"""

SANDBOX_CONFIG = """\
# Run each hand-in in the bubblewrap sandbox instead of nbgrader's in-process Execute.
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades
from autograder.sandbox_execute import SandboxExecute
c.Autograde.autograde_preprocessors = [SandboxExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                       SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
c.SandboxExecute.status_dir = {status!r}
c.SandboxExecute.slot = {slot!r}
"""


@dataclass
class SubmissionGrade:
    student_id: str
    score: float
    max_score: float
    status: str  # "graded", or why not
    cells: dict[str, tuple[float, float]] = field(default_factory=dict)  # grade_id -> (score, max)


class GradingError(RuntimeError):
    pass


def nbgrader(args: list[str], course: Path) -> str:
    # nbgrader runs the venv's `alembic` script to create the gradebook: put the venv's bin first.
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                          capture_output=True, text=True, env=env)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise GradingError(f"`nbgrader {' '.join(args)}` failed in {course} (exit {proc.returncode}):\n"
                           + log[-3000:])
    return log


def prepare_course(lab: str, course: Path, params: dict | None = None, sandboxed: bool = False,
                   slot: int = 0) -> Path:
    """A fresh scratch course holding `lab`'s source; returns the generated student notebook.
    With `sandboxed`, autograding runs every hand-in in the bubblewrap sandbox."""
    if course.exists():
        shutil.rmtree(course)
    (course / "source").mkdir(parents=True)
    config = SCRATCH_CONFIG.format(main=str(settings.NBGRADER_CONFIG), root=str(course),
                                   db=str(course / "gradebook.db"))
    if sandboxed:
        if not sandbox.available():
            raise GradingError(sandbox.INSTALL_HINT)
        config += SANDBOX_CONFIG.format(status=str(course / "status"), slot=slot)
    (course / "nbgrader_config.py").write_text(config)
    shutil.copytree(settings.SOLUTIONS / lab, course / "source" / lab,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    src = course / "source" / lab / f"{lab}.ipynb"
    if params:
        nbs.write(nbs.inject_parameters(nbs.read(src), params), src)
    nbgrader(["generate_assignment", lab, "--force"], course)
    return course / "release" / lab / f"{lab}.ipynb"


def autograde(lab: str, submissions: dict[str, Path], course: Path,
              params: dict | None = None, sandboxed: bool = True) -> list[SubmissionGrade]:
    """Grade {student_id: notebook} for `lab` in the scratch course `course`."""
    prepare_course(lab, course, params, sandboxed)
    return grade_prepared(lab, submissions, course)


def grade_prepared(lab: str, submissions: dict[str, Path], course: Path) -> list[SubmissionGrade]:
    """Autograde hand-ins in a course that `prepare_course` set up."""
    for student, notebook in submissions.items():
        dest = course / "submitted" / student / lab
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        shutil.copy(notebook, dest / f"{lab}.ipynb")
    if submissions:
        nbgrader(["autograde", lab, "--force"], course)
    return read_gradebook(lab, course, list(submissions))


def read_gradebook(lab: str, course: Path, students: list[str]) -> list[SubmissionGrade]:
    from nbgrader.api import Gradebook, MissingEntry

    results = []
    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        assignment = gb.find_assignment(lab)
        max_score = float(assignment.max_score)
        for student in students:
            try:
                sub = gb.find_submission_notebook(lab, lab, student)
            except MissingEntry:
                results.append(SubmissionGrade(student, 0.0, max_score, "not graded (see nbgrader log)"))
                continue
            cells = {g.name: (float(g.score or 0.0), float(g.max_score)) for g in sub.grades
                     if g.cell_type == "code"}
            results.append(SubmissionGrade(student, float(sub.score), max_score, run_status(course, student),
                                           cells))
    return results


def run_status(course: Path, student: str) -> str:
    """How the hand-in's run ended: "graded", or why its cells score 0 (timeout, memory limit, ...)."""
    path = course / "status" / f"{student}.json"
    if not path.exists():
        return "graded"
    return json.loads(path.read_text()).get("status", "graded")


def collect_folder(folder: Path, lab: str) -> dict[str, Path]:
    """`<folder>/<student_id>/<lab>.ipynb` -> {student_id: path}."""
    subs = {}
    for path in sorted(folder.glob(f"*/{lab}.ipynb")):
        subs[path.parent.name] = path
    return subs


def write_grades_csv(results: list[SubmissionGrade], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student_id", "score", "max_score", "status"])
        for r in sorted(results, key=lambda r: r.student_id):
            w.writerow([r.student_id, f"{r.score:g}", f"{r.max_score:g}", r.status])


def grade_command(lab: str, submissions: Path | None, out: Path | None, insecure: bool = False) -> int:
    from autograder import demo

    if lab not in settings.labs():
        print(f"unknown lab {lab!r}; labs: {', '.join(settings.labs())}", file=sys.stderr)
        return 2
    if submissions is None:
        submissions = demo.build_demo_class(lab)
        print(f"SUBMISSIONS not given: grading the demo class in {submissions}")
    out = out or settings.GRADES / lab
    subs = collect_folder(submissions, lab)
    if not subs:
        print(f"no hand-ins found: expected {submissions}/<student_id>/{lab}.ipynb", file=sys.stderr)
        return 2
    if insecure:
        print("WARNING: --insecure: hand-ins run WITHOUT the sandbox, as this user, with access to the course "
              "files. Never use this for real hand-ins.", file=sys.stderr)
    elif not sandbox.available():
        print(sandbox.INSTALL_HINT, file=sys.stderr)
        return 2
    print(f"grading {len(subs)} hand-in(s) of {lab} {'WITHOUT a sandbox' if insecure else 'in the sandbox'} ...")
    results = autograde(lab, subs, out / "course", settings.run_parameters(), sandboxed=not insecure)
    write_grades_csv(results, out / "grades.csv")
    for r in sorted(results, key=lambda r: r.student_id):
        print(f"  {r.student_id:<20} {r.score:>6g} / {r.max_score:g}  {r.status}")
    print(f"wrote {out / 'grades.csv'}")
    return 0
