"""Shared fixtures and the end-of-run summary (lab-quality table, stage times).

`make test` runs the files on pytest-xdist workers (`--dist loadfile`: a file's tests, and so its module
fixtures, stay on one worker). A session fixture then runs once per worker that asks for it, so lab 1's
quality run, which files on both workers need, takes a lock (the second reuses the first's cached result), and
the quality table travels to the controller, which prints the summary, in a report's user_properties."""

from __future__ import annotations

import contextlib
import fcntl
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
    for name, value in report.user_properties:
        if name == "quality_table":
            _state["quality_table"] = value


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "teardown" and "quality" in _state and not _state.get("quality_sent"):
        from coursetools.quality import format_table

        outcome.get_result().user_properties.append(("quality_table", format_table(_state["quality"])))
        _state["quality_sent"] = True


@contextlib.contextmanager
def _quality_lock():
    """Lab 1's quality run, once at a time across the suite's workers (build/ and the result cache are shared)."""
    settings.BUILD.mkdir(parents=True, exist_ok=True)
    with open(settings.BUILD / "quality.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _lab01_quality():
    from coursetools.quality import run_all

    with _quality_lock():
        return run_all(["lab01-strides"], course=False, progress=lambda msg: None)


@pytest.fixture(scope="session")
def quality_report():
    """Every lab's quality checks and every walkthrough, run once in parallel jobs. Lab 1 goes first, alone
    and under the lock, because another worker's `lab01_diagnosis` may be waiting for it."""
    from coursetools.quality import run_all

    t0 = time.perf_counter()
    _lab01_quality()  # the whole run below reuses it from the cache, so it needs no lock
    report = run_all(progress=lambda msg: None)
    _state["quality"] = report
    _state["quality_seconds"] = time.perf_counter() - t0
    return report


@pytest.fixture(scope="session")
def lab01_diagnosis():
    """Lab 1's diagnosis table (build/diagnosis/lab01-strides.json), from its quality run: the one the full
    quality report reuses from the cache. The grading and Validate tests that show diagnoses need it first."""
    from autograder import diagnose

    report = _lab01_quality()
    table = diagnose.load("lab01-strides")
    assert table, f"lab 1's quality run built no diagnosis table: {report.labs[0].problems()}"
    return table


def pytest_terminal_summary(terminalreporter):
    tr = terminalreporter
    if "quality_table" in _state:
        tr.section("lab quality")
        tr.write_line(_state["quality_table"])
    tr.section("stage times")
    for stage, secs in sorted(_stage_seconds.items()):
        tr.write_line(f"  {stage:<40} {secs:7.1f} s")
    tr.write_line(f"  {'total (pytest)':<40} {time.perf_counter() - _t0:7.1f} s"
                  f"   jobs={settings.jobs()} device={os.environ.get('COURSE_DEVICE') or 'auto'}")
