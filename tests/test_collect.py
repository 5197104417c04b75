"""Stage "collect": any input gives a status per hand-in, never an exception; times in any form a
course writes are read, and an unreadable one is put up for review instead of skipping the penalty."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest

from autograder import collect, settings

LAB = "lab01-strides"
GRADE_CELL = {"grade": True, "grade_id": "t1", "locked": True, "points": 2, "schema_version": 3, "solution": False}


@pytest.mark.parametrize("text, expected", [
    ("2026-09-21T23:59:00+00:00", "2026-09-21T23:59:00+00:00"),
    ("2026-09-21T23:59:00Z", "2026-09-21T23:59:00+00:00"),
    ("2026-09-21T23:59:00-07:00", "2026-09-22T06:59:00+00:00"),
    ("2026-09-21 23:59:00.123456 UTC", "2026-09-21T23:59:00.123456+00:00"),
    ("2026-09-21 23:59:00 UTC", "2026-09-21T23:59:00+00:00"),
    ("2026-09-21 23:59:00 GMT", "2026-09-21T23:59:00+00:00"),
    ("2026-09-21 23:59 UTC+2", "2026-09-21T21:59:00+00:00"),
    ("2026-07-01 12:00 PDT", "2026-07-01T19:00:00+00:00"),
    ("2026-12-01 12:00 PST", "2026-12-01T20:00:00+00:00"),
    ("2026-07-01 12:00 EDT", "2026-07-01T16:00:00+00:00"),
    ("2026-12-01 12:00 EST", "2026-12-01T17:00:00+00:00"),
    ("2026-07-01 12:00 CDT", "2026-07-01T17:00:00+00:00"),
    ("2026-12-01 12:00 CST", "2026-12-01T18:00:00+00:00"),
    ("2026-07-01 12:00 MDT", "2026-07-01T18:00:00+00:00"),
    ("2026-07-01 12:00 MST", "2026-07-01T19:00:00+00:00"),
    ("2026-07-01 12:00 BST", "2026-07-01T11:00:00+00:00"),
    ("2026-12-01 12:00 CET", "2026-12-01T11:00:00+00:00"),
    ("2026-07-01 12:00 CEST", "2026-07-01T10:00:00+00:00"),
    ("2026-11-01 01:30 PDT", "2026-11-01T08:30:00+00:00"),  # the hour that comes twice: the abbreviation says which
    ("2026-11-01 01:30 PST", "2026-11-01T09:30:00+00:00"),
    ("2026-09-21 16:59 America/Los_Angeles", "2026-09-21T23:59:00+00:00"),
    ("  2026-09-21 23:59:00.000000 UTC\n", "2026-09-21T23:59:00+00:00"),
])
def test_times_in_every_form_a_course_writes(text, expected):
    t = collect.parse_time(text)
    assert t.tzinfo is not None and t.isoformat() == expected


def test_pdt_is_utc_minus_seven():
    assert collect.parse_time("2026-07-01 12:00 PDT") == datetime.fromisoformat("2026-07-01T19:00:00+00:00")


def test_a_time_without_a_zone_is_in_the_courses_zone():
    assert collect.parse_time("2026-07-01 12:00", "America/New_York") == datetime(2026, 7, 1, 16, 0, tzinfo=UTC)
    assert collect.parse_time("2026-07-01 12:00") == datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
    assert collect.parse_time("2026-07-01T12:00+00:00", "America/New_York").hour == 12  # a zone given wins


@pytest.mark.parametrize("text", [
    "", "yesterday-ish", "12", "Sep 21", "2026-13-45 99:00", "2026-09-21 10:00 Mars/Olympus",
    "2026-09-21 10:00 XYZ", "2026-09-21 10:00 PDT America/New_York", "9" * 40, "0001-01-01 00:00 +05:00",
])
def test_garbage_is_not_a_time(text):
    with pytest.raises(ValueError):
        collect.parse_time(text)


def test_the_course_policy_loads_with_its_zone():
    policy = collect.load_policy()
    assert policy.timezone == "UTC"
    assert policy.due[LAB] == datetime(2026, 9, 21, 23, 59, tzinfo=UTC)
    assert all(t.tzinfo is not None for t in policy.due.values())


def test_policy_times_and_their_errors(tmp_path):
    toml = tmp_path / "grading.toml"
    toml.write_text('timezone = "America/New_York"\n[due]\n"lab01" = "2026-07-01 12:00"\n'
                    '"lab02" = 2026-07-01T12:00:00Z\n"lab03" = "2026-07-01 12:00 PDT"\n')
    due = collect.load_policy(toml).due
    assert due["lab01"] == datetime(2026, 7, 1, 16, 0, tzinfo=UTC)
    assert due["lab02"] == datetime(2026, 7, 1, 12, 0, tzinfo=UTC)  # a TOML datetime, not a string
    assert due["lab03"] == datetime(2026, 7, 1, 19, 0, tzinfo=UTC)
    toml.write_text('[due]\n"lab01" = "2026-07-01 12:00"\n"lab02" = "next tuesday-ish"\n')
    with pytest.raises(ValueError, match="lab02.*next tuesday-ish"):
        collect.load_policy(toml)
    toml.write_text('timezone = "Mars/Olympus"\n')
    with pytest.raises(ValueError, match="Mars/Olympus"):
        collect.load_policy(toml)
    toml.write_text("[zip]\nfilename_regex = '^([^_]+)_'\n")
    with pytest.raises(ValueError, match="student_id"):
        collect.load_policy(toml)


def test_extensions_move_one_learners_due_date(tmp_path):
    toml = tmp_path / "grading.toml"
    toml.write_text('[late]\npenalty_per_day = 0.1\nmax_penalty = 0.5\n[due]\n"lab01" = "2026-07-01T12:00:00Z"\n'
                    '[extensions]\n"lab01" = { amy = "3d", bob = "1d 12h", cy = "2026-07-02 18:00", dan = "90m" }\n'
                    '"lab02" = { amy = "1w" }\n')
    policy = collect.load_policy(toml)
    assert policy.extension("lab01", "amy") == timedelta(days=3)
    assert policy.extension("lab01", "bob") == timedelta(days=1, hours=12)
    assert policy.extension("lab01", "cy") == timedelta(days=1, hours=6)  # her own due date, in the course's zone
    assert policy.extension("lab01", "dan") == timedelta(minutes=90)
    assert policy.extension("lab02", "amy") == timedelta(weeks=1)  # a lab without a due date: kept, never late
    assert policy.extension("lab01", "eve") is None and policy.extension("lab03", "amy") is None
    two_days_late = datetime(2026, 7, 3, 11, 0, tzinfo=UTC)
    assert policy.penalty("lab01", two_days_late, "eve")[0] == 0.2
    assert policy.penalty("lab01", two_days_late, "amy")[0] == 0.0
    assert policy.penalty("lab01", two_days_late, "bob")[0] == 0.1  # 11 h past her own due date: one started day
    for bad, match in [('"lab01" = { amy = "soon" }', "amy.*neither a duration"),
                       ('"lab01" = { amy = "2026-06-30 12:00" }', "amy.*not after"),
                       ('"lab09" = { amy = "2026-07-09 12:00" }', "lab09.*needs the lab's own due date"),
                       ('"lab01" = "3d"', "lab01 must be a table")]:
        toml.write_text(f'[due]\n"lab01" = "2026-07-01T12:00:00Z"\n[extensions]\n{bad}\n')
        with pytest.raises(ValueError, match=match):
            collect.load_policy(toml)


def notebook(path: Path, nb: dict | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if nb is None:
        nbformat.write(nbformat.v4.new_notebook(), str(path))
    else:  # written as it is: nbformat.write would complain about what these tests break on purpose
        path.write_text(json.dumps(nb))


@pytest.fixture
def deep_tree():
    """make(top, depth): `depth` nested folders `d/d/...` under `top`; removed at the end (pytest's own clean-up
    uses shutil.rmtree, which recurses past Python's limit on them)."""
    made = []

    def make(top: Path, depth: int = 3000) -> None:
        made.append(top / "d")
        fd = os.open(top, os.O_RDONLY)
        try:
            for _ in range(depth):  # relative to a folder descriptor: the whole path is longer than PATH_MAX
                os.mkdir("d", dir_fd=fd)
                fd, parent = os.open("d", os.O_RDONLY, dir_fd=fd), fd
                os.close(parent)
        finally:
            os.close(fd)

    yield make
    for top in made:
        subprocess.run(["rm", "-rf", "--", str(top)], check=True)


def test_odd_folders_and_files_get_a_status_and_stop_nothing(tmp_path, deep_tree, monkeypatch):
    subs = tmp_path / "subs"
    notebook(subs / "ann" / f"{LAB}.ipynb")
    for reserved in ("_zip", ".hidden", "_private", "students.csv", "timestamp.txt", "Students.CSV"):
        notebook(subs / reserved / f"{LAB}.ipynb")
    notebook(subs / "dan" / f"{LAB}.ipynb")
    deep_tree(subs / "dan")
    notebook(subs / os.fsdecode(b"\xff\xfeodd") / f"{LAB}.ipynb")
    notebook(subs / "tab\tname" / f"{LAB}.ipynb")
    notebook(subs / "fay" / os.fsdecode(f"{LAB}-\xff.ipynb".encode("latin-1")))
    (subs / "eve").mkdir()
    os.mkfifo(subs / "eve" / f"{LAB}.ipynb")  # reading it would block for ever
    notebook(subs / "gus" / f"{LAB}.ipynb")
    notebook(subs / "hal" / f"{LAB}.ipynb")
    (subs / "ida").mkdir()
    (subs / "ida" / f"{LAB}.ipynb").symlink_to(subs / "ann" / f"{LAB}.ipynb")
    real_scandir, real_open = os.scandir, os.open

    def scandir(path="."):  # root reads any folder: deny the way a chmod 0 folder does
        if not isinstance(path, int) and Path(os.fsdecode(path)).name == "gus":  # shutil.rmtree passes fds
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    def open_(path, flags, mode=0o777, *, dir_fd=None):
        if Path(os.fsdecode(path)).parent.name == "hal":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "open", open_)
    handins, roster = collect.collect(subs, LAB, tmp_path / "staged", collect.Policy())
    status = {sid: h.status for sid, h in handins.items()}
    assert roster is None, "a folder named students.csv is no roster"
    assert status["ann"] == "ok" and status["dan"] == "ok" and status["fay"] == "ok", status
    for reserved in ("_zip", ".hidden", "_private", "students.csv", "timestamp.txt", "Students.CSV"):
        assert status[reserved] == "refused: the folder name is reserved by the grader", status
    assert (tmp_path / "staged" / "_zip").exists() is False
    odd = [sid for sid in status if sid.endswith("odd")] + ["tab\\tname"]
    assert all(status[sid].startswith("refused: the student id") for sid in odd), status
    assert all(sid.isprintable() and h.origin.isprintable() for sid, h in handins.items())
    assert status["eve"] == "malformed: cannot read the file (not a regular file)"
    assert status["gus"] == "malformed: cannot read the folder (Permission denied)"
    assert status["hal"] == "malformed: cannot read the file (Permission denied)"
    assert status["ida"] == "refused: the hand-in is a symbolic link"
    assert handins["ann"].path == tmp_path / "staged" / "ann" / f"{LAB}.ipynb" and handins["ann"].path.is_file()


