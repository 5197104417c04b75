"""Lab quality is measured: solution full marks, blank 0, mutants caught, labs/ in sync,
and every walkthrough runs. The table prints at the end of `make test`."""

from __future__ import annotations

import pytest

from autograder import settings

LABS = settings.labs()


def lab(report, lab_id):
    return next(q for q in report.labs if q.lab == lab_id)


def test_there_are_labs_and_walkthroughs():
    assert LABS, "no solutions/<lab>/<lab>.ipynb found"
    assert settings.course_notebooks(), "no course/weekNN-*.ipynb found"


CHECKS = {
    "solution": "the solution runs and its hand-in autogrades to full marks",
    "blank": "the untouched student notebook autogrades to 0",
    "mutants": "every mutant loses points on the test it names",
    "sync": "labs/ equals a fresh regeneration from solutions/",
    "time": "the solution fits three times its time budget (a loaded machine is slow, not broken)",
    "judged": "every test cell gives the judge something to compare (or is listed in settings.UNJUDGED_KNOWN)",
    "branches": "the hidden tests reach every branch of the solution's answers (or settings.UNREACHED_KNOWN says why "
                "not)",
    "diagnosis": "every wrong answer written independently of the catalogue (tests/fixtures/wrong/) loses points, and "
                 "none is diagnosed as a misconception other than the one it expects",
}


@pytest.mark.parametrize("check", list(CHECKS))
@pytest.mark.parametrize("lab_id", LABS)
def test_lab_quality(quality_report, lab_id, check):
    q = lab(quality_report, lab_id)
    if check == "mutants":
        assert q.solution and q.solution.mutants, f"{lab_id}: no mutants ran"
    problems = q.problems()[check]
    assert not problems, f"{lab_id}: {CHECKS[check]}, but:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", [p.name for p in settings.course_notebooks()])
def test_walkthrough_runs_within_budget(quality_report, path):
    run = next(c for c in quality_report.course if c.path.endswith(path))
    assert not run.error, f"{path} failed:\n{run.error}"
    budget = settings.NOTEBOOK_BUDGET_S
    if run.seconds > budget:
        print(f"\n  {path} took {run.seconds:.0f} s, over its budget of {budget} s (fails past {3 * budget} s)")
    assert run.seconds <= 3 * budget, f"{path} took {run.seconds:.0f} s, more than three times its {budget} s budget"


def test_threats_md_lists_what_is_still_trusted_as_the_code_has_it():
    """THREATS.md's table of declared constraints, in-process rules and unjudged test cells is generated from the
    notebooks and settings; a lab that gains an in-process check or a constraint changes it."""
    from coursetools import threats

    assert threats.current() == threats.render(), \
        "autograder/THREATS.md's generated table is stale: run `python -m coursetools threats` and commit it"


def test_the_quality_cache_key_follows_every_input(tmp_path, monkeypatch):
    """A lab's cached quality result is reused only while nothing it depends on changed: its notebooks and
    catalogues, the grader, the parameters (and the rest `quality._common_hash` covers)."""
    from coursetools import quality

    common = quality._common_hash({})
    key = quality._task_hash(common, "solution", "lab01-strides")
    assert key == quality._task_hash(quality._common_hash({}), "solution", "lab01-strides")
    assert key != quality._task_hash(quality._common_hash({"DEVICE": "cuda"}), "solution", "lab01-strides")
    assert key != quality._task_hash(common, "solution", "lab02-dispatcher")
    assert key != quality._task_hash(common, "grading", "lab01-strides")
    monkeypatch.setattr(settings, "MUTANTS", tmp_path)
    (tmp_path / "lab01-strides.md").write_text("# another catalogue\n")
    assert key != quality._task_hash(common, "solution", "lab01-strides")
    quality._store(tmp_path, "course", "/x/week01-strides.ipynb", "k", quality.CourseRun("/x/week01-strides.ipynb"))
    assert quality._cached(tmp_path, "course", "/y/week01-strides.ipynb", "k").path.endswith("week01-strides.ipynb")
    assert quality._cached(tmp_path, "course", "/y/week01-strides.ipynb", "other") is None
    monkeypatch.setenv("COURSE_QUALITY_CACHE", "off")
    assert quality.cache_dir() is None
