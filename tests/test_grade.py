"""`make grade` end to end: the embedded demo class, malformed input, a killed and resumed run, manual scores
that survive a regrade, and the LMS ends (the exploit corpus is tests/test_exploits.py)."""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest
from grading import DEMO, LAB, grade, hidden_lines, needs_bwrap, read_grades

from autograder import notebooks as nbs
from autograder import settings
from coursetools import demo
from coursetools.catalogue import read_catalogue

# ---- the demo class ----

@pytest.fixture(scope="module")
def demo_run(tmp_path_factory, lab01_diagnosis):
    out = tmp_path_factory.mktemp("demo")
    # the course's policy, plus an extension: max (3 started days late) has one extra day
    policy = out / "grading.toml"
    text = settings.policy_file().read_text().replace('roster = "students.csv"', "")
    assert "\n[extensions]\n" in text, "grading.toml has an [extensions] table"
    policy.write_text(text.replace("\n[extensions]\n", f'\n[extensions]\n"{LAB}" = {{ max = "1d" }}\n'))
    proc = grade(out, policy=policy)  # no SUBMISSIONS: the embedded demo class
    return out, proc.stdout


RECORD_VARIANT = """
import sys
from autograder import record
if sys.argv[1] == "nbgrader-as-is":
    record.share_engines = lambda: None  # nbgrader's own Gradebook: a new engine each time it opens one
sys.exit(record.main(sys.argv[2:]))
"""


def _gradebook_rows(db: Path) -> dict[str, list]:
    import sqlite3

    with sqlite3.connect(db) as con:
        tables = [t for (t,) in con.execute("select name from sqlite_master where type='table'")]
        return {t: sorted(map(repr, con.execute(f"select * from {t}").fetchall())) for t in tables}


@needs_bwrap
def test_the_record_stage_writes_the_gradebook_nbgrader_itself_writes(demo_run, tmp_path):
    """`record.share_engines` gives nbgrader one SQLAlchemy engine per gradebook instead of one per `Gradebook` it
    opens (a third of scoring a hand-in). The counterpart is nbgrader's own autograde: scoring the demo class's
    stored runs both ways, from the same gradebook, must leave every table of it identical, row for row
    (grades, comments, late penalties, the extension grading.toml gives max)."""
    out, _ = demo_run
    course = out / "course"
    db = course / "gradebook.db"
    kept, start = tmp_path / "as-graded.db", tmp_path / "start.db"
    shutil.copy(db, kept)  # put back afterwards: the module's later tests read the demo class's gradebook
    shutil.copy(db, start)
    ids = sorted(p.stem for p in (course / "runs" / LAB).glob("*.json"))
    import sqlite3

    with sqlite3.connect(start) as con:  # the lab's due date as the grader gave it, so lateness is scored too
        (due,) = con.execute("select duedate from assignment where name = ?", (LAB,)).fetchone()
        # both start from a gradebook whose scores and extensions are still to be written
        con.execute("update submitted_assignment set extension = NULL")
        con.execute("update grade set auto_score = NULL")
    env = {**os.environ, "PYTHONPATH": str(settings.ROOT), "COURSE_GRADING_TOML": str(out / "grading.toml")}
    rows = {}
    try:
        for variant in ("nbgrader-as-is", "shared-engine"):
            shutil.copy(start, db)
            proc = subprocess.run([sys.executable, "-c", RECORD_VARIANT, variant, str(course), LAB, due or "", *ids],
                                  cwd=course, capture_output=True, text=True, env=env)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
            assert all(json.loads(line)["ok"] for line in proc.stdout.splitlines()), proc.stdout[-3000:]
            rows[variant] = _gradebook_rows(db)
    finally:
        shutil.copy(kept, db)
    assert len(ids) >= 5 and rows["nbgrader-as-is"]["grade"], "the demo class scored nothing"
    assert any(row != repr(None) for row in rows["nbgrader-as-is"]["assignment"]), "no due date was kept"
    differ = [t for t in rows["nbgrader-as-is"] if rows["nbgrader-as-is"][t] != rows["shared-engine"].get(t)]
    assert not differ, f"the gradebook differs from nbgrader's own in the tables {differ}"


def test_embedded_demo_class_is_in_sync_with_the_lab():
    stale = demo.embedded_out_of_sync()
    assert not stale, (f"the committed demo class differs from a fresh generation: {stale[:5]}; run "
                       "`python -m coursetools demo --embedded` and commit tests/fixtures/demo/")
    assert len([p for p in DEMO.iterdir() if p.is_dir()]) >= 12


@needs_bwrap
def test_demo_class_grades_are_what_each_hand_in_deserves(demo_run):
    out, log = demo_run
    rows = read_grades(out)
    expected = json.loads((DEMO / "expected.json").read_text())
    assert set(rows) == set(expected), f"grades.csv students differ from expected.json:\n{log}"
    for sid, want in expected.items():
        row = rows[sid]
        score, full = float(row["score"]), float(row["max_score"])
        what = f"{sid} ({want['why']}): got {row['score']}/{row['max_score']} status {row['status']!r}\n{log}"
        assert row["status"].startswith(want["status"]), what
        if want["score"] == "full":
            assert score == full, what
        elif want["score"] == "partial":
            assert 0 < score < full, what
        elif want["score"] == "late":
            assert float(row["raw_score"]) == full and 0 < float(row["late_penalty"]) and score < full, what
        else:
            assert score == want["score"], what
    # 3 started days late for the lab's due date, 2 for max's own (grading.toml gives max one more day)
    assert rows["max"]["late_penalty"] == f"{0.2 * float(rows['max']['raw_score']):g}", rows["max"]
    assert rows["max"]["extension_hours"] == "24" and rows["ada"]["extension_hours"] == "0", rows["max"]


