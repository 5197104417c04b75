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


@pytest.mark.parametrize("lab_id", LABS)
def test_solution_runs_and_autogrades_to_full_marks(quality_report, lab_id):
    problems = lab(quality_report, lab_id).problems()["solution"]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lab_id", LABS)
def test_untouched_student_notebook_scores_zero(quality_report, lab_id):
    problems = lab(quality_report, lab_id).problems()["blank"]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lab_id", LABS)
def test_every_mutant_loses_points_on_its_test(quality_report, lab_id):
    q = lab(quality_report, lab_id)
    assert q.solution and q.solution.mutants, f"{lab_id}: no mutants ran"
    problems = q.problems()["mutants"]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lab_id", LABS)
def test_student_notebook_equals_a_fresh_regeneration(quality_report, lab_id):
    problems = lab(quality_report, lab_id).problems()["sync"]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lab_id", LABS)
def test_solution_fits_the_time_budget(quality_report, lab_id):
    problems = lab(quality_report, lab_id).problems()["time"]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", [p.name for p in settings.course_notebooks()])
def test_walkthrough_runs_within_budget(quality_report, path):
    run = next(c for c in quality_report.course if c.path.endswith(path))
    assert not run.error, f"{path} failed:\n{run.error}"
    assert run.seconds <= settings.NOTEBOOK_BUDGET_S, f"{path} took {run.seconds:.0f} s (budget 60 s)"
