"""`python -m autograder grade ...`: `make grade`; `... release-feedback`: `make release-feedback`; `... export`:
`make export`. The course's other tooling is `python -m coursetools`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("grade", help="grade a folder of hand-ins")
    g.add_argument("--lab", required=True)
    g.add_argument("--submissions", type=Path, help="a folder, an LMS .zip, or `exchange` (nbgrader collect)")
    g.add_argument("--out", type=Path)
    g.add_argument("--insecure", action="store_true", help="grade without the sandbox (never for real hand-ins)")
    g.add_argument("--jobs", type=int, default=0, help="hand-ins run at a time (default: the number of cores)")
    g.add_argument("--force", action="store_true", help="run every hand-in again, even those already run")
    g.add_argument("--student", action="append", help="run this learner's hand-in again (repeatable; a comma list "
                                                      "works too); every other stored run is reused")
    g.add_argument("--roster", type=Path, help="students.csv (default: grading.toml's, or one in SUBMISSIONS)")
    g.add_argument("--course", type=Path, help="the nbgrader course folder (default: build/course)")
    g.add_argument("--exchange-root", help="with --submissions exchange: nbgrader's exchange folder")
    g.add_argument("--course-id", help="with --submissions exchange: the course id in the exchange")
    g.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="run hand-ins here (JOBS at a time) or on a dask.distributed cluster")
    g.add_argument("--scheduler", help="with --executor dask: the scheduler's address (tcp://host:8786)")
    e = sub.add_parser("export", help="a graded lab's grades for an LMS: csv (per test), canvas, gradescope")
    e.add_argument("--lab", required=True)
    e.add_argument("--format", required=True, choices=("csv", "canvas", "gradescope"))
    e.add_argument("--out", type=Path, help="the grade run's folder (default: build/grades/<lab>)")
    e.add_argument("--course", type=Path, help="the nbgrader course folder (default: build/course)")
    e.add_argument("--canvas-column", help='the Canvas assignment column, "Name (id)" (default: the lab id)')
    r = sub.add_parser("release-feedback", help="feedback pages to learners: re-rendered from the gradebook, one zip "
                                                "per learner, and through the nbgrader exchange")
    r.add_argument("--lab", required=True)
    r.add_argument("--out", type=Path, help="the grade run's folder (default: build/grades/<lab>)")
    r.add_argument("--course", type=Path, help="the nbgrader course folder (default: build/course)")
    r.add_argument("--exchange-root", help="nbgrader's exchange folder (default: nbgrader_config.py's)")
    r.add_argument("--course-id", help="the course id in the exchange (default: nbgrader_config.py's)")
    gs = sub.add_parser("gradescope", help="inside Gradescope's autograder: grade /autograder/submission")
    gs.add_argument("--lab", required=True)
    gs.add_argument("--root", type=Path, default=Path("/autograder"), help="Gradescope's folder (tests: a copy)")
    gs.add_argument("--trust-container", action="store_true",
                    help="where no sandbox can start, grade in Gradescope's per-submission container anyway")
    gb = sub.add_parser("gradescope-bundle", help="the autograder zip for Gradescope's configuration page")
    gb.add_argument("--lab", required=True)
    gb.add_argument("--trust-container", action="store_true",
                    help="run_autograder grades without a sandbox where none can start (INSECURE=1)")
    a = p.parse_args(argv)

    if a.cmd == "grade":
        from autograder.grade import grade_command
        if a.executor == "dask" and not a.scheduler:
            p.error("--executor dask needs --scheduler <address>")
        return grade_command(a.lab, a.submissions, a.out, a.insecure, a.jobs or None, a.force, a.roster, a.course,
                             a.exchange_root, a.course_id,
                             a.scheduler if a.executor == "dask" else None,
                             [x.strip() for v in (a.student or []) for x in v.split(",") if x.strip()] or None)
    if a.cmd == "release-feedback":
        from autograder.feedback import release_feedback
        return release_feedback(a.lab, a.out, a.course, a.exchange_root, a.course_id)
    if a.cmd == "gradescope":
        from autograder.gradescope import run
        return run(a.lab, a.root, a.trust_container)
    if a.cmd == "gradescope-bundle":
        from autograder.gradescope import bundle
        made = bundle(a.lab, trust_container=a.trust_container)
        print(f"wrote {made}: upload it on Gradescope's Configure Autograder page")
        return 0
    if a.cmd == "export":
        from autograder.export import export_command
        return export_command(a.lab, a.format, a.out, a.course, a.canvas_column)
    return 2


if __name__ == "__main__":
    sys.exit(main())
