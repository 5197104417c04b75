"""`python -m autograder <command>`: the Makefile's targets call these."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from autograder import settings


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("lint", help="notebooks follow the lab contract; ruff on Python files")
    r = sub.add_parser("release", help="regenerate labs/ from solutions/ with nbgrader")
    r.add_argument("labs", nargs="*")
    s = sub.add_parser("solutions", help="run every solution notebook with papermill")
    s.add_argument("labs", nargs="*")
    q = sub.add_parser("quality", help="the lab-quality table")
    q.add_argument("labs", nargs="*")
    q.add_argument("--no-course", action="store_true", help="skip the walkthrough notebooks")
    g = sub.add_parser("grade", help="grade a folder of hand-ins")
    g.add_argument("--lab", required=True)
    g.add_argument("--submissions", type=Path, help="a folder, an LMS .zip, or `exchange` (nbgrader collect)")
    g.add_argument("--out", type=Path)
    g.add_argument("--insecure", action="store_true", help="grade without the sandbox (never for real hand-ins)")
    g.add_argument("--jobs", type=int, default=0, help="hand-ins run at a time (default: the number of cores)")
    g.add_argument("--force", action="store_true", help="run every hand-in again, even those already run")
    g.add_argument("--roster", type=Path, help="students.csv (default: grading.toml's, or one in SUBMISSIONS)")
    g.add_argument("--course", type=Path, help="the nbgrader course folder (default: build/course)")
    g.add_argument("--exchange-root", help="with --submissions exchange: nbgrader's exchange folder")
    g.add_argument("--course-id", help="with --submissions exchange: the course id in the exchange")
    g.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="run hand-ins here (JOBS at a time) or on a dask.distributed cluster")
    g.add_argument("--scheduler", help="with --executor dask: the scheduler's address (tcp://host:8786)")
    b = sub.add_parser("bench-grade", help="serial nbgrader vs make grade JOBS=n, and the sandbox's cost")
    b.add_argument("--jobs", type=int, default=0)
    dm = sub.add_parser("demo", help="write the demo class for every lab under build/demo/")
    dm.add_argument("--embedded", action="store_true",
                    help="regenerate the committed demo class autograder/demo/lab01-strides/")
    sub.add_parser("clean-notebooks", help="strip outputs and execution counts from committed notebooks")
    d = sub.add_parser("student-dist", help="write the learners' tree to build/student/")
    d.add_argument("--dest", type=Path, default=settings.STUDENT_DIST)
    a = p.parse_args(argv)

    if a.cmd == "lint":
        from autograder import lint
        return lint.main()
    if a.cmd == "release":
        from autograder import release
        return release.main(a.labs or settings.labs())
    if a.cmd == "solutions":
        from autograder.execute import run_papermill
        params = settings.run_parameters()
        failed = 0
        for lab in a.labs or settings.labs():
            out = settings.EXECUTED / "solutions" / f"{lab}.ipynb"
            t0 = time.perf_counter()
            try:
                run_papermill(settings.solution_notebook(lab), out, params)
                print(f"{lab:<24} ok    {time.perf_counter() - t0:6.1f} s  -> {out.relative_to(settings.ROOT)}")
            except Exception as exc:  # noqa: BLE001 - report every lab, then fail
                failed += 1
                print(f"{lab:<24} FAIL  {time.perf_counter() - t0:6.1f} s  {str(exc).strip()[-400:]}")
        return 1 if failed else 0
    if a.cmd == "quality":
        from autograder import quality
        from autograder.quality import run_all
        course = False if a.no_course else (settings.week_notebooks(a.labs) if a.labs else True)
        report = run_all(a.labs or None, course=course)
        print(quality.format_table(report))
        bad = [f"{q.lab} [{k}] {m}" for q in report.labs for k, v in q.problems().items() for m in v]
        bad += [f"{c.path}: {c.error}" for c in report.course if c.error]
        print("\n".join(bad))
        return 1 if bad else 0
    if a.cmd == "grade":
        from autograder.grade import grade_command
        if a.executor == "dask" and not a.scheduler:
            p.error("--executor dask needs --scheduler <address>")
        return grade_command(a.lab, a.submissions, a.out, a.insecure, a.jobs or None, a.force, a.roster, a.course,
                             a.exchange_root, a.course_id,
                             a.scheduler if a.executor == "dask" else None)
    if a.cmd == "bench-grade":
        import os

        from autograder import bench
        return bench.main(a.jobs or os.cpu_count() or 1)
    if a.cmd == "demo":
        from autograder.demo import build_demo_class, write_embedded
        if a.embedded:
            print(write_embedded())
            return 0
        for lab in settings.labs():
            print(build_demo_class(lab))
        return 0
    if a.cmd == "clean-notebooks":
        from autograder import notebooks as nbs
        paths = [settings.solution_notebook(lab) for lab in settings.labs()] + settings.course_notebooks()
        for path in paths:
            nb = nbs.read(path)
            clean = nbs.clear_outputs(nb)
            if clean != nb:
                nbs.write(clean, path)
                print(f"cleaned {path.relative_to(settings.ROOT)}")
        return 0
    if a.cmd == "student-dist":
        from autograder.student_dist import build
        print(f"wrote {build(a.dest)}")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
