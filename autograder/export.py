"""Stage "export": one lab's grades, in the forms an LMS imports.

`make export LAB=<lab> FORMAT=csv|canvas|gradescope` (`python -m autograder export ...`) runs after
`make grade` and reads what it left, never a hand-in:

- the run's `grades.csv`: one row per learner with the final score (after the late penalty), the
  status and whether a person should look first (`needs_review`);
- nbgrader's gradebook: the score of every test cell, manual scores given in formgrader included
  (`Grade.score` is the manual score where there is one, else the autograder's).

It writes, into the grade run's folder (`build/grades/<lab>/` unless OUT says otherwise):

- `csv`: `tests.csv`, for any spreadsheet: grades.csv's columns, then one column per graded test;
- `canvas`: `canvas.csv`, Canvas's Gradebook import: Student, ID, SIS User ID, SIS Login ID, Section,
  then the lab's column, with a "Points Possible" row;
- `gradescope`: `gradescope/<student_id>/results.json` (a digest for an id that is not a plain name),
  Gradescope's autograder results: per-test scores, hidden tests `after_published`.

Only learners on the roster are exported (an `unknown student` has no LMS row). The Canvas column is
named after the lab unless `--canvas-column "Lab 7 (12345)"` names an existing assignment (Canvas
matches "Name (id)"); learners are matched on SIS User ID, which is the course's student id.

For a whole term at once there is also an nbgrader export plug-in, `CanvasExportPlugin`: every lab in
the gradebook as one Canvas column, straight from nbgrader's own command,
`nbgrader export --exporter=autograder.export.CanvasExportPlugin --to canvas-term.csv`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.plugins import ExportPlugin

from autograder import notebooks as nbs
from autograder import settings, sheets
from autograder.collect import canvas_anonymous
from autograder.status import Status, kind_of

FORMATS = ("csv", "canvas", "gradescope")
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


@dataclass
class LearnerGrade:
    """One roster learner's row of grades.csv, with the gradebook's per-test scores."""

    row: dict[str, str]
    tests: dict[str, float] = field(default_factory=dict)  # grade_id -> score (0 where never graded)

    @property
    def student_id(self) -> str:
        return self.row["student_id"]


def graded_tests(lab: str) -> list[tuple[str, float, bool]]:
    """(grade_id, points, hidden) of every graded test cell of the lab, in notebook order."""
    out = []
    for cell in nbs.read(settings.solution_notebook(lab)).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type == "code" and meta.get("grade") and meta.get("points"):
            out.append((meta["grade_id"], float(meta["points"]), "BEGIN HIDDEN TESTS" in cell.source))
    return out


def grades_rows(lab: str, out: Path) -> list[dict[str, str]]:
    """The rows of a grade run's grades.csv (this stage and `feedback.py` start from them)."""
    path = out / "grades.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run `make grade LAB={lab}` first (it reads that run)")
    with path.open(newline="") as f:
        return sheets.reader(f)


def read_grades(lab: str, out: Path, course: Path) -> list[LearnerGrade]:
    """Roster learners' rows, with the gradebook's score of every test cell (`grade.read_gradebook`)."""
    from autograder.grade import read_gradebook

    rows = [r for r in grades_rows(lab, out) if kind_of(r["status"]) != Status.UNKNOWN_STUDENT]
    graded = [r["student_id"] for r in rows if kind_of(r["status"]) == Status.GRADED]
    book = read_gradebook(lab, course, graded) if graded else {}
    return [LearnerGrade(r, {t: score for t, (score, _) in book[r["student_id"]].cells.items()}
                         if r["student_id"] in book else {}) for r in rows]


def _canvas_table(path: Path, columns: list[str], points: list[float]):
    """A csv writer for Canvas's Gradebook import, its header and Points Possible row written; add rows with
    `_canvas_row`."""
    f = path.open("w", newline="")
    w = sheets.writer(f)
    w.writerow(CANVAS_IDENTITY + columns)
    w.writerow(["    Points Possible", "", "", "", ""] + [f"{p:g}" for p in points])
    return f, w


def _canvas_ids() -> bool:
    """Whether the ids are Canvas's own user ids: grading.toml's `[zip] lms = "canvas"` reads them from Canvas's
    download names. Otherwise they are the roster's, an institution's ids."""
    from autograder.collect import load_policy

    return load_policy().lms == "canvas"


def _canvas_row(last: str, first: str, student_id: str, email: str, scores: list[str],
                canvas_ids: bool) -> list[str]:
    """Canvas matches a row on "ID" (its own user id) or "SIS User ID" (the institution's): see `_canvas_ids`."""
    name = ", ".join(x for x in (last, first) if x) or student_id
    return [name, student_id if canvas_ids else "", "" if canvas_ids else student_id, email or "", ""] + scores


def write_tests_csv(lab: str, learners: list[LearnerGrade], path: Path) -> Path:
    tests = [t for t, _, _ in graded_tests(lab)]
    with path.open("w", newline="") as f:
        w = sheets.writer(f)
        head = list(learners[0].row) if learners else ["student_id"]
        w.writerow(head + tests)
        for learner in learners:
            w.writerow([learner.row.get(c, "") for c in head] + [f"{learner.tests.get(t, 0.0):g}" for t in tests])
    return path


def write_canvas_csv(lab: str, learners: list[LearnerGrade], path: Path, column: str | None = None) -> Path:
    f, w = _canvas_table(path, [column or lab], [sum(p for _, p, _ in graded_tests(lab))])
    canvas_ids = _canvas_ids()
    with f:
        for r in (x.row for x in learners):
            w.writerow(_canvas_row(r.get("last_name", ""), r.get("first_name", ""), r["student_id"], r.get("email", ""),
                                   [r["score"]], canvas_ids))
    return path


