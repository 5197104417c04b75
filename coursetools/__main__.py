"""`python -m coursetools <command>`: the course's tooling that is not grading (the Makefile's targets
call these; grading is `python -m autograder grade`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from autograder import settings


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m coursetools", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("lint", help="notebooks follow the lab contract; ruff on Python files")
    r = sub.add_parser("release", help="regenerate labs/ from solutions/ with nbgrader")
    r.add_argument("labs", nargs="*")
    s = sub.add_parser("solutions", help="run every solution notebook with papermill")
    s.add_argument("labs", nargs="*")
    q = sub.add_parser("quality", help="the lab-quality table")
    q.add_argument("labs", nargs="*")
    q.add_argument("--no-course", action="store_true", help="skip the walkthrough notebooks")
    b = sub.add_parser("bench-grade", help="serial nbgrader vs make grade end to end (warm and cold sandbox)")
    b.add_argument("--jobs", type=int, default=0)
    b.add_argument("--classes", type=int, nargs="+", default=[8, 64], help="class sizes to time (default: 8 64)")
    dm = sub.add_parser("demo", help="write the demo class for every lab under build/demo/")
    dm.add_argument("--embedded", action="store_true",
                    help="regenerate the committed demo class tests/fixtures/demo/lab01-strides/")
    sub.add_parser("clean-notebooks", help="strip outputs and execution counts from committed notebooks")
    d = sub.add_parser("student-dist", help="write the learners' tree to build/student/")
    d.add_argument("--dest", type=Path, default=settings.STUDENT_DIST)
    d.add_argument("--weeks", help="release these weeks only: 1-3, 1,2,5 (default: every week)")
    sub.add_parser("image", help="build and smoke-test the learners' container image (Docker or Podman)")
    sub.add_parser("threats", help="rewrite THREATS.md's generated list of what the grader still trusts")
    a = p.parse_args(argv)

    if a.cmd == "lint":
        from coursetools import lint
        return lint.main()
    if a.cmd == "release":
        from coursetools import release
        return release.main(a.labs or settings.labs())
    if a.cmd == "solutions":
        from coursetools.execute import run_papermill
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
        from coursetools import quality
        from coursetools.quality import run_all
        course = False if a.no_course else (settings.week_notebooks(a.labs) if a.labs else True)
        report = run_all(a.labs or None, course=course)
        print(quality.format_table(report))
        bad = [f"{q.lab} [{k}] {m}" for q in report.labs for k, v in q.problems().items() for m in v]
        bad += [f"{c.path}: {c.error}" for c in report.course if c.error]
        print("\n".join(bad))
        return 1 if bad else 0
    if a.cmd == "bench-grade":
        import os

        from coursetools import bench
        return bench.main(a.jobs or os.cpu_count() or 1, tuple(a.classes))
    if a.cmd == "demo":
        from coursetools.demo import build_demo_class, write_embedded
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
    if a.cmd == "threats":
        from coursetools import threats
        print(f"{'rewrote' if threats.write() else 'unchanged:'} {threats.THREATS.relative_to(settings.ROOT)}")
        return 0
    if a.cmd == "image":
        from coursetools import image
        return image.build()
    if a.cmd == "student-dist":
        from coursetools.student_dist import build, parse_weeks
        try:
            weeks = parse_weeks(a.weeks)
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
        dest = build(a.dest, weeks)
        print(f"wrote {dest}" + (f" (weeks {a.weeks})" if weeks else ""))
        without = [p.parent.name for p in sorted((dest / "labs").glob("*/*.ipynb"))
                   if not (p.parent / "known-mistakes.json").exists()]
        if without:
            print(f"no known-mistakes.json (Validate names no known mistake) for {', '.join(without)}: the quality "
                  f"run (`make quality`) builds their diagnosis tables under build/diagnosis/")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
