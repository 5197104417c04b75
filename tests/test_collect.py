"""Stage "collect": any input gives a status per hand-in, never an exception; times in any form a
course writes are read, and an unreadable one is put up for review instead of skipping the penalty."""

from __future__ import annotations

import os
import zipfile
from datetime import UTC, datetime

import nbformat
import pytest

from autograder import collect, settings

LAB = "lab01-strides"


@pytest.mark.parametrize("text, expected", [
    ("2026-09-21T23:59:00+00:00", "2026-09-21T23:59:00+00:00"),
    ("2026-09-21T23:59:00Z", "2026-09-21T23:59:00+00:00"),
    ("2026-09-21 23:59:00.123456 UTC", "2026-09-21T23:59:00.123456+00:00"),
    ("2026-09-21 23:59:00 UTC", "2026-09-21T23:59:00+00:00"),
    ("2026-07-01 12:00 PDT", "2026-07-01T19:00:00+00:00"),
    ("2026-12-01 12:00 PST", "2026-12-01T20:00:00+00:00"),
    ("2026-07-01 12:00 CEST", "2026-07-01T10:00:00+00:00"),
    ("2026-09-21 16:59 America/Los_Angeles", "2026-09-21T23:59:00+00:00"),
    ("2026-09-21T23:59:00-07:00", "2026-09-22T06:59:00+00:00"),
])
def test_times_in_every_form_a_course_writes(text, expected):
    assert collect.parse_time(text).isoformat() == expected


def test_a_time_without_a_zone_is_in_the_courses_zone():
    t = collect.parse_time("2026-07-01 12:00", "America/New_York")
    assert t == datetime(2026, 7, 1, 16, 0, tzinfo=UTC)


@pytest.mark.parametrize("text", ["yesterday-ish", "", "2026-13-45 99:00", "2026-09-21 10:00 Mars/Olympus"])
def test_garbage_is_not_a_time(text):
    with pytest.raises(ValueError):
        collect.parse_time(text)


def test_the_course_policy_loads_with_its_zone():
    policy = collect.load_policy()
    assert policy.timezone == "UTC" and policy.due[LAB].tzinfo is not None


def notebook(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(), str(path))


def test_odd_folders_and_times_get_a_status_and_stop_nothing(tmp_path):
    subs = tmp_path / "subs"
    notebook(subs / "ann" / f"{LAB}.ipynb")
    notebook(subs / "bob" / f"{LAB}.ipynb")
    (subs / "bob" / "timestamp.txt").write_text("the day after the deadline")
    notebook(subs / "_zip" / f"{LAB}.ipynb")
    notebook(subs / "cat" / f"{LAB}.ipynb")
    os.chmod(subs / "cat", 0)
    deep = subs / "dan"
    notebook(deep / f"{LAB}.ipynb")
    here = os.getcwd()
    os.chdir(deep)
    try:
        for _ in range(3000):
            os.mkdir("d")
            os.chdir("d")
    finally:
        os.chdir(here)
    staging = tmp_path / "staged"
    try:
        for _ in range(2):  # the second run must clear the first one's staging
            handins, _ = collect.collect(subs, LAB, staging, collect.Policy())
    finally:
        os.chmod(subs / "cat", 0o755)
    assert handins["ann"].status == "ok" and handins["dan"].status == "ok"
    assert handins["bob"].status == "ok" and any("unreadable submission time" in n for n in handins["bob"].notes)
    assert handins["_zip"].status.startswith("refused: the folder name is reserved")
    if os.geteuid() != 0:  # root reads any folder
        assert handins["cat"].status.startswith("malformed")


def test_zip_entries_with_impossible_dates_are_graded_without_a_time(tmp_path):
    nb = nbformat.writes(nbformat.v4.new_notebook()).encode()
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        info = zipfile.ZipInfo(f"eve_{LAB}.ipynb", date_time=(1980, 0, 0, 0, 0, 0))
        zf.writestr(info, nb)
        zf.writestr(zipfile.ZipInfo(f"fay_{LAB}.ipynb", date_time=(2026, 9, 20, 12, 0, 0)), nb)
    handins, _ = collect.collect(archive, LAB, tmp_path / "staged", collect.Policy())
    assert handins["eve"].status == "ok" and handins["eve"].submitted is None
    assert any("no valid date" in n for n in handins["eve"].notes)
    assert handins["fay"].submitted == datetime(2026, 9, 20, 12, 0, tzinfo=UTC)


def test_settings_name_the_fixtures_once():
    assert settings.EXPLOITS.is_dir() and settings.MUTANTS.is_dir() and settings.DEMO_CLASS.is_dir()
