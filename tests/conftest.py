"""Shared fixtures and the end-of-run summary (lab-quality table, stage times)."""

from __future__ import annotations

import os
import time
from collections import defaultdict

import pytest

from autograder import settings

_stage_seconds: dict[str, float] = defaultdict(float)
_state: dict = {}
_t0 = time.perf_counter()


def pytest_runtest_logreport(report):
    _stage_seconds[report.nodeid.split("::")[0]] += report.duration


@pytest.fixture(scope="session")
def quality_report():
    """Every lab's quality checks and every walkthrough, run once in parallel jobs."""
    from coursetools.quality import run_all

    t0 = time.perf_counter()
    report = run_all(progress=lambda msg: None)
    _state["quality"] = report
    _state["quality_seconds"] = time.perf_counter() - t0
    return report


@pytest.fixture(scope="session")
def lab01_diagnosis():
    """Lab 1's diagnosis table (build/diagnosis/lab01-strides.json), from its quality run: the one the full
    quality report reuses from the cache. The grading and Validate tests that show diagnoses need it first."""
    from autograder import diagnose
    from coursetools.quality import run_all

    report = run_all(["lab01-strides"], course=False, progress=lambda msg: None)
    table = diagnose.load("lab01-strides")
    assert table, f"lab 1's quality run built no diagnosis table: {report.labs[0].problems()}"
    return table


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    if "quality" in _state:
        from coursetools.quality import format_table

        tr.section("lab quality")
        tr.write_line(format_table(_state["quality"]))
    tr.section("stage times")
    for stage, secs in sorted(_stage_seconds.items()):
        tr.write_line(f"  {stage:<40} {secs:7.1f} s")
    tr.write_line(f"  {'total (pytest)':<40} {time.perf_counter() - _t0:7.1f} s"
                  f"   jobs={settings.jobs()} device={os.environ.get('COURSE_DEVICE') or 'auto'}")
