"""`make bench-grade`: how fast `make grade` is against plain nbgrader, and what the sandbox costs.

Grades the same 8 copies of the lab01 solution three ways, each in a fresh course:
1. plain serial `nbgrader autograde` (its own Execute, one kernel per hand-in, no sandbox);
   for each, the assignment is generated before the clock starts;
2. `make grade JOBS=<n>` (every hand-in in its own sandbox, n at a time);
3. the same with `--insecure` (no sandbox), to isolate the sandbox's cost.
It reports; it asserts nothing (timings depend on the machine).
"""

from __future__ import annotations

import contextlib
import io
import shutil
import time

from autograder import grade, settings
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


def _class(dest):
    student = nbs.read(settings.student_notebook(LAB))
    full = nbs.fill_solutions(student, nbs.read(settings.solution_notebook(LAB)))
    for i in range(COPIES):
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


def ours(base, handins, jobs, insecure) -> float:
    name = "insecure" if insecure else "sandboxed"
    # As for plain nbgrader, the assignment is generated before the clock starts: that is set-up done
    # once per lab, not grading.
    grade.prepare_course(LAB, base / name / "course", settings.run_parameters(), fresh=True)
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        rc = grade.grade_command(LAB, handins, base / name / "out", insecure=insecure, jobs=jobs, force=True,
                                 course=base / name / "course")
    if rc != 0:
        raise RuntimeError(f"make grade ({name}) failed with exit {rc}")
    return time.perf_counter() - t0


def main(jobs: int) -> int:
    base = settings.BUILD / "bench"
    if base.exists():
        shutil.rmtree(base)
    handins = _class(base / "class")
    print(f"grading {COPIES} copies of the {LAB} solution; make grade runs {jobs} at a time")
    serial = plain_nbgrader(base, handins)
    print(f"  plain serial nbgrader autograde : {serial:6.1f} s")
    sandboxed = ours(base, handins, jobs, insecure=False)
    print(f"  make grade JOBS={jobs} (sandboxed)   : {sandboxed:6.1f} s   {serial / sandboxed:.2f}x faster")
    insecure = ours(base, handins, jobs, insecure=True)
    print(f"  make grade JOBS={jobs} --insecure    : {insecure:6.1f} s")
    print(f"  the sandbox's cost               : {100 * (sandboxed / insecure - 1):+.0f}%")
    print("  target on 2 cores: >= 1.7x faster than serial nbgrader, sandbox <= 15%")
    return 0