def test_a_folder_that_cannot_be_listed_at_all_says_so(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="expected a folder"):
        collect.collect(tmp_path / "nowhere", LAB, tmp_path / "staged", collect.Policy())
    (tmp_path / "subs").mkdir()
    real_scandir = os.scandir

    def scandir(path="."):
        if not isinstance(path, int) and Path(path).name == "subs":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(FileNotFoundError, match="cannot read it"):
        collect.collect(tmp_path / "subs", LAB, tmp_path / "staged", collect.Policy())


def test_submission_times_from_timestamp_txt(tmp_path):
    subs = tmp_path / "subs"
    stamps = {"ann": "2026-09-21 16:59:00 PDT", "ben": "2026-09-21 23:59:00.123456 UTC",
              "bob": "the day after the deadline", "cal": b"\xff\xfe2026", "dee": "", "nat": None}
    for sid, stamp in stamps.items():
        notebook(subs / sid / f"{LAB}.ipynb")
        if isinstance(stamp, bytes):
            (subs / sid / "timestamp.txt").write_bytes(stamp)
        elif stamp is not None:
            (subs / sid / "timestamp.txt").write_text(stamp)
    notebook(subs / "eli" / LAB / f"{LAB}.ipynb")  # nbgrader's layout, its time stamp beside the notebook
    (subs / "eli" / LAB / "timestamp.txt").write_text("2026-09-22 10:00 America/New_York")
    notebook(subs / "fox" / f"{LAB}.ipynb")
    (subs / "fox" / "timestamp.txt").mkdir()
    notebook(subs / "gil" / f"{LAB}.ipynb")
    (subs / "gil" / "timestamp.txt").symlink_to("/etc/hostname")
    handins, _ = collect.collect(subs, LAB, tmp_path / "staged", collect.Policy(timezone="America/New_York"))
    assert all(h.status == "ok" for h in handins.values()), {s: h.status for s, h in handins.items()}
    assert handins["ann"].submitted == datetime(2026, 9, 21, 23, 59, tzinfo=UTC) and not handins["ann"].time_problem
    staged_stamp = tmp_path / "staged" / "ann" / "timestamp.txt"
    assert staged_stamp.read_text() == "2026-09-21 23:59:00.000000 UTC", "nbgrader reads it as UTC"
    assert handins["ben"].submitted == datetime(2026, 9, 21, 23, 59, 0, 123456, tzinfo=UTC)
    assert handins["eli"].submitted == datetime(2026, 9, 22, 14, 0, tzinfo=UTC)
    assert handins["nat"].submitted is None and not handins["nat"].time_problem and not handins["nat"].notes
    bob = handins["bob"]
    assert bob.submitted is None and bob.time_problem == (
        "unreadable submission time in timestamp.txt: 'the day after the deadline'")
    assert f"review: {bob.time_problem}" in bob.notes
    assert not (tmp_path / "staged" / "bob" / "timestamp.txt").exists()
    for sid in ("cal", "dee", "fox", "gil"):
        h = handins[sid]
        assert h.submitted is None and h.time_problem.startswith("unreadable submission time in timestamp.txt")
        assert any(n.startswith("review: unreadable submission time") for n in h.notes), sid
    assert "cannot read it" in handins["fox"].time_problem and "cannot read it" in handins["gil"].time_problem
    long = "x" * 200
    (subs / "bob" / "timestamp.txt").write_text(long)
    handins, _ = collect.collect(subs, LAB, tmp_path / "staged", collect.Policy())
    assert handins["bob"].time_problem.endswith(repr("x" * 40))


