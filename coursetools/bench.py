"""`make bench-grade`: how fast `make grade` is against plain nbgrader.

Grades the same 8 copies of the lab01 solution, each way in a fresh course:
1. plain serial `nbgrader autograde` (its own Execute, one kernel per hand-in, no sandbox); the
   assignment is generated before the clock starts;
2. `make grade JOBS=<n>` exactly as an instructor types it, end to end (make's venv check, the
   interpreter, collecting, the runs, nbgrader's gradebook, grades.csv, feedback and the report): every
   hand-in in its own sandbox, each a fresh child of a warm sandbox per slot;
3. the same with COURSE_COLD_SANDBOX=1 (a new sandbox and interpreter per hand-in), to show what the warm
   sandbox saves.
For `make grade` too the assignment is generated before the clock, and the lab's reference observations
are built by a first run on another class: both are done once per lab, not per class. That first run's
time is reported as well. It reports; it asserts nothing (timings depend on the machine).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from autograder import grade, reference, settings
from autograder import notebooks as nbs

LAB = "lab01-strides"
COPIES = 8
PLAIN_CONFIG = """\
c = get_config()  # noqa: F821
load_subconfig({main!r})  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.db_url = "sqlite:///" + {db!r}
"""


def _class(dest: Path, copies: int = COPIES) -> Path:
    student = nbs.read(settings.student_notebook(LAB))
    full = nbs.fill_solutions(student, nbs.read(settings.solution_notebook(LAB)))
    for i in range(copies):
        nbs.write(full, dest / f"s{i + 1:02d}" / f"{LAB}.ipynb")
    return dest


def plain_nbgrader(base, handins) -> float:
    course = base / "plain"
    course.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(PLAIN_CONFIG.format(
        main=str(settings.NBGRADER_CONFIG), root=str(course), db=str(course / "gradebook.db")))
    shutil.copytree(settings.SOLUTIONS / LAB, course / "source" / LAB)
    src = course / "source" / LAB / f"{LAB}.ipynb"
    nbs.write(nbs.inject_parameters(nbs.read(src), settings.run_parameters()), src)
    grade.nbgrader(["generate_assignment", LAB, "--force"], course)
    for sid in sorted(p.name for p in handins.iterdir()):
        (course / "submitted" / sid / LAB).mkdir(parents=True)
        shutil.copy(handins / sid / f"{LAB}.ipynb", course / "submitted" / sid / LAB / f"{LAB}.ipynb")
    t0 = time.perf_counter()
    grade.nbgrader(["autograde", LAB, "--force"], course)
    return time.perf_counter() - t0


def make_grade(course: Path, handins: Path, out: Path, jobs: int, cold: bool) -> float:
    """Wall-clock seconds of `make grade` on `handins`, as an instructor runs it."""
    env = {**os.environ, "COURSE_COLD_SANDBOX": "1" if cold else ""}
    cmd = ["make", "-s", "--no-print-directory", "grade", f"LAB={LAB}", f"SUBMISSIONS={handins}", f"OUT={out}",
           f"COURSE={course}", f"JOBS={jobs}", "FORCE=1", f"VENV={sys.prefix}"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=settings.ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` failed with exit {proc.returncode}:\n{proc.stdout[-2000:]}"
                           f"\n{proc.stderr[-2000:]}")
    return seconds


def ours(base: Path, handins: Path, jobs: int, cold: bool) -> tuple[float, float]:
    """(seconds for the first class of the lab, reference included; seconds for the timed class)."""
    name = "cold" if cold else "warm"
    course = base / name / "course"
    grade.prepare_course(LAB, course, settings.run_parameters(), fresh=True)
    shutil.rmtree(reference.CACHE / LAB, ignore_errors=True)  # the first class builds the reference: timed
    first = make_grade(course, _class(base / name / "first-class", copies=1), base / name / "first-out", jobs, cold)
    return first, make_grade(course, handins, base / name / "out", jobs, cold)


def main(jobs: int) -> int:
    base = settings.BUILD / "bench"
    if base.exists():
        shutil.rmtree(base)
    handins = _class(base / "class")
    print(f"grading {COPIES} copies of the {LAB} solution; make grade runs {jobs} at a time, end to end")
    serial = plain_nbgrader(base, handins)
    print(f"  plain serial nbgrader autograde          : {serial:6.1f} s")
    first, warm = ours(base, handins, jobs, cold=False)
    print(f"  make grade JOBS={jobs} (warm sandbox)         : {warm:6.1f} s   {serial / warm:.2f}x faster")
    first_cold, cold = ours(base, handins, jobs, cold=True)
    print(f"  make grade JOBS={jobs} COURSE_COLD_SANDBOX=1  : {cold:6.1f} s   {serial / cold:.2f}x faster")
    print(f"  a lab's first class (1 hand-in, reference built): {first:.1f} s warm, {first_cold:.1f} s cold")
    print("  target on 2 cores: make grade (warm) >= 3x faster than serial nbgrader")
    return 0