@needs_bwrap
def test_grades_csv_columns_and_review_flags(demo_run):
    out, _ = demo_run
    with (out / "grades.csv").open() as f:
        header = next(csv.reader(f))
    assert header[:7] == ["student_id", "first_name", "last_name", "email", "score", "max_score", "percent"]
    assert {"status", "needs_review", "late_penalty"} <= set(header)
    rows = read_grades(out)
    assert rows["ada"]["first_name"] == "Ada" and rows["ada"]["needs_review"] == ""
    for sid in ("hal", "ivy", "jon", "kim", "lee", "zed"):
        assert rows[sid]["needs_review"] == "yes", rows[sid]


@needs_bwrap
def test_lms_exports(demo_run):
    """make export: per-test columns, Canvas's import CSV and Gradescope's results.json, from the demo run."""
    from autograder import export

    out, _ = demo_run
    rows = read_grades(out)
    tests = export.graded_tests(LAB)
    for fmt in export.FORMATS:
        proc = subprocess.run([sys.executable, "-m", "autograder", "export", "--lab", LAB, "--format", fmt, "--out",
                               str(out), "--course", str(out / "course")], cwd=settings.ROOT, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    roster = {sid for sid, r in rows.items() if not r["status"].startswith("unknown student")}
    # csv: grades.csv's columns, then one per test; the tests add up to the score before the late penalty
    with (out / "tests.csv").open() as f:
        per_test = {r["student_id"]: r for r in csv.DictReader(f)}
    assert set(per_test) == roster and "zed" not in per_test
    for sid, r in per_test.items():
        total = sum(float(r[t]) for t, _, _ in tests)
        assert total == float(rows[sid]["raw_score"]) or not rows[sid]["status"].startswith("graded"), (sid, r)
    assert float(per_test["eli"]["hidden_broadcast_view"]) == 0 < float(per_test["eli"]["hidden_flat_index"])
    # canvas: the identity columns Canvas's Gradebook import reads, a Points Possible row, one row per learner
    with (out / "canvas.csv").open() as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == export.CANVAS_IDENTITY + [LAB]
    assert canvas[1][0].strip() == "Points Possible" and float(canvas[1][5]) == float(rows["ada"]["max_score"])
    by_sis = {r[2]: r for r in canvas[2:]}
    assert set(by_sis) == roster and all(len(r) == 6 for r in canvas)
    assert by_sis["ada"][0] == "Demo, Ada" and by_sis["ada"][3] == "ada@example.org"
    assert by_sis["max"][5] == rows["max"]["score"]  # after the late penalty
    # gradescope: results.json in the documented format; hidden tests wait until the grades are published
    for sid in roster:
        data = json.loads((out / "gradescope" / sid / "results.json").read_text())
        assert not export.check_gradescope_results(data), (sid, export.check_gradescope_results(data))
        assert data["score"] == float(rows[sid]["score"]) and len(data["tests"]) == len(tests)
        for t, (grade_id, points, hidden) in zip(data["tests"], tests):
            assert (t["name"], t["max_score"]) == (grade_id, points)
            assert t["visibility"] == ("after_published" if hidden else "visible")
    # a failed test carries the feedback page's words (the spec's per-test "output"), as the Gradescope
    # autograder's own results.json does, not a placeholder
    eli = {t["name"]: t for t in json.loads((out / "gradescope" / "eli" / "results.json").read_text())["tests"]}
    failed = eli["hidden_broadcast_view"]
    assert failed["status"] == "failed" and failed["output"] not in ("", "the test did not pass"), failed
    page = html.unescape((out / "feedback" / "eli" / f"{LAB}.html").read_text())
    assert failed["output"].splitlines()[0][:60] in page, (failed["output"], page[:2000])
    assert export.check_gradescope_results({"tests": [{"name": "x", "visibility": "sometimes"}]})
    # nbgrader's own export command, through the plug-in: the same Canvas rows for this lab
    term = out / "canvas-term.csv"
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
           "PYTHONPATH": str(settings.ROOT)}
    plugin = "--exporter=autograder.export.CanvasExportPlugin"
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "export", plugin, f"--to={term}",
                           f"--CourseDirectory.root={out / 'course'}",
                           f"--CourseDirectory.db_url=sqlite:///{out / 'course' / 'gradebook.db'}"],
                          cwd=out, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with term.open() as f:
        rows_term = {r[2]: r for r in list(csv.reader(f))[2:]}
    # every roster learner, names, e-mail and score as make export writes them (missing learners too: the
    # grader puts the roster into nbgrader's gradebook)
    assert set(rows_term) == set(by_sis), sorted(set(rows_term) ^ set(by_sis))
    for sid in by_sis:
        assert rows_term[sid] == by_sis[sid], (sid, rows_term[sid], by_sis[sid])


