"""What `make grade` leaves for people: feedback per student, a class report, an audit log.

Feedback shows each test's outcome and a message written by the trusted side (the
judge's reason, or what kind of failure the test cell had). Nothing the hand-in's
process printed or raised is quoted: not a hidden test's source, inputs or values,
and not text a hand-in might have smuggled out of one.
"""

from __future__ import annotations

import base64
import io
import json
import statistics
import threading
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from autograder import notebooks as nbs
from autograder import settings
from autograder.status import Status, kind_of

TEMPLATES = Path(__file__).with_name("templates")  # feedback and report pages: Jinja2, every value escaped


def _render(name: str, **values) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["num"] = lambda x: f"{x:g}"
    return env.get_template(name).render(**values)


class AuditLog:
    """Append-only JSON lines: who graded what, when, with which result (one writer at a time)."""

    def __init__(self, path: Path):
        self.path, self.lock = path, threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, event: str, **fields) -> None:
        rec = {"time": datetime.now(UTC).isoformat(timespec="seconds"), "event": event, **fields}
        with self.lock, self.path.open("a") as f:
            f.write(json.dumps(rec, default=str) + "\n")


KNOWN_ERRORS = {"LabCheckFailure": "a check of the test did not hold",
                "NotImplementedError": "the answer still raises NotImplementedError (the stub is not replaced)",
                "CellTimeout": "the test ran past its time limit", "GradingError": "the grader stopped the test"}


def _message(cell, verdict: dict | None, hidden: bool) -> str:
    """The learner-facing reason a test failed, in the trusted side's own words. Nothing the hand-in's
    process wrote (its messages, its printed text, its values) reaches feedback: a hand-in could put
    hidden-test text there. Visible tests' full messages are in the learner's own notebook."""
    if verdict and verdict.get("reason") and not verdict.get("reason", "").startswith("the test failed in your"):
        return verdict["reason"]
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    streams = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    if errors:
        ename = str(errors[0].get("ename", ""))
        why = KNOWN_ERRORS.get(ename, "the answer raised an error" if ename.isidentifier() else "it failed")
        if ename == "GradingError":
            why = str(errors[0].get("evalue", ""))[:300] if ename == "GradingError" else why
        where = "" if hidden else " (run the test cell in your notebook to see the full message)"
        return f"{why}{where}"
    if streams:
        return "the test did not pass (what it wrote is not shown here)"
    return ""


def _failures(notebook, grade, verdicts: dict | None):
    """(grade_id, hidden, points got, points possible, message) per graded test cell of the run. A failed test
    of an answer whose cell still raises the stub's NotImplementedError says so (test_<f> and hidden_<f> test
    the answer cell <f>): "not written yet" teaches more than the check that stopped."""
    unwritten = {nbs.grade_id(c) for c in notebook.cells
                 if c.cell_type == "code" and nbs.is_solution(c) and "raise NotImplementedError" in c.source}
    for cell in notebook.cells:
        if cell.cell_type != "code" or not nbs.is_grade(cell) or nbs.is_solution(cell):
            continue
        gid = nbs.grade_id(cell)
        hidden = "BEGIN HIDDEN TESTS" in cell.source
        got, out_of = grade.cells.get(gid, (0.0, float(nbs.nbgrader_meta(cell).get("points", 0))))
        msg = "" if got >= out_of else _message(cell, (verdicts or {}).get(gid), hidden)
        if got < out_of and (verdicts or {}).get(gid, {}).get("diagnosis"):
            msg = f"{msg}\n{verdicts[gid]['diagnosis']}" if msg else verdicts[gid]["diagnosis"]
        answer = gid.removeprefix("test_").removeprefix("hidden_")
        if got < out_of and answer in unwritten:
            msg = f"the answer `{answer}` is not written yet (its cell still raises NotImplementedError)"
        yield gid, hidden, got, out_of, msg


def _stored_run(lab: str, course: Path, g, table: list[dict] | None = None):
    """The hand-in's judged run, with the diagnoses `table` (diagnose.load) gives its failed tests."""
    from autograder import diagnose
    from autograder.run import HandinRun

    path = course / "runs" / lab / f"{settings.file_name(g.student_id)}.json"
    if not path.exists() or kind_of(g.status) in (Status.MISSING, Status.MALFORMED, Status.REFUSED,
                                                  Status.UNKNOWN_STUDENT):
        return None
    run = HandinRun.from_json(json.loads(path.read_text()))
    diagnose.apply(run, table)
    return run


def failure_messages(lab: str, course: Path, g) -> dict[str, str]:
    """grade_id -> the trusted side's words for each failed test of `g`'s stored run (what feedback pages say)."""
    from autograder import diagnose

    run = _stored_run(lab, course, g, diagnose.load(lab))
    if run is None or run.notebook is None:
        return {}
    return {gid: msg for gid, _, got, out_of, msg in _failures(run.notebook, g, run.verdicts) if got < out_of}


def feedback_html(lab: str, grade, notebook, verdicts: dict | None = None, comments: dict | None = None) -> str:
    rows = None if notebook is None else [
        {"gid": gid, "hidden": hidden, "got": got, "out_of": out_of, "ok": got >= out_of, "msg": msg}
        for gid, hidden, got, out_of, msg in _failures(notebook, grade, verdicts)]
    return _render("feedback.html.j2", title=f"{lab}: feedback for {grade.student_id}", g=grade, rows=rows,
                   comments=comments or {})