def gradescope_results(lab: str, learner: LearnerGrade, messages: dict[str, str] | None = None) -> dict:
    """Gradescope's results.json for one learner: the final score, and every test with its visibility and, for
    a failed test, the judge's words (`report.failure_messages`: what the feedback page says)."""
    r = learner.row
    tests = []
    for number, (grade_id, points, hidden) in enumerate(graded_tests(lab), 1):
        score = learner.tests.get(grade_id, 0.0)
        tests.append({"name": grade_id, "number": str(number), "score": score, "max_score": points,
                      "status": "passed" if score >= points else "failed",
                      "visibility": "after_published" if hidden else "visible",
                      "output": "" if score >= points else
                      (messages or {}).get(grade_id) or "the test did not pass"})
    notes = [f"status: {r['status']}"]
    if float(r.get("late_penalty") or 0):
        notes.append(f"late penalty {r['late_penalty']} ({r.get('hours_late', '')} h late)")
    return {"score": float(r["score"]), "output": "; ".join(notes), "visibility": "visible",
            "stdout_visibility": "hidden", "tests": tests}


GRADESCOPE_SCHEMA = Path(__file__).with_name("gradescope_results.schema.json")


def check_gradescope_results(data) -> list[str]:
    """What in `data` breaks Gradescope's documented results.json format (empty: nothing), by the JSON Schema
    written from its specification (gradescope_results.schema.json)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(json.loads(GRADESCOPE_SCHEMA.read_text()))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or 'results.json'}: {e.message}"
            for e in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))]


def write_gradescope(lab: str, learners: list[LearnerGrade], folder: Path, out: Path | None = None,
                     course: Path | None = None) -> Path:
    """One results.json per learner. With the grade run's `out` and `course`, a failed test carries the words its
    feedback page gives (the judge's, and a diagnosis where there is one), as the Gradescope autograder's do."""
    messages: dict[str, dict[str, str]] = {}
    if out is not None and course is not None:
        from autograder.feedback import current_grades
        from autograder.report import failure_messages

        for g in current_grades(lab, out, course):
            if g.cells:
                messages[g.student_id] = failure_messages(lab, course, g)
    for learner in learners:
        data = gradescope_results(lab, learner, messages.get(learner.student_id))
        problems = check_gradescope_results(data)
        if problems:
            raise ValueError(f"results.json for {learner.student_id} breaks Gradescope's format: {problems}")
        dest = folder / settings.file_name(learner.student_id) / "results.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(data, indent=1) + "\n")
    return folder


def export_command(lab: str, fmt: str, out: Path | None = None, course: Path | None = None,
                   canvas_column: str | None = None) -> int:
    out = (out or settings.GRADES / lab).absolute()
    course = (course or settings.GRADING_COURSE).absolute()
    try:
        learners = read_grades(lab, out, course)
    except FileNotFoundError as e:
        print(str(e))
        return 2
    if fmt == "csv":
        dest = write_tests_csv(lab, learners, out / "tests.csv")
    elif fmt == "canvas":
        hidden = [x.student_id for x in learners if canvas_anonymous(x.student_id)]
        if hidden:  # an import would match none of them, and give every roster learner "missing"
            print(f"not written: {len(hidden)} hand-in(s) carry Canvas's anonymous ids ({', '.join(hidden[:3])}"
                  f"{', ...' if len(hidden) > 3 else ''}), and Canvas's Gradebook import matches a row by user id "
                  "only. Enter these scores in SpeedGrader, or once the assignment's anonymity is lifted, download "
                  "the submissions again (the file names then carry user ids) and grade that download.")
            return 2
        dest = write_canvas_csv(lab, learners, out / "canvas.csv", canvas_column)
    else:
        dest = write_gradescope(lab, learners, out / "gradescope", out, course)
    review = [x.student_id for x in learners if x.row.get("needs_review") == "yes"]
    print(f"wrote {dest} ({len(learners)} learner(s))")
    if review:
        print(f"before importing, look at the rows grades.csv marks needs_review: {', '.join(review)}")
    return 0


class CanvasExportPlugin(ExportPlugin):
    """nbgrader's export, in Canvas's Gradebook import layout: one column per lab in the gradebook, scores after
    the late penalty (manual scores included), one row per student in the gradebook."""

    def export(self, gradebook) -> None:
        dest = Path(self.to or "canvas.csv")
        labs = [a for a in gradebook.assignments if not self.assignment or a.name in self.assignment]
        students = [s for s in gradebook.students if not self.student or s.id in self.student]
        f, w = _canvas_table(dest, [a.name for a in labs], [a.max_score for a in labs])
        canvas_ids = _canvas_ids()
        with f:
            for s in students:
                scores = []
                for a in labs:
                    try:
                        sub = gradebook.find_submission(a.name, s.id)
                        scores.append(f"{sub.score - sum(nb.late_submission_penalty or 0 for nb in sub.notebooks):g}")
                    except Exception:  # noqa: BLE001 - nbgrader's MissingEntry: no hand-in
                        # a lab that was graded gives 0 to a learner with no hand-in, as make export does;
                        # a lab nobody handed in yet stays blank (Canvas then leaves the cell alone)
                        scores.append("0" if a.submissions else "")
                w.writerow(_canvas_row(s.last_name, s.first_name, s.id, s.email, scores, canvas_ids))
        self.log.info("wrote %s (%d students, %d labs)", dest, len(students), len(labs))