@needs_bwrap
def test_feedback_and_report(demo_run):
    out, _ = demo_run
    secret = hidden_lines()
    assert secret, "lab01 has hidden tests"
    for sid in ("ada", "bea", "eli", "jon"):
        page = (out / "feedback" / sid / f"{LAB}.html").read_text()
        assert "hidden_contiguous_strides" in page and "test_contiguous_strides" in page
        leaked = [ln for ln in secret if ln in page]
        assert not leaked, f"feedback for {sid} shows hidden test source: {leaked[:2]}"
    assert "failed" in (out / "feedback" / "eli" / f"{LAB}.html").read_text()
    assert "with an extension of 24 h" in (out / "feedback" / "max" / f"{LAB}.html").read_text()
    untouched = (out / "feedback" / "cal" / f"{LAB}.html").read_text()
    assert "the answer `contiguous_strides` is not written yet" in untouched, "cal handed in the stubs"
    assert "is not written yet" not in (out / "feedback" / "eli" / f"{LAB}.html").read_text()
    # eli, fay and gus handed in catalogue mutants: their feedback names the misconception in the catalogue's words
    # (autograder/diagnose.py); ada's full marks and cal's stubs name none
    expected = json.loads((settings.DEMO_CLASS / LAB / "expected.json").read_text())
    words = {e.name: e.description for e in read_catalogue("mutants", LAB)}
    for sid in ("eli", "fay", "gus"):
        mutant = expected[sid]["why"].removeprefix("mutant ")
        page = html.unescape((out / "feedback" / sid / f"{LAB}.html").read_text())
        assert "This looks like a known mistake in `broadcast_view`" in page and words[mutant] in page, \
            f"{sid}'s feedback does not name {mutant}'s misconception: {page[-1500:]}"
    for sid in ("ada", "cal"):
        assert "known mistake" not in (out / "feedback" / sid / f"{LAB}.html").read_text()
    report = (out / "report.html").read_text()
    assert "mean " in report and "median " in report
    links = re.findall(r'<a href="(feedback/[^"]+)">', report)
    assert len(links) >= 10 and all((out / link).is_file() for link in links), "every row links its feedback page"
    assert "<td>24 h</td>" in report, "the class report shows max's extension"
    assert report.count("data:image/png;base64") >= 2 and "Needs a human look" in report
    mistakes = html.unescape(report.split("Known misconceptions in the class")[1].split("Every hand-in")[0])
    assert all(words[expected[s]["why"].removeprefix("mutant ")] in mistakes for s in ("eli", "fay", "gus")), \
        "the class report's misconception table lists each diagnosed mutant"
    for sid in ("hal", "jon", "kim", "zed"):
        assert f"<td>{sid}</td>" in report.split("Every hand-in")[0], f"{sid} missing from the review list"
    events = [json.loads(line)["event"] for line in (out / "audit.jsonl").read_text().splitlines()]
    assert events[0] == "start" and events[-1] == "end" and events.count("graded") == 16


@needs_bwrap
def test_one_learner_is_regraded_and_the_rest_reused(demo_run):
    """make grade STUDENT=eli: eli's hand-in runs again (nbgrader's `autograde --student` has the same idea);
    every other learner's stored run is reused, and grades.csv still has every row. An id with no hand-in or
    roster row is an error that lists the ids there are."""
    out, _ = demo_run
    policy = out / "grading.toml"
    before = read_grades(out)
    lines = len((out / "audit.jsonl").read_text().splitlines())
    grade(out, "--student", "eli", policy=policy)
    events = [json.loads(line) for line in (out / "audit.jsonl").read_text().splitlines()[lines:]]
    ran = {e["student_id"] for e in events if e["event"] == "ran"}
    assert ran == {"eli"}, f"only eli runs again, ran: {sorted(ran)}"
    after = read_grades(out)
    assert set(after) == set(before) and all(after[s]["score"] == before[s]["score"] for s in before)
    proc = grade(out, "--student", "nobody", policy=policy, check=False)
    assert proc.returncode == 2 and "STUDENT=nobody" in proc.stderr and "eli" in proc.stderr, proc.stderr


@needs_bwrap
def test_manual_scores_survive_a_forced_regrade(demo_run, tmp_path):
    """What an instructor sets in formgrader (a manual score, a comment) outlives `make grade FORCE=1`."""
    from nbgrader.api import Gradebook

    out, _ = demo_run
    url = "sqlite:///" + str(out / "course" / "gradebook.db")
    with Gradebook(url) as gb:
        g = gb.find_grade("test_flat_index", LAB, LAB, "bea")
        points = float(g.max_score)
        g.manual_score = 1.5
        c = gb.find_comment("flat_index", LAB, LAB, "bea")  # comments live on answer cells
        c.manual_comment = "checked by hand"
        gb.db.commit()
    before = float(read_grades(out)["bea"]["score"])
    only_bea = tmp_path / "class"
    (only_bea / "bea").mkdir(parents=True)
    for f in (DEMO / "bea").iterdir():
        (only_bea / "bea" / f.name).write_bytes(f.read_bytes())
    proc = grade(out, "--submissions", str(only_bea), "--force", "--roster", str(DEMO / "students.csv"))
    assert "(stored run reused)" not in proc.stdout.split("bea", 1)[1].splitlines()[0], "--force must rerun"
    with Gradebook(url) as gb:
        g = gb.find_grade("test_flat_index", LAB, LAB, "bea")
        assert g.manual_score == 1.5 and g.score == 1.5, "the manual score given in formgrader was lost"
        assert gb.find_comment("flat_index", LAB, LAB, "bea").manual_comment == "checked by hand"
    rows = read_grades(out)
    after = float(rows["bea"]["score"])
    assert after == before - points + 1.5, f"grades.csv ignores the manual score: {before} -> {after}"
    # regrading one student keeps everyone else's grade
    assert rows["ada"]["score"] == rows["ada"]["max_score"] and rows["eli"]["status"] == "graded", rows["eli"]
    assert rows["oli"]["status"].startswith("missing")


# ---- malformed input ----

