"""`make grade` in its simplest honest form: a folder of hand-ins in, grades.csv out."""

from __future__ import annotations

import csv
import subprocess
import sys

import pytest

from autograder import settings

LAB = "lab01-strides"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    out = tmp_path_factory.mktemp("grades")
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--lab", LAB, "--out", str(out)],
                          cwd=settings.ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with (out / "grades.csv").open() as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    return rows, proc.stdout


def test_grades_csv_has_the_documented_columns(graded):
    rows, _ = graded
    assert rows, "grades.csv is empty"
    assert list(next(iter(rows.values()))) == ["student_id", "score", "max_score", "status"]


def test_demo_class_grades_are_what_each_hand_in_deserves(graded):
    rows, log = graded
    full = float(rows["ada"]["max_score"])
    assert float(rows["ada"]["score"]) == full, f"ada handed in every right answer:\n{log}"
    assert float(rows["cal"]["score"]) == 0, f"cal handed in the untouched notebook:\n{log}"
    assert 0 < float(rows["bea"]["score"]) < full, f"bea has one plausible mistake:\n{log}"
    for sid in ("ada", "bea", "cal"):
        assert rows[sid]["status"] == "graded", rows[sid]


def test_hand_ins_that_break_the_run_score_zero_with_a_reason(graded):
    rows, log = graded
    assert rows["dan"]["status"] == "memory limit" and float(rows["dan"]["score"]) == 0, rows["dan"]
    # a dead kernel must not leave later test cells unrun and so full marks
    assert rows["eve"]["status"] == "kernel died" and float(rows["eve"]["score"]) == 0, rows["eve"]


def test_unknown_lab_and_empty_folder_are_clear_errors(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--lab", "lab99-nope"],
                          cwd=settings.ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown lab" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--lab", LAB, "--submissions",
                           str(tmp_path)], cwd=settings.ROOT, capture_output=True, text=True)
    assert proc.returncode == 2 and f"<student_id>/{LAB}.ipynb" in proc.stderr
