"""The notebooks follow the lab contract, and the lint explains malformed input in one line."""

from __future__ import annotations

import json

import nbformat

from coursetools import lint

META = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}}


def nbg(grade_id, grade=False, solution=False, locked=True, points=None):
    m = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution,
         "task": False}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


def good_lab() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(metadata=META)
    params = nbformat.v4.new_code_cell('DEVICE = "auto"\nSEED = 0', metadata={"tags": ["parameters"],
                                                                            **nbg("parameters")})
    sol = nbformat.v4.new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
                                    metadata=nbg("f", solution=True, locked=False))
    test = nbformat.v4.new_code_cell("assert f() == 1", metadata=nbg("test_f", grade=True, points=1))
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), params, sol, test]
    return nb


def write(tmp_path, nb, name="lab99-x.ipynb"):
    path = tmp_path / name
    path.write_text(json.dumps(nb) if isinstance(nb, dict) else nbformat.writes(nb))
    return path


def lint_lab(path):
    nb, problems = lint.load(path)
    if nb is None:
        return problems
    return (lint.check_clean(path, nb) + lint.check_parameters(path, nb, locked=True)
            + lint.check_nbgrader(path, nb) + lint.check_gpu_cells(path, nb))


def test_repository_is_lint_clean():
    problems = lint.lint_all()
    assert not problems, "make lint finds:\n" + "\n".join(map(str, problems))


def test_a_well_formed_lab_passes(tmp_path):
    assert lint_lab(write(tmp_path, good_lab())) == []


def test_bad_json_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "broken.ipynb"
    path.write_text('{"cells": [,]}')
    problems = lint_lab(path)
    assert len(problems) == 1
    line = str(problems[0])
    assert "broken.ipynb" in line and "not valid JSON" in line and "line 1" in line and "\n" not in line


def test_duplicate_grade_id_names_both_cells(tmp_path):
    nb = good_lab()
    nb.cells[3].metadata.nbgrader["grade_id"] = "f"
    problems = [str(p) for p in lint_lab(write(tmp_path, nb))]
    assert any("duplicate grade_id" in p and "cell 3 (grade_id 'f')" in p and "cell 2" in p for p in problems), problems


def test_missing_parameters_cell_says_how_to_fix(tmp_path):
    nb = good_lab()
    nb.cells[1].metadata.tags = []
    problems = [str(p) for p in lint_lab(write(tmp_path, nb))]
    assert any("no cell tagged 'parameters'" in p and "fix:" in p for p in problems), problems


def test_outputs_points_and_unlocked_tests_are_flagged(tmp_path):
    nb = good_lab()
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi")]
    nb.cells[3].execution_count = 3
    nb.cells[3].metadata.nbgrader["points"] = 0
    nb.cells[3].metadata.nbgrader["locked"] = False
    problems = " | ".join(str(p) for p in lint_lab(write(tmp_path, nb)))
    for expected in ("has outputs", "execution count", "points=0", "not locked"):
        assert expected in problems, problems


def test_gpu_only_cells_are_compiled_and_their_names_checked(tmp_path):
    nb = good_lab()
    nb.cells.append(nbformat.v4.new_code_cell("if DEVICE == 'cuda':\n    torch.cuda.memory_stats_nope()",
                                              metadata={"tags": ["gpu"]}))
    nb.cells.append(nbformat.v4.new_code_cell("if True:\nprint(1)", metadata={"tags": ["gpu"]}))
    problems = " | ".join(str(p) for p in lint_lab(write(tmp_path, nb)))
    assert "torch.cuda.memory_stats_nope does not exist" in problems, problems
    assert "does not compile" in problems, problems
    nb.cells = nb.cells[:-2] + [nbformat.v4.new_code_cell("torch.cuda.memory_stats(0)", metadata={"tags": ["gpu"]})]
    assert lint_lab(write(tmp_path, nb)) == []