def test_an_earlier_runs_staging_is_cleared_however_deep(tmp_path, deep_tree, monkeypatch):
    subs = tmp_path / "subs"
    notebook(subs / "ann" / f"{LAB}.ipynb")
    staging = tmp_path / "staged"
    (staging / "old").mkdir(parents=True)
    deep_tree(staging / "old")
    handins, _ = collect.collect(subs, LAB, staging, collect.Policy())
    assert handins["ann"].status == "ok" and not (staging / "old").exists()
    notebook(staging / "zed" / f"{LAB}.ipynb")
    monkeypatch.setattr(collect, "remove_tree", lambda path: None)  # what not even rm -rf removes
    handins, _ = collect.collect(subs, LAB, staging, collect.Policy())
    assert handins["ann"].status == "ok" and not (staging / "zed").exists()
    assert list(tmp_path.glob("staged.stale-*/zed")), "moved aside, not read as this run's"


def _zip(path: Path, entries: list[tuple[zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for info, data in entries:
            zf.writestr(info, data)
    return path


def test_zip_entries_with_impossible_dates_are_graded_without_a_time(tmp_path):
    nb = nbformat.writes(nbformat.v4.new_notebook()).encode()
    archive = _zip(tmp_path / "download.zip", [
        (zipfile.ZipInfo(f"eve_{LAB}.ipynb", date_time=(1980, 0, 0, 0, 0, 0)), nb),
        (zipfile.ZipInfo(f"fay_{LAB}.ipynb", date_time=(2026, 9, 20, 12, 0, 0)), nb),
        (zipfile.ZipInfo(f"gus_{LAB}.ipynb", date_time=(2026, 2, 30, 25, 61, 0)), nb),
        (zipfile.ZipInfo(f"hal_{LAB}.ipynb"), nb),  # no date given: 1980-01-01 00:00
    ])
    handins, _ = collect.collect(archive, LAB, tmp_path / "staged", collect.Policy())
    assert all(h.status == "ok" for h in handins.values()), {s: h.status for s, h in handins.items()}
    assert handins["fay"].submitted == datetime(2026, 9, 20, 12, 0, tzinfo=UTC) and not handins["fay"].notes
    for sid in ("eve", "gus", "hal"):
        assert handins[sid].submitted is None
        assert any(n.startswith("zip entry has no valid date (") for n in handins[sid].notes), handins[sid].notes
    assert "(1980, 0, 0, 0, 0, 0)" in handins["eve"].notes[0]
    handins, _ = collect.collect(archive, LAB, tmp_path / "staged", collect.Policy(timezone="America/New_York"))
    assert handins["fay"].submitted == datetime(2026, 9, 20, 16, 0, tzinfo=UTC), "a zip holds the course's local time"


def test_zip_entries_that_do_not_unpack_and_zips_that_do_not_open(tmp_path):
    good = nbformat.writes(nbformat.v4.new_notebook()).encode()
    marked = nbformat.v4.new_notebook()
    marked.metadata["marker"] = "CORRUPT-ME"
    archive = _zip(tmp_path / "download.zip", [
        (zipfile.ZipInfo(f"ann_{LAB}.ipynb", date_time=(2026, 9, 20, 12, 0, 0)), good),
        (zipfile.ZipInfo(f"kim_{LAB}.ipynb", date_time=(2026, 9, 20, 12, 0, 0)), nbformat.writes(marked).encode()),
        (zipfile.ZipInfo(f"l\x07m_{LAB}.ipynb", date_time=(2026, 9, 20, 12, 0, 0)), good),
    ])
    raw = archive.read_bytes()
    archive.write_bytes(raw.replace(b"CORRUPT-ME", b"CORRUPT-YO"))  # stored, so the CRC no longer matches
    handins, _ = collect.collect(archive, LAB, tmp_path / "staged", collect.Policy())
    assert handins["ann"].status == "ok"
    assert handins["kim"].status.startswith("malformed: the zip entry does not unpack (Bad CRC-32"), handins["kim"]
    assert handins[f"l\\x07m_{LAB}"].status.startswith("refused: the student id"), "no id matched: the whole name"
    archive.write_bytes(raw.replace(b"PK\x01\x02", b"PK\x09\x09"))  # the central directory is damaged
    with pytest.raises(FileNotFoundError, match="not a zip that can be read"):
        collect.collect(archive, LAB, tmp_path / "staged", collect.Policy())


def _graded_notebook(**changes) -> dict:
    nb = json.loads(nbformat.writes(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(["x = 1\n", "y = 2\n"], metadata={"nbgrader": dict(GRADE_CELL)})])))
    nb["cells"][0]["metadata"]["nbgrader"].update(changes)
    return nb


@pytest.mark.parametrize("sid, change, says", [
    ("id", {"grade_id": 5}, "cell 0: metadata.nbgrader.grade_id"),
    ("pts", {"points": "2"}, "cell 0: metadata.nbgrader.points"),
    ("bool", {"points": True}, "cell 0: metadata.nbgrader.points"),
    ("nan", {"points": float("nan")}, "cell 0: metadata.nbgrader.points"),
    ("grade", {"grade": "true"}, "cell 0: metadata.nbgrader.grade"),
    ("sol", {"solution": 1}, "cell 0: metadata.nbgrader.solution"),
    ("lock", {"locked": None}, "cell 0: metadata.nbgrader.locked"),
])
def test_metadata_of_the_wrong_type_is_malformed(tmp_path, sid, change, says):
    subs = tmp_path / "subs"
    notebook(subs / "ann" / f"{LAB}.ipynb", _graded_notebook())
    notebook(subs / sid / f"{LAB}.ipynb", _graded_notebook(**change))
    handins, _ = collect.collect(subs, LAB, tmp_path / "staged", collect.Policy())
    assert handins["ann"].status == "ok"
    assert handins[sid].status.startswith(f"malformed: {says}"), handins[sid].status


def test_notebooks_nbgrader_would_choke_on_are_malformed(tmp_path):
    subs = tmp_path / "subs"
    nb = _graded_notebook()
    not_a_dict = copy.deepcopy(nb)
    not_a_dict["cells"][0]["metadata"]["nbgrader"] = "yes"
    bad_source = copy.deepcopy(nb)
    bad_source["cells"].append(nbformat.v4.new_markdown_cell("hi"))
    bad_source["cells"][1]["source"] = ["a", 1]
    many = copy.deepcopy(nb)
    many["cells"] = [nbformat.v4.new_code_cell(f"x = {i}") for i in range(collect.MAX_CELLS + 1)]
    for sid, data in {"ann": nb, "bea": not_a_dict, "cid": bad_source, "dov": many}.items():
        notebook(subs / sid / f"{LAB}.ipynb", data)
    (subs / "eva").mkdir()
    (subs / "eva" / f"{LAB}.ipynb").write_text("[" * 200_000 + "]" * 200_000)
    (subs / "fin").mkdir()
    (subs / "fin" / f"{LAB}.ipynb").write_text('{"cells": "not a list"}')
    handins, _ = collect.collect(subs, LAB, tmp_path / "staged", collect.Policy())
    status = {sid: h.status for sid, h in handins.items()}
    assert status["ann"] == "ok", status
    assert status["bea"] == "malformed: cell 0: metadata.nbgrader is not an object"
    assert status["cid"] == "malformed: cell 1: source is neither text nor a list of lines"
    assert status["dov"] == f"malformed: {collect.MAX_CELLS + 1} cells (at most {collect.MAX_CELLS})"
    assert status["eva"].startswith("malformed: not JSON")
    assert status["fin"].startswith("malformed: not a Jupyter notebook")
    assert collect.metadata_problems(nb) == []
    assert collect.metadata_problems(_graded_notebook(points=1.5, grade_id="x", locked=False)) == []
    assert len(collect.metadata_problems(_graded_notebook(grade=1, solution=1, locked=1))) == 3


def test_a_roster_from_a_spreadsheet_and_one_that_cannot_be_read(tmp_path):
    subs = tmp_path / "subs"
    notebook(subs / "ann" / f"{LAB}.ipynb")
    notebook(subs / "zed" / f"{LAB}.ipynb")
    (subs / "students.csv").write_text("\ufeffid,first_name\nann,Ann\nbea,Bea\n")  # Excel's byte-order mark
    handins, roster = collect.collect(subs, LAB, tmp_path / "staged", collect.Policy())
    assert set(roster) == {"ann", "bea"} and handins["ann"].status == "ok"
    assert handins["zed"].status.startswith("unknown student") and handins["bea"].status.startswith("missing")
    (subs / "students.csv").write_bytes(b"id\n\xff\xfe\n")
    with pytest.raises(FileNotFoundError, match="roster"):
        collect.collect(subs, LAB, tmp_path / "staged", collect.Policy())


def test_settings_name_the_fixtures_once():
    assert settings.EXPLOITS.is_dir() and settings.MUTANTS.is_dir() and settings.DEMO_CLASS.is_dir()


# ---- no input stops or corrupts the class ----

def test_re_submissions_in_a_zip_stage_apart_and_the_last_counts(tmp_path):
    """A zip listing a1, b1, b2, a2 (the same time, as an LMS that stamps entries when it builds the zip) gives
    each learner their own notebook, and the numbered copy ("-1" after the file name) counts, wherever it stands
    in the zip. (Our own case, from the class that broke; Canvas's own download names: the next test.)"""
    def nb(mark: str) -> bytes:
        n = nbformat.v4.new_notebook()
        n.metadata["mark"] = mark
        return nbformat.writes(n).encode()

    when = (2026, 9, 20, 12, 0, 0)
    archive = _zip(tmp_path / "download.zip", [
        (zipfile.ZipInfo(f"amy_{LAB}.ipynb", when), nb("a1")),
        (zipfile.ZipInfo(f"bob_{LAB}-1.ipynb", when), nb("b2")),  # the copy before the original in the zip
        (zipfile.ZipInfo(f"bob_{LAB}.ipynb", when), nb("b1")),
        (zipfile.ZipInfo(f"amy_{LAB}-1.ipynb", when), nb("a2")),
    ])
    handins, _ = collect.collect(archive, LAB, tmp_path / "staged", collect.Policy())
    marks = {sid: json.loads(h.path.read_text())["metadata"]["mark"] for sid, h in handins.items()}
    assert marks == {"amy": "a2", "bob": "b2"}, marks
    assert all("2 hand-ins from this student" in h.notes[0] for h in handins.values())


def test_canvas_download_names_as_canvas_writes_them(tmp_path):
    """The names Canvas's own zipper gives uploads (canvas-lms lib/content_zipper.rb, `get_filename`:
    [name][_LATE]_<user id or anon_<anonymous id>>_<attachment id>_<file>; names lower-cased with non-word
    characters removed, so an underscore may stay; the anonymous id is base58, lib/anonymity.rb) are read with
    `[zip] lms = "canvas"`: the name may hold "_" or be empty, an anonymous hand-in has no name at all, LATE
    may come first, and of two uploads in one submission the higher attachment id (the newer) counts, wherever
    the zip lists it. Anonymous ids pass the roster (no roster can hold them)."""
    def nb(mark: str) -> bytes:
        n = nbformat.v4.new_notebook()
        n.metadata["mark"] = mark
        return nbformat.writes(n).encode()

    built = (2026, 10, 20, 9, 0, 0)
    archive = _zip(tmp_path / "submissions.zip", [(zipfile.ZipInfo(name, built), nb(mark)) for name, mark in [
        (f"o_brienpat_12345_990001_{LAB}.ipynb", "pat"),
        (f"_23456_990002_{LAB}.ipynb", "nameless"),
        (f"anon_Ab3xY_990009_{LAB}.ipynb", "anon newer"),  # listed first, uploaded last
        (f"anon_Ab3xY_990004_{LAB} copy.ipynb", "anon older"),
        (f"LATE_anon_k7Qz2_990005_{LAB}.ipynb", "anon late"),
        (f"latesam_LATE_34567_990006_{LAB}.ipynb", "sam late"),
    ]])
    policy = tmp_path / "grading.toml"
    policy.write_text('[zip]\nlms = "canvas"\n')
    roster = tmp_path / "students.csv"
    roster.write_text("id,first_name,last_name\n12345,Pat,O_Brien\n23456,,\n34567,Sam,Late\n")
    handins, _ = collect.collect(archive, LAB, tmp_path / "staged", collect.load_policy(policy), roster)
    marks = {sid: json.loads(h.path.read_text())["metadata"]["mark"] for sid, h in handins.items()}
    assert marks == {"12345": "pat", "23456": "nameless", "anon_Ab3xY": "anon newer", "anon_k7Qz2": "anon late",
                     "34567": "sam late"}, marks
    assert {sid for sid, h in handins.items() if h.late_marker} == {"anon_k7Qz2", "34567"}
    assert all(h.status == "ok" for h in handins.values()), {s: h.status for s, h in handins.items()}


def test_a_canvas_export_of_anonymous_ids_is_refused(tmp_path, capsys):
    """Canvas's Gradebook import matches a row by its user id; an anonymous download gives none, so writing
    canvas.csv would match nobody and show every roster learner as missing: the export says what to do."""
    from autograder import export

    out = tmp_path / "out"
    out.mkdir()
    (out / "grades.csv").write_text("student_id,score,max_score,status\nanon_Ab3xY,0,25,malformed: x\n")
    assert export.export_command(LAB, "canvas", out, tmp_path / "course") == 2
    said = capsys.readouterr().out
    assert "anon_Ab3xY" in said and "SpeedGrader" in said and not (out / "canvas.csv").exists(), said


def test_every_folder_gets_a_row(tmp_path):
    subs = tmp_path / "subs"
    notebook(subs / "ann" / f"{LAB}.ipynb")
    notebook(subs / "bea" / "lab02-dispatcher.ipynb")  # another lab's notebook
    (subs / "cal").mkdir()  # empty
    (subs / "dan").symlink_to(subs / "ann")  # a folder that is a link
    handins, _ = collect.collect(subs, LAB, tmp_path / "staged", collect.Policy())
    status = {sid: h.status for sid, h in handins.items()}
    assert status["ann"] == "ok"
    assert status["bea"].startswith("missing: the folder holds no") and status["cal"] == status["bea"], status
    assert status["dan"] == "refused: the folder is a symbolic link", status


@pytest.mark.parametrize("value", ["3000000d", "99999999999d", "9" * 400 + "w", "2030-07-01 12:00"])
def test_an_extension_too_long_is_refused_with_its_file_and_learner(tmp_path, value):
    toml = tmp_path / "grading.toml"
    toml.write_text(f'[due]\n"lab01" = "2026-07-01T12:00:00Z"\n[extensions]\n"lab01" = {{ amy = "{value}" }}\n')
    with pytest.raises(ValueError, match=r"grading\.toml: \[extensions\] lab01: amy: "):
        collect.load_policy(toml)


def test_an_extension_for_nobody_is_reported():
    policy = collect.Policy(extensions={LAB: {"amy": timedelta(days=1), "zed": timedelta(days=1)}})
    assert collect.unknown_extensions(policy, LAB, {"amy": {}}, {"amy": None}) == ["zed"]


def test_file_names_made_from_ids_stay_in_their_folder_and_fit():
    for sid in ("x" * 300, "../../etc", "/abs/path", "a/b", "..", "tab\tname", "ok.id"):
        name = settings.file_name(sid)
        assert "/" not in name and name not in ("", ".", "..") and len(name) <= 64, (sid, name)
    assert settings.file_name("ada") == "ada" and settings.file_name("x" * 300) != settings.file_name("x" * 301)
