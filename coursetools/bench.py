"""`make bench-grade`: how fast `make grade` is against plain nbgrader.

For each class size (8 and 64 copies of the lab01 solution by default), in a fresh course each way:
1. plain serial `nbgrader autograde` (its own Execute, one kernel per hand-in, no sandbox); the
   assignment is generated before the clock starts;
2. `make grade JOBS=<n>` exactly as an instructor types it, end to end (make's venv check, the
   interpreter, collecting, the reference run, the runs, nbgrader's gradebook, grades.csv, feedback and the
   report), with the lab's reference observations deleted first, so they are built inside the timed run:
   what a new instructor's first `make grade` of a lab costs;
3. the same class again with the reference kept (what every later class of the lab costs);
4. for the smallest class only, with COURSE_COLD_SANDBOX=1 (a new sandbox and interpreter per hand-in), to
   show what the warm sandbox saves.
For `make grade` the assignment is generated before the clock, as for nbgrader. It reports; it asserts
nothing (timings depend on the machine).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from autograder import grade, reference, settings
from autograder import notebooks as nbs

LAB = "lab01-strides"
CLASSES = (8, 64)
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


def _class(dest: Path, copies: int) -> Path:
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
    """(seconds with the reference built in the run, seconds with the reference kept), one course."""
    course = base / "course"
    grade.prepare_course(LAB, course, settings.run_parameters(), fresh=True)
    shutil.rmtree(reference.CACHE / LAB, ignore_errors=True)  # built inside the first timed run
    first = make_grade(course, handins, base / "out-first", jobs, cold)
    return first, make_grade(course, handins, base / "out-again", jobs, cold)


def main(jobs: int, classes: tuple[int, ...] = CLASSES) -> int:
    root = settings.BUILD / "bench"
    if root.exists():
        shutil.rmtree(root)
    print(f"{LAB} solution copies; make grade runs {jobs} at a time, end to end; target on 2 cores: >= 10x "
          "plain serial nbgrader for 64 hand-ins, the reference built in the run")
    for copies in classes:
        base = root / f"class-{copies}"
        handins = _class(base / "handins", copies)
        serial = plain_nbgrader(base, handins)
        print(f"{copies} hand-ins:")
        print(f"  plain serial nbgrader autograde             : {serial:7.1f} s")
        first, again = ours(base / "warm", handins, jobs, cold=False)
        print(f"  make grade JOBS={jobs}, reference built in the run: {first:7.1f} s  {serial / first:5.1f}x faster")
        print(f"  make grade JOBS={jobs}, reference kept           : {again:7.1f} s  {serial / again:5.1f}x faster")
        end = json.loads((base / "warm" / "out-first" / "audit.jsonl").read_text().splitlines()[-1])
        print(f"  the grading process's peak memory: {end.get('grader_peak_bytes', 0) / 2**20:.0f} MB")
        if copies == min(classes):
            _, cold = ours(base / "cold", handins, jobs, cold=True)
            print(f"  make grade JOBS={jobs}, COURSE_COLD_SANDBOX=1, reference kept: {cold:7.1f} s  "
                  f"{serial / cold:5.1f}x faster")
        shutil.rmtree(base, ignore_errors=True)
    return 0
