"""Stage "feedback": every learner gets their feedback page back.

`make release-feedback LAB=<lab>` (`python -m autograder release-feedback ...`) runs after `make grade`,
and again after any manual grading in formgrader. It

1. renders each learner's feedback page again from the gradebook, so manual scores and the
   instructor's formgrader comments are on it (`report.feedback_html`: test names, points and the
   judge's messages; never a hidden test's source), into the grade run's `feedback/`;
2. zips each page as `feedback-zips/<student_id>.zip`, for courses without a hub: upload each zip to
   the learner's LMS submission (the file name is the id the LMS download carried);
3. for hand-ins collected from the nbgrader exchange (`SUBMISSIONS=exchange`), puts the page where
   nbgrader's `release_feedback` takes it (the course's `feedback/<student>/<lab>/`, beside the
   submission's timestamp and secret) and runs it: JupyterHub learners then fetch it from the
   Assignments tab, or `nbgrader fetch_feedback`.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from autograder import report, settings
from autograder.grade import GradingError, SubmissionGrade, nbgrader, read_gradebook
from autograder.status import Status, kind_of


def current_grades(lab: str, out: Path, course: Path) -> list[SubmissionGrade]:
    """grades.csv's rows, with the gradebook's scores for graded hand-ins (manual scores included)."""
    from autograder.export import grades_rows

    rows = grades_rows(lab, out)
    graded = [r["student_id"] for r in rows if kind_of(r["status"]) == Status.GRADED]
    book = read_gradebook(lab, course, graded) if graded else {}
    results = []
    for r in rows:
        g = SubmissionGrade(r["student_id"], float(r["score"]), float(r["max_score"]), r["status"],
                            raw_score=float(r["raw_score"] or 0), late_penalty=float(r["late_penalty"] or 0),
                            hours_late=float(r["hours_late"] or 0),
                            extension_hours=float(r.get("extension_hours") or 0), submitted=r["submitted_at"])
        if r["student_id"] in book and kind_of(book[r["student_id"]].status) == Status.GRADED:
            b = book[r["student_id"]]
            g.score, g.raw_score, g.cells, g.late_penalty = b.score, b.raw_score, b.cells, b.late_penalty
        results.append(g)
    return results


def instructor_comments(lab: str, course: Path, students: list[str]) -> dict[str, dict[str, str]]:
    """student id -> {cell: comment} for the comments typed in formgrader."""
    from nbgrader.api import Gradebook, MissingEntry

    out: dict[str, dict[str, str]] = {}
    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        for sid in students:
            try:
                nb = gb.find_submission_notebook(lab, lab, sid)
            except MissingEntry:
                continue
            notes = {c.name: c.manual_comment for c in nb.comments if (c.manual_comment or "").strip()}
            if notes:
                out[sid] = notes
    return out


def release_feedback(lab: str, out: Path | None = None, course: Path | None = None,
                     exchange_root: str | None = None, course_id: str | None = None) -> int:
    out = (out or settings.GRADES / lab).absolute()
    course = (course or settings.GRADING_COURSE).absolute()
    try:
        results = current_grades(lab, out, course)
    except FileNotFoundError as e:
        print(e)
        return 2
    learners = [g for g in results if kind_of(g.status) != Status.UNKNOWN_STUDENT]
    comments = instructor_comments(lab, course, [g.student_id for g in learners])
    report.write_feedback(lab, course, learners, out / "feedback", comments)
    zips = out / "feedback-zips"
    shutil.rmtree(zips, ignore_errors=True)
    zips.mkdir(parents=True)
    for g in learners:
        name = settings.file_name(g.student_id)
        with zipfile.ZipFile(zips / f"{name}.zip", "w", zipfile.ZIP_DEFLATED) as z:
            z.write(out / "feedback" / name / f"{lab}.html", f"{lab}-feedback.html")
    print(f"wrote {len(learners)} feedback page(s) to {out / 'feedback'} and one zip per learner to {zips}"
          + (f" ({len(comments)} with instructor comments)" if comments else ""))

    # the exchange: hand-ins nbgrader collected carry the secret that names their feedback file
    staged = []
    for g in learners:
        if settings.file_name(g.student_id) != g.student_id:
            continue  # not a plain name (a roster's `../x`): nbgrader's exchange never made a folder for it
        handin = out / "exchange" / g.student_id / lab
        if not (handin / "submission_secret.txt").is_file():
            continue
        dest = course / "feedback" / g.student_id / lab
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        shutil.copy(out / "feedback" / settings.file_name(g.student_id) / f"{lab}.html", dest / f"{lab}.html")
        for name in ("timestamp.txt", "submission_secret.txt"):
            if (handin / name).is_file():
                shutil.copy(handin / name, dest / name)
        staged.append(g.student_id)
    if not staged:
        print("no hand-in came from the nbgrader exchange: nothing released there")
        return 0
    args = ["release_feedback", lab, f"--CourseDirectory.root={course}",
            f"--CourseDirectory.feedback_directory={course / 'feedback'}"]
    if exchange_root:
        args.append(f"--Exchange.root={exchange_root}")
    if course_id:
        args.append(f"--CourseDirectory.course_id={course_id}")
    try:
        nbgrader(args, settings.ROOT)
    except GradingError as e:
        print(e)
        return 1
    print(f"released feedback to {len(staged)} learner(s) through the nbgrader exchange: {', '.join(staged)}")
    return 0
