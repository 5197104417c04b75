"""`make gpu-check` (coursetools/gpu_run.py): a failing cell is reported and the next one still runs;
a skipped GPU check makes the run fail, since on a GPU machine nothing should be skipped."""

from __future__ import annotations

import json

from coursetools import gpu_run


def _notebook(tmp_path, cells):
    nb = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    for grade_id, source, tags in cells:
        meta = {"nbgrader": {"grade_id": grade_id}, "tags": tags}
        nb["cells"].append({"cell_type": "code", "metadata": meta, "source": source, "outputs": [],
                            "execution_count": None})
    path = tmp_path / "lab.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_every_cell_runs_and_failures_are_reported(tmp_path, capsys):
    path = _notebook(tmp_path, [("parameters", 'DEVICE = "auto"', ["parameters"]),
                                ("breaks", "raise ValueError('first line\\nsecond line')", []),
                                ("after", "print('device is', DEVICE)", []),
                                ("gpu_checks", "print('GPU checks passed')", [])])
    assert gpu_run.run_one(path) == 1
    out = capsys.readouterr().out
    assert "breaks" in out and "FAILED ValueError: first line" in out and "second line" in out
    assert out.index("\n  after ") > out.index("\n  breaks ")  # the cell after the failure ran too
    assert "| GPU checks passed" in out and "1 failed cell(s), 0 GPU check(s) skipped" in out


def test_a_skipped_gpu_check_fails_the_run(tmp_path, capsys):
    path = _notebook(tmp_path, [("parameters", 'DEVICE = "auto"', ["parameters"]),
                                ("gpu_checks", f"print('{gpu_run.SKIP_MARK} something')", [])])
    assert gpu_run.run_one(path) == 1
    assert "0 failed cell(s), 1 GPU check(s) skipped" in capsys.readouterr().out
