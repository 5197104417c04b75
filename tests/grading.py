"""What the grading tests share (tests/test_grade.py, tests/test_exploits.py): the lab they grade, `make grade`
run as a subprocess, and the grades it wrote."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import notebooks as nbs
from autograder import sandbox, settings

LAB = "lab01-strides"
DEMO = settings.DEMO_CLASS / LAB
needs_bwrap = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap is not installed (make sandbox-deps)")


def grade(out: Path, *args: str, check: bool = True, lab: str = LAB, policy: Path | None = None
          ) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "autograder", "grade", "--lab", lab, "--out", str(out), "--course",
           str(out / "course"), "--jobs", "2", *args]
    env = {**os.environ, "COURSE_GRADING_TOML": str(policy)} if policy else None
    proc = subprocess.run(cmd, cwd=settings.ROOT, capture_output=True, text=True, env=env)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return proc


def read_grades(out: Path) -> dict[str, dict]:
    with (out / "grades.csv").open() as f:
        return {r["student_id"]: r for r in csv.DictReader(f)}


def hidden_lines() -> set[str]:
    """Lines of the hidden tests that appear nowhere in the student's notebook."""
    sol = nbs.read(settings.solution_notebook(LAB))
    visible = settings.student_notebook(LAB).read_text()
    lines = set()
    for cell in sol.cells:
        if "BEGIN HIDDEN TESTS" in cell.source:
            body = cell.source.split("### BEGIN HIDDEN TESTS", 1)[1].split("### END HIDDEN TESTS", 1)[0]
            lines |= {ln.strip() for ln in body.splitlines()
                      if len(ln.strip()) >= 25 and not ln.strip().startswith("#")}
    return {ln for ln in lines if json.dumps(ln)[1:-1] not in visible}