def _zip_with(entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> bytes:
    """A zip as an LMS writes it; entries named by a string get a time stamp before lab 1's due date."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in entries:
            if isinstance(info, str):
                info = zipfile.ZipInfo(info, date_time=(2026, 9, 20, 12, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return buf.getvalue()


@needs_bwrap
def test_malformed_and_hostile_input_gets_a_status_and_stops_nothing(tmp_path):
    student = nbs.read(settings.student_notebook(LAB))
    solution = nbs.read(settings.solution_notebook(LAB))
    full = nbs.fill_solutions(student, solution)
    good = json.dumps(full).encode()
    flood = demo.prepend_to_first_answer(full, "print('x' * 50_000_000)")
    figures = demo.prepend_to_first_answer(full, (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "for _ in range(300):\n    plt.figure(figsize=(30, 30)).gca().plot(range(20_000))"))
    noisy = demo.prepend_to_first_answer(full, (
        "import sys\nfor _ in range(50_000):\n    print('out ' * 20)\n    print('err ' * 20, file=sys.stderr)"))
    other_kernel = json.loads(good)
    other_kernel["metadata"]["kernelspec"] = {"name": "julia-1.10", "display_name": "Julia", "language": "julia"}
    no_answers = json.loads(good)
    no_answers["cells"] = [c for c in no_answers["cells"] if not c["metadata"].get("nbgrader", {}).get("solution")]
    extra = json.loads(good)
    extra["cells"].insert(3, {"cell_type": "code", "metadata": {}, "source": "helper = 42", "outputs": [],
                              "execution_count": None})
    link = zipfile.ZipInfo(f"sam_{LAB}.ipynb")
    link.external_attr = (0o120777 << 16)
    old = zipfile.ZipInfo(f"uma_{LAB}.ipynb", date_time=(2026, 9, 20, 10, 0, 0))
    new = zipfile.ZipInfo(f"uma_{LAB}.ipynb", date_time=(2026, 9, 21, 10, 0, 0))
    archive = tmp_path / "download.zip"
    archive.write_bytes(_zip_with([
        (f"ann_{LAB}.ipynb", good),
        (f"bob_{LAB}.ipynb", b"\xff\xfe not text"),
        (f"cat_{LAB}.ipynb", b'{"cells": "not a list"}'),
        (f"dot_{LAB}.ipynb", json.dumps(flood).encode()),
        (f"eva_{LAB}.ipynb", json.dumps(other_kernel).encode()),
        (f"fin_{LAB}.ipynb", json.dumps(no_answers).encode()),
        (f"gil_{LAB}.ipynb", json.dumps(extra).encode()),
        (f"hal_{LAB}.ipynb", json.dumps(figures).encode()),
        (f"ida_{LAB}.ipynb", json.dumps(noisy).encode()),
        (f"../../evil_{LAB}.ipynb", good),
        (link, b"/etc/passwd"),
        (f"zip_{LAB}.ipynb", b"{" + b" " * 30_000_000 + b"}"),
        (old, json.dumps(student).encode()),
        (new, good),
    ]))
    out = tmp_path / "out"
    proc = grade(out, "--submissions", str(archive))
    rows = read_grades(out)
    status = {sid: r["status"] for sid, r in rows.items()}
    full_marks = rows["ann"]["max_score"]
    assert rows["ann"]["score"] == full_marks and status["ann"] == "graded", proc.stdout
    assert status["bob"].startswith("malformed: not UTF-8")
    assert status["cat"].startswith("malformed: not a Jupyter notebook")
    assert status["dot"] == "graded" and rows["dot"]["score"] == full_marks, "50 MB of output must not break grading"
    assert status["eva"] == "graded" and rows["eva"]["score"] == full_marks
    assert "julia" in proc.stdout + (out / "audit.jsonl").read_text()
    assert status["fin"] == "graded" and float(rows["fin"]["score"]) == 0
    assert status["gil"] == "graded" and rows["gil"]["score"] == full_marks
    assert status["hal"] == "graded" and rows["hal"]["score"] == full_marks, "300 figures must not break grading"
    assert status["ida"] == "graded" and rows["ida"]["score"] == full_marks, "100 000 lines must not break grading"
    end = [json.loads(line) for line in (out / "audit.jsonl").read_text().splitlines()][-1]
    peak = end["grader_peak_bytes"]
    print(f"grader peak memory for this class: {peak / 2**20:.0f} MB")
    assert 0 < peak < 512 << 20, f"the grading process peaked at {peak / 2**20:.0f} MB (limit 512 MB)"
    assert status["evil"].startswith("refused: unsafe path"), status
    assert status["sam"].startswith("refused: the zip entry is a symbolic link")
    assert status["zip"].startswith("malformed: larger than"), status["zip"]
    assert rows["uma"]["score"] == full_marks, "the later of two hand-ins counts"
    assert not list(tmp_path.glob("**/evil_*")) or all("staged" in str(p) for p in tmp_path.glob("**/evil_*"))
    assert not (settings.ROOT.parent / f"evil_{LAB}.ipynb").exists()


def test_the_grader_reports_its_own_peak_memory_not_its_starters():
    """Linux carries ru_maxrss across exec: a grader started by a large process (a pytest worker that has imported
    torch, 855 MB in one run) reported the starter's size as its own. grade.peak_memory reads the program's own
    high-water mark (VmHWM in /proc/self/status)."""
    ballast = bytearray(600 << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    code = "from autograder.grade import peak_memory; print(peak_memory())"
    proc = subprocess.run([sys.executable, "-c", code], cwd=settings.ROOT, capture_output=True, text=True, check=True)
    del ballast
    assert int(proc.stdout) < 400 << 20, f"the child reported {int(proc.stdout) / 2**20:.0f} MB: its starter's size"


# ---- kill and resume ----

@needs_bwrap
def test_a_killed_run_resumes_without_regrading_what_is_done(tmp_path):
    src = tmp_path / "class"
    for sid in ("ada", "bea", "cal", "dee"):
        (src / sid).mkdir(parents=True)
        (src / sid / f"{LAB}.ipynb").write_bytes((DEMO / sid / f"{LAB}.ipynb").read_bytes())
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "autograder", "grade", "--lab", LAB, "--out", str(out), "--course",
           str(out / "course"), "--jobs", "1", "--submissions", str(src)]
    proc = subprocess.Popen(cmd, cwd=settings.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    runs = out / "course" / "runs" / LAB
    deadline = time.time() + 300
    while time.time() < deadline and len(list(runs.glob("*.json"))) < 2:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = sorted(p.stem for p in runs.glob("*.json"))
    assert 2 <= len(done) < 4, f"expected to kill the run halfway, but {len(done)} of 4 were done"
    second = grade(out, "--submissions", str(src), "--jobs", "1")
    events = [json.loads(line) for line in (out / "audit.jsonl").read_text().splitlines()]
    ran_again = [e["student_id"] for e in events[events.index(next(e for e in events[::-1]
                                                                       if e["event"] == "start")):]
                 if e["event"] == "ran"]
    assert not set(ran_again) & set(done), f"regraded hand-ins that were done before the kill: {ran_again}"
    assert sorted(ran_again + done) == ["ada", "bea", "cal", "dee"], (ran_again, done)
    rows = read_grades(out)
    assert rows["ada"]["score"] == rows["ada"]["max_score"] and float(rows["cal"]["score"]) == 0, second.stdout


# ---- the command's own errors ----

def test_unknown_lab_and_empty_folder_are_clear_errors(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--lab", "lab99-nope"],
                          cwd=settings.ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown lab" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--lab", LAB, "--submissions",
                           str(tmp_path), "--out", str(tmp_path / "o")], cwd=settings.ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 2 and f"<student_id>/{LAB}.ipynb" in proc.stderr


def test_insecure_mode_warns_loudly(tmp_path):
    (tmp_path / "c" / "ada").mkdir(parents=True)
    (tmp_path / "c" / "ada" / f"{LAB}.ipynb").write_bytes((DEMO / "cal" / f"{LAB}.ipynb").read_bytes())
    proc = grade(tmp_path, "--submissions", str(tmp_path / "c"), "--insecure")
    assert "WARNING: --insecure" in proc.stderr and "WITHOUT a sandbox" in proc.stdout


def _nbgrader(cwd: Path, *args: str) -> str:
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@needs_bwrap
def test_feedback_round_trip_through_the_exchange(tmp_path):
    """A learner submits with nbgrader, the instructor grades from the exchange (`SUBMISSIONS=exchange`: nbgrader
    collect), comments in formgrader and releases feedback; the learner fetches a page with the score, the
    comment and no hidden test source.
    The same run writes one zip per learner for courses without a hub."""
    from nbgrader.api import Gradebook

    exchange, cache, home = tmp_path / "exchange", tmp_path / "cache", tmp_path / "ada-home"
    (exchange / "demo-course" / "inbound").mkdir(parents=True)
    (exchange / "demo-course" / "outbound" / LAB).mkdir(parents=True)  # as nbgrader release_assignment leaves it
    shutil.copy(settings.student_notebook(LAB), exchange / "demo-course" / "outbound" / LAB / f"{LAB}.ipynb")
    (home / LAB).mkdir(parents=True)
    (home / LAB / f"{LAB}.ipynb").write_bytes((DEMO / "ada" / f"{LAB}.ipynb").read_bytes())
    where = ["--course", "demo-course", "--student", "ada", f"--Exchange.root={exchange}", f"--Exchange.cache={cache}"]
    _nbgrader(home, "submit", LAB, *where)
    out = tmp_path / "out"
    policy = tmp_path / "grading.toml"  # no due date: the submission, made now, is on time
    policy.write_text("[late]\npenalty_per_day = 0.1\n")
    proc = grade(out, "--submissions", "exchange", "--exchange-root", str(exchange), "--course-id", "demo-course",
                 policy=policy)
    # `SUBMISSIONS=exchange` ran nbgrader collect on the inbound folder nbgrader submit wrote; the hand-in's time
    # is the timestamp.txt nbgrader wrote there (the hand-in is the right one: full marks)
    assert "collected 1 hand-in(s) from the exchange" in proc.stdout, proc.stdout
    inbound = exchange / "demo-course" / "inbound"
    (stamp,) = [p.read_text().strip() for p in inbound.glob(f"ada+{LAB}+*/timestamp.txt")]
    row = read_grades(out)["ada"]
    assert row["submitted_at"][:10] == stamp[:10] and row["score"] == row["max_score"], (stamp, row)
    full = float(row["max_score"])
    with Gradebook("sqlite:///" + str(out / "course" / "gradebook.db")) as gb:  # what formgrader would write
        gb.find_comment("broadcast_view", LAB, LAB, "ada").manual_comment = "Neat use of <as_strided>."
        gb.find_grade("hidden_unfold_windows", LAB, LAB, "ada").manual_score = 1.0  # 3 points by the autograder
        gb.db.commit()
    proc = subprocess.run([sys.executable, "-m", "autograder", "release-feedback", "--lab", LAB, "--out", str(out),
                           "--course", str(out / "course"), "--exchange-root", str(exchange), "--course-id",
                           "demo-course"], cwd=settings.ROOT, capture_output=True, text=True)
    assert proc.returncode == 0 and "through the nbgrader exchange: ada" in proc.stdout, proc.stdout + proc.stderr
    log = _nbgrader(home, "fetch_feedback", LAB, *where)
    pages = list((home / LAB / "feedback").glob(f"*/{LAB}.html"))
    assert len(pages) == 1, log
    page = pages[0].read_text()
    assert f"Score: {full - 2:g} / {full:g}" in page, "the manual score given after autograding counts"
    assert "Neat use of &lt;as_strided&gt;." in page, "the instructor's comment, escaped"
    leaked = [ln for ln in hidden_lines() if ln in page]
    assert not leaked and "hidden_unfold_windows" in page, leaked[:2]
    with zipfile.ZipFile(out / "feedback-zips" / "ada.zip") as z:
        assert z.read(f"{LAB}-feedback.html").decode() == page


def _gradescope_image(tmp_path: Path, bundle: Path) -> Path:
    """What Gradescope builds from the bundle, per its autograder specification
    (https://gradescope-autograders.readthedocs.io/en/latest/specs/): the zip unpacked into /autograder/source,
    run_autograder copied to /autograder/run_autograder, submission/ and results/ beside them."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
        for info in z.infolist():
            mode = info.external_attr >> 16 & 0o777
            if mode:
                (root / "source" / info.filename).chmod(mode)
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    return root


def _in_gradescope_layout(root: Path, argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    """`argv` with `root` at /autograder (a mount namespace of its own; /proc bound so the grader's own sandbox
    can still start inside), the course's venv at /autograder/source/.venv as setup.sh would have built it."""
    binds = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc", "--dev-bind", "/dev", "/dev",
             "--bind", "/proc", "/proc", "--bind", tempfile.gettempdir(), tempfile.gettempdir(),
             "--bind", str(root), "/autograder"]
    for link in ("bin", "lib", "lib64", "sbin"):
        target = os.readlink(f"/{link}") if os.path.islink(f"/{link}") else None
        binds += ["--symlink", target, f"/{link}"] if target else (["--ro-bind", f"/{link}", f"/{link}"]
                                                                   if os.path.isdir(f"/{link}") else [])
    for top in {Path(sys.base_prefix).resolve().parts[1], settings.ROOT.resolve().parts[1],
                Path(sys.prefix).resolve().parts[1]} - {"usr", "etc", "dev", "proc", tempfile.gettempdir()[1:]}:
        binds += ["--ro-bind", f"/{top}", f"/{top}"]
    binds += ["--ro-bind", str(Path(sys.prefix).resolve()), "/autograder/source/.venv"]
    return subprocess.run(["bwrap", *binds, "--chdir", "/autograder", *argv], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=900)


@needs_bwrap
def test_gradescope_bundle_replayed_as_gradescope_runs_it(tmp_path, lab01_diagnosis):
    """The bundle, unpacked and run the way Gradescope's autograder specification says: setup.sh finds the
    Makefile in /autograder/source (package installs stubbed, torch from the CPU index), and run_autograder
    writes a results.json in Gradescope's format for a right answer (full marks), a wrong one (the judge's words
    on the failed tests, and the known mistake they match: the bundle carries the lab's diagnosis table), a link
    and a folder (no points, a message)."""
    from autograder import export, gradescope

    bundle = gradescope.bundle(LAB, tmp_path / "bundle" / f"{LAB}.zip")
    with zipfile.ZipFile(bundle) as z:
        names = set(z.namelist())
        assert {"setup.sh", "run_autograder", "Makefile", f"solutions/{LAB}/{LAB}.ipynb"} <= names, sorted(names)[:9]
        assert not any(n.startswith("source/") for n in names), "Gradescope unpacks the zip INTO source/"
        assert z.getinfo("run_autograder").external_attr >> 16 & 0o111, "run_autograder must be executable"
        assert f"build/diagnosis/{LAB}.json" in names, "a current diagnosis table travels with the bundle"
    root = _gradescope_image(tmp_path, bundle)
    # setup.sh, with apt-get a no-op and make recording where it runs and with what (make -n: no build)
    stubs = root / "stubs"
    stubs.mkdir()
    (stubs / "apt-get").write_text("#!/bin/sh\nexit 0\n")
    (stubs / "make").write_text('#!/bin/sh\necho "$PWD|$COURSE_TORCH_INDEX|$*" >> /autograder/make.log\n'
                                'exec /usr/bin/make -n "$@"\n')
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    proc = _in_gradescope_layout(root, ["env", f"PATH=/autograder/stubs:{os.environ['PATH']}", "bash",
                                        "/autograder/source/setup.sh"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    where, index, args = (root / "make.log").read_text().splitlines()[0].split("|")
    assert (where, args) == ("/autograder/source", "setup PYTHON3=python3.11") and "whl/cpu" in index
    assert "coursetools.venv" in proc.stdout, "make -n setup names the venv build: the Makefile is there"

    def upload(make) -> dict:
        shutil.rmtree(root / "submission", ignore_errors=True)
        shutil.rmtree(root / "results", ignore_errors=True)
        (root / "submission").mkdir()
        make(root / "submission" / f"{LAB}.ipynb")
        (root / "submission_metadata.json").write_text(json.dumps({"users": [{"email": "a@x.org", "sid": "s1"}]}))
        proc = _in_gradescope_layout(root, ["/autograder/run_autograder"])
        assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
        data = json.loads((root / "results" / "results.json").read_text())
        assert not export.check_gradescope_results(data), export.check_gradescope_results(data)
        return data

    student = nbs.read(settings.student_notebook(LAB))
    full = nbs.fill_solutions(student, nbs.read(settings.solution_notebook(LAB)))
    right = upload(lambda p: nbs.write(full, p))
    assert right["score"] == sum(t["max_score"] for t in right["tests"]) > 0, right
    wrong = upload(lambda p: shutil.copy(DEMO / "eli" / f"{LAB}.ipynb", p))
    failed = {t["name"]: t for t in wrong["tests"] if t["status"] == "failed"}
    assert "hidden_broadcast_view" in failed and failed["hidden_broadcast_view"]["visibility"] == "after_published"
    words = [t["output"] for t in failed.values()]
    assert all(w and "feedback page" not in w for w in words), words
    mutant = json.loads((DEMO / "expected.json").read_text())["eli"]["why"].removeprefix("mutant ")
    described = {e.name: e.description for e in read_catalogue("mutants", LAB)}[mutant]
    assert "This looks like a known mistake in `broadcast_view`" in failed["hidden_broadcast_view"]["output"] and \
        described in failed["hidden_broadcast_view"]["output"], failed["hidden_broadcast_view"]
    link = upload(lambda p: p.symlink_to(root / "source" / "solutions" / LAB / f"{LAB}.ipynb"))
    assert "score" not in link and not link["tests"] and "not a plain file" in link["output"], link
    folder = upload(lambda p: p.mkdir())
    assert "score" not in folder and not folder["tests"] and "not a plain file" in folder["output"], folder


def test_gradescope_without_namespaces_gives_no_scores(tmp_path):
    """Where bubblewrap is installed but cannot start (user namespaces blocked, as in many containers), no
    hand-in is graded: results.json says the autograder is misconfigured and carries no score."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (stubs / "bwrap").chmod(0o755)
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    shutil.copy(DEMO / "eli" / f"{LAB}.ipynb", root / "submission" / f"{LAB}.ipynb")
    proc = subprocess.run([sys.executable, "-m", "autograder", "gradescope", "--lab", LAB, "--root", str(root)],
                          cwd=settings.ROOT, capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((root / "results" / "results.json").read_text())
    assert "score" not in data and data["tests"] == [] and "misconfigured" in data["output"], data
    assert "No permissions to create new namespace" in data["output"]
    grade_proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--lab", LAB, "--out",
                                 str(tmp_path / "out"), "--submissions", str(DEMO)], cwd=settings.ROOT,
                                capture_output=True, text=True,
                                env={**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}"})
    assert grade_proc.returncode == 2 and "cannot start a sandbox" in grade_proc.stderr, grade_proc.stderr


@needs_bwrap
def test_dask_executor_gives_the_same_grades_and_feedback_as_a_local_run(tmp_path, demo_run):
    """`--executor dask` on a LocalCluster of two workers: for four learners of the demo class, the scores,
    statuses and feedback pages of the local run (`demo_run`, same policy and roster), to the byte."""
    from distributed import LocalCluster

    local, _ = demo_run
    sids = ("ada", "cal", "eli", "jon")
    src = tmp_path / "class"
    for sid in sids:
        shutil.copytree(DEMO / sid, src / sid)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        remote = tmp_path / "dask"
        proc = grade(remote, "--submissions", str(src), "--roster", str(DEMO / "students.csv"), "--executor", "dask",
                     "--scheduler", cluster.scheduler_address, policy=local / "grading.toml")
    assert "on the dask cluster" in proc.stdout
    timing = {"submitted_at"}
    a, b = read_grades(local), read_grades(remote)
    assert {s: {k: v for k, v in a[s].items() if k not in timing} for s in sids} == \
        {s: {k: v for k, v in b[s].items() if k not in timing} for s in sids}
    # a later test regraded one learner of the demo run alone, which notes on the others' pages that they were
    # graded in an earlier run: the one line the two runs' histories, not the executors, make differ
    earlier = re.compile(r'<p class="note">graded in an earlier run \(not in this SUBMISSIONS\)</p>\n?')
    for sid in sids:
        assert earlier.sub("", (local / "feedback" / sid / f"{LAB}.html").read_text()) == \
            (remote / "feedback" / sid / f"{LAB}.html").read_text(), f"feedback for {sid} differs"


@needs_bwrap
def test_hostile_roster_ids_stay_text_in_spreadsheets_and_files_stay_in_out(tmp_path):
    """OWASP's CSV-injection rule (https://owasp.org/www-community/attacks/CSV_Injection): a cell starting with
    `= + - @`, tab or CR is a formula to Excel, LibreOffice and Google Sheets. Roster ids, names and e-mails
    reach grades.csv, tests.csv and canvas.csv, so each such cell must be prefixed; numbers the grader wrote stay
    numbers. Ids that are paths (`../../x`, `/tmp/x`) must not send pages, results.json or zips outside OUT."""
    from autograder import sheets

    student = nbs.read(settings.student_notebook(LAB))
    full = nbs.fill_solutions(student, nbs.read(settings.solution_notebook(LAB)))
    handins = tmp_path / "handins"
    nbs.write(full, handins / "ann" / f"{LAB}.ipynb")
    hostile = ["=HYPERLINK(\"http://x\",\"y\")", "+1+2", "@SUM(A1)", "-3+cmd|' /C calc'!A0", "../../escape",
               str(tmp_path / "abs-escape")]
    roster = tmp_path / "students.csv"
    with roster.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "first_name", "last_name", "email"])
        w.writerow(["ann", "=cmd()", "\t@Smith", "+ann@example.org"])
        for i, sid in enumerate(hostile):
            w.writerow([sid, f"-name{i}", "Doe", f"=mail{i}"])
    out = tmp_path / "out"
    grade(out, "--submissions", str(handins), "--roster", str(roster))
    for fmt in ("csv", "canvas", "gradescope"):
        proc = subprocess.run([sys.executable, "-m", "autograder", "export", "--lab", LAB, "--format", fmt, "--out",
                               str(out), "--course", str(out / "course")], cwd=settings.ROOT, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([sys.executable, "-m", "autograder", "release-feedback", "--lab", LAB, "--out", str(out),
                           "--course", str(out / "course")], cwd=settings.ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sheets_seen = 0
    for name in ("grades.csv", "tests.csv", "canvas.csv"):
        with (out / name).open(newline="") as f:
            rows = list(csv.reader(f))
        sheets_seen += 1
        formulas = [c for r in rows for c in r if c.startswith(sheets.TRIGGERS) and not sheets._NUMBER.fullmatch(c)]
        assert not formulas, f"{name}: cells a spreadsheet would run as formulas: {formulas[:3]}"
        text = (out / name).read_text()
        assert "'=HYPERLINK" in text and "'@SUM" in text, f"{name}: hostile ids are kept, as text"
    with (out / "grades.csv").open(newline="") as f:
        ids = {r["student_id"] for r in sheets.reader(f)}
    assert set(hostile) | {"ann"} <= ids, "reading grades.csv back gives the roster's ids"
    outside = [p for p in tmp_path.rglob("*") if "escape" in p.name and out not in p.parents]
    assert not outside, f"files written outside OUT: {outside}"
    assert not (tmp_path.parent / "escape").exists() and not Path("/escape").exists()
    assert (out / "gradescope" / "ann" / "results.json").exists()
    assert len(list((out / "gradescope").glob("*/results.json"))) == 1 + len(hostile)


@needs_bwrap
def test_a_canvas_download_is_read_by_canvas_rules(tmp_path):
    """Canvas's "Download Submissions" zip: files named <name>_<user id>_<attachment id>_<file>, with _LATE_
    after the name when Canvas counts the hand-in late; every entry's time is when Canvas built the zip. With
    `[zip] lms = "canvas"`, ids are Canvas user ids, lateness comes from the marker only (an on-time hand-in in
    a zip built after the due date pays nothing), and canvas.csv puts the ids in Canvas's "ID" column."""
    student = nbs.read(settings.student_notebook(LAB))
    good = json.dumps(nbs.fill_solutions(student, nbs.read(settings.solution_notebook(LAB)))).encode()
    built = (2026, 10, 20, 9, 0, 0)  # a week after the due date below: when the instructor downloaded the zip
    entries = [(zipfile.ZipInfo(f"doejane_12345_990001_{LAB}.ipynb", date_time=built), good),
               (zipfile.ZipInfo(f"roeeric_LATE_23456_990002_{LAB}-1.ipynb", date_time=built), good),
               (zipfile.ZipInfo(f"smithann_34567_990003_{LAB}.ipynb", date_time=built), good)]
    archive = tmp_path / "submissions.zip"
    archive.write_bytes(_zip_with(entries))
    policy = tmp_path / "grading.toml"
    policy.write_text(f'[due]\n"{LAB}" = "2026-10-13T23:59:00+00:00"\n\n[late]\npenalty_per_day = 0.1\n'
                      'max_penalty = 0.5\n\n[zip]\nlms = "canvas"\n')
    out = tmp_path / "out"
    grade(out, "--submissions", str(archive), policy=policy)
    rows = read_grades(out)
    assert set(rows) == {"12345", "23456", "34567"}, sorted(rows)
    full = float(rows["12345"]["max_score"])
    assert float(rows["12345"]["score"]) == full and float(rows["12345"]["late_penalty"]) == 0, rows["12345"]
    assert float(rows["34567"]["late_penalty"]) == 0
    late = rows["23456"]
    assert float(late["score"]) == pytest.approx(0.9 * full), late  # one started day at 10%
    env = {**os.environ, "COURSE_GRADING_TOML": str(policy)}
    proc = subprocess.run([sys.executable, "-m", "autograder", "export", "--lab", LAB, "--format", "canvas", "--out",
                           str(out), "--course", str(out / "course")], cwd=settings.ROOT, capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with (out / "canvas.csv").open() as f:
        table = list(csv.reader(f))
    assert table[0][:3] == ["Student", "ID", "SIS User ID"]
    assert {r[1] for r in table[2:]} == {"12345", "23456", "34567"} and not any(r[2] for r in table[2:]), table


def test_results_json_schema_follows_gradescopes_specification():
    """gradescope_results.schema.json is a valid JSON Schema and holds the specification's rules
    (https://gradescope-autograders.readthedocs.io/en/latest/specs/): a score at the top or on every test,
    the four visibilities, passed/failed, `number` as a string; nothing it does not name."""
    import jsonschema

    from autograder import export

    jsonschema.Draft202012Validator.check_schema(json.loads(export.GRADESCOPE_SCHEMA.read_text()))
    ok = {"score": 3.0, "output": "x", "visibility": "visible", "stdout_visibility": "hidden", "execution_time": 4,
          "tests": [{"name": "t", "number": "1", "score": 1.0, "max_score": 2.0, "status": "failed",
                     "visibility": "after_published", "output": "why", "tags": ["a"]}]}
    assert export.check_gradescope_results(ok) == []
    assert export.check_gradescope_results({"output": "not graded", "tests": []}) == []  # no score at all
    for broken in ({"tests": [{"name": "t"}]}, {"score": "3"}, {"score": 1, "visibility": "sometimes"},
                   {"score": 1, "tests": [{"score": 1, "number": 1}]},
                   {"score": 1, "tests": [{"score": 1, "status": "ok"}]}, {"score": 1, "scores": 2}):
        assert export.check_gradescope_results(broken), f"the schema lets through {broken}"