def write_feedback(lab: str, course: Path, results, dest: Path, comments: dict | None = None) -> dict[str, dict]:
    """One page per learner in dest/<student_id>/<lab>.html; `comments`: student id -> {cell: comment}. Returns
    {student id: the verdicts of the run, diagnoses included}, which the class report counts."""
    from autograder import diagnose

    table = diagnose.load(lab)
    verdicts: dict[str, dict] = {}
    for g in results:
        name = settings.file_name(g.student_id)
        run = _stored_run(lab, course, g, table)
        out = dest / name / f"{lab}.html"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(feedback_html(lab, g, run.notebook if run else None, run.verdicts if run else None,
                                     (comments or {}).get(g.student_id)))
        if run is not None:
            verdicts[g.student_id] = run.verdicts
    return verdicts


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def misconceptions(graded, verdicts: dict[str, dict] | None) -> tuple[list[dict], list[str]]:
    """The class's diagnoses, from each hand-in's verdicts as `write_feedback` diagnosed them: ([{"words",
    "replaces", "see", "learners", "share", "tests": {grade_id: share}}], the tests any diagnosis was made on),
    most common first. A share is of the graded hand-ins."""
    if not verdicts or not graded:
        return [], []
    found: dict[str, dict] = {}
    for g in graded:
        for gid, v in verdicts.get(g.student_id, {}).items():
            row = v.get("diagnosed")
            if not row:
                continue
            entry = found.setdefault(row["misconception"], {"words": row["words"], "replaces": row["replaces"],
                                                            "see": row.get("see") or {}, "who": set(),
                                                            "tests": {}})
            entry["who"].add(g.student_id)
            entry["tests"].setdefault(gid, set()).add(g.student_id)
    rows = [{**e, "learners": len(e["who"]), "share": len(e["who"]) / len(graded),
             "tests": {t: len(w) / len(graded) for t, w in sorted(e["tests"].items())}}
            for e in found.values()]
    rows.sort(key=lambda r: (-r["learners"], r["replaces"], r["words"]))
    return rows, sorted({t for r in rows for t in r["tests"]})


def _misconception_figure(rows: list[dict], tests: list[str]) -> str:
    """A heat map: for each misconception (a row) and test (a column), the share of the class it explains."""
    import matplotlib.pyplot as plt
    import numpy as np

    if not rows:
        return ""
    grid = np.array([[100 * r["tests"].get(t, 0.0) for t in tests] for r in rows])
    fig, ax = plt.subplots(figsize=(max(9.0, 0.9 * len(tests) + 7), 0.45 * len(rows) + 2.2))
    shown = ax.imshow(grid, cmap="Reds", vmin=0, vmax=max(1.0, float(grid.max())), aspect="auto")
    ax.set_xticks(range(len(tests)), tests, rotation=45, ha="right", fontsize=8)
    labels = [f"{r['replaces']}: {r['words'][:60]}" + ("…" if len(r["words"]) > 60 else "") for r in rows]
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if grid[i, j]:
                ax.text(j, i, f"{grid[i, j]:.0f}%", ha="center", va="center", fontsize=7)
    ax.set_title("Known misconceptions: share of the class, per test", fontsize=10)
    fig.colorbar(shown, ax=ax, label="% of graded hand-ins")
    fig.tight_layout()
    figure = _png(fig)
    plt.close(fig)
    return figure


def write_report(lab: str, results, path: Path, seconds: float, jobs: int,
                 verdicts: dict[str, dict] | None = None) -> None:
    """The class report; `verdicts`: what `write_feedback` returned (for the table of known misconceptions)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graded = [r for r in results if r.cells]
    figure, hardest = "", []
    if graded:
        fig, axes = plt.subplots(1, 3, figsize=(15, 3.8))
        max_score = graded[0].max_score
        axes[0].hist([r.score for r in graded], bins=min(20, max(5, int(max_score) + 1)),
                     range=(0, max_score), color="#3b6ea8", edgecolor="white")
        axes[0].set(title="Scores", xlabel="score", ylabel="hand-ins")
        tests = sorted({t for r in graded for t in r.cells})
        rates = {t: sum(r.cells.get(t, (0, 1))[0] >= r.cells.get(t, (0, 1))[1] for r in graded) / len(graded)
                 for t in tests}
        worst = sorted(tests, key=lambda t: rates[t])
        axes[1].barh(worst, [100 * rates[t] for t in worst], color="#c0504d")
        axes[1].set(title="Pass rate per test (hardest at the top)", xlabel="% of graded hand-ins")
        axes[1].invert_yaxis()
        axes[1].tick_params(axis="y", labelsize=7)
        ids = [r.student_id for r in graded]
        axes[2].bar(ids, [r.seconds for r in graded], color="#4f8f4f")
        axes[2].set(title="Run time per hand-in", ylabel="seconds")
        axes[2].tick_params(axis="x", labelrotation=90, labelsize=7)
        fig.tight_layout()
        figure = _png(fig)
        plt.close(fig)
        hardest = [(t, rates[t]) for t in worst[:10]]
    scores = [r.score for r in graded]
    mistakes, mistake_tests = misconceptions(graded, verdicts)
    mistake_figure = _misconception_figure(mistakes, mistake_tests)

    def page(r) -> str:  # the learner's feedback page, beside this report (write_feedback's layout)
        return f"feedback/{quote(settings.file_name(r.student_id))}/{quote(lab)}.html"

    path.write_text(_render(
        "report.html.j2", title=f"{lab}: class report", results=results, graded=graded, jobs=jobs,
        seconds=seconds, generated=f"{datetime.now(UTC):%Y-%m-%d %H:%M}",
        mean=statistics.fmean(scores) if scores else 0.0, median=statistics.median(scores) if scores else 0.0,
        review=[r for r in results if r.needs_review], figure=figure, hardest=hardest, page=page,
        mistakes=mistakes, mistake_tests=mistake_tests, mistake_figure=mistake_figure))
