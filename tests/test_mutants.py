"""The mutant runner itself: caught, missed, broken and kernel-crashing mutants are told apart."""

from __future__ import annotations

import nbformat

from autograder import settings
from coursetools import mutants

LAB = "lab99-tiny"


def tiny_lab(root):
    meta = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}}
    nb = nbformat.v4.new_notebook(metadata=meta)

    def nbg(gid, **kw):
        base = {"grade": False, "grade_id": gid, "locked": True, "schema_version": 3, "solution": False,
                "task": False}
        return {"nbgrader": {**base, **kw}}

    nb.cells = [
        nbformat.v4.new_code_cell('DEVICE = "auto"\nSEED = 0', metadata={"tags": ["parameters"], **nbg("parameters")}),
        nbformat.v4.new_code_cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
                                  metadata=nbg("double", solution=True, locked=False)),
        nbformat.v4.new_code_cell("assert double(2) == 4", metadata=nbg("test_double", grade=True, points=1)),
        nbformat.v4.new_code_cell("assert double(-3) == -6", metadata=nbg("hidden_double", grade=True, points=2)),
    ]
    (root / "solutions" / LAB).mkdir(parents=True)
    nbformat.write(nb, str(root / "solutions" / LAB / f"{LAB}.ipynb"))
    m = root / "mutants" / LAB
    m.mkdir(parents=True)
    head = "# Mutant: {d}\n# replaces: double\n# must fail: {f}\n"
    (m / "caught.py").write_text(head.format(d="adds", f="test_double, hidden_double") + "def double(x):\n"
                                 "    return x + 1\n")
    (m / "missed.py").write_text(head.format(d="abs", f="test_double") + "def double(x):\n    return 2 * abs(x)\n")
    (m / "broken.py").write_text(head.format(d="syntax", f="test_double") + "def double(x)\n    return x\n")
    (m / "crash.py").write_text(head.format(d="kills the kernel", f="test_double") +
                                "import os\ndef double(x):\n    os._exit(1)\n")
    (m / "z_after_crash.py").write_text(head.format(d="zero", f="test_double") + "def double(x):\n    return 0\n")


def test_runner_tells_caught_missed_broken_and_crashed_apart(tmp_path, monkeypatch):
    tiny_lab(tmp_path)
    monkeypatch.setattr(settings, "SOLUTIONS", tmp_path / "solutions")
    monkeypatch.setattr(settings, "MUTANTS", tmp_path / "mutants")
    monkeypatch.setattr(settings, "EXECUTED", tmp_path / "executed")
    run = mutants.evaluate_solution(LAB)
    assert (run.score, run.max_score) == (3, 3) and not run.cell_errors and not run.rerun_problems
    res = {m.name: m for m in run.mutants}
    assert res["caught"].caught and set(res["caught"].failed) == {"test_double", "hidden_double"}
    assert not res["missed"].caught and res["missed"].failed == ("hidden_double",)
    assert not res["broken"].caught and "SyntaxError" in res["broken"].broken
    assert res["crash"].crashed and not res["crash"].caught
    # the runner restarted the kernel and went on
    assert res["z_after_crash"].caught


def test_malformed_header_is_explained(tmp_path, monkeypatch):
    (tmp_path / LAB).mkdir()
    (tmp_path / LAB / "m.py").write_text("# replaces: double\ndef double(x):\n    return x\n")
    monkeypatch.setattr(settings, "MUTANTS", tmp_path)
    [m] = mutants.load_mutants(LAB, strict=False)
    assert "'mutant:'" in m.error and "'must fail:'" in m.error
