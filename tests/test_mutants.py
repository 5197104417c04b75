"""The mutant runner itself: caught, missed, broken and kernel-crashing mutants are told apart."""

from __future__ import annotations

import nbformat
import pytest

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
    (root / "mutants").mkdir()
    (root / "mutants" / f"{LAB}.md").write_text(MUTANTS)
    (root / "alternatives").mkdir()
    (root / "alternatives" / f"{LAB}.md").write_text(ALTERNATIVES)


def entry(name, idea, code, must_fail="", form="python"):
    fail = f"- must fail: {must_fail}\n" if must_fail else ""
    return f"## {name}\n{idea}\n\n- replaces: double\n{fail}\n```{form}\n{code}```\n\n"


MUTANTS = "# Mutants of the tiny lab\n\n" + "".join([
    entry("caught", "adds", "-    return 2 * x\n+    return x + 1\n", "test_double, hidden_double", "diff"),
    entry("missed", "abs", "def double(x):\n    return 2 * abs(x)\n", "test_double"),
    entry("broken", "syntax", "def double(x)\n    return x\n", "test_double"),
    entry("crash", "kills the kernel", "import os\ndef double(x):\n    os._exit(1)\n", "test_double"),
    entry("z_after_crash", "zero", "def double(x):\n    return 0\n", "test_double"),
])
ALTERNATIVES = "".join([
    entry("adds_itself", "x + x", " def double(x):\n-    return 2 * x\n+    return x + x\n", form="diff"),
    entry("shifts", "a left shift: right for the ints the contract allows", "def double(x):\n    return x << 1\n"),
])


def test_runner_tells_caught_missed_broken_and_crashed_apart(tmp_path, monkeypatch):
    tiny_lab(tmp_path)
    monkeypatch.setattr(settings, "SOLUTIONS", tmp_path / "solutions")
    monkeypatch.setattr(settings, "MUTANTS", tmp_path / "mutants")
    monkeypatch.setattr(settings, "ALTERNATIVES", tmp_path / "alternatives")
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
    alts = {a.name: a for a in run.alternatives}
    assert alts["adds_itself"].failed == () and not alts["adds_itself"].broken
    assert alts["shifts"].failed == () and not alts["shifts"].crashed  # the tests use ints only


def test_malformed_entries_are_explained(tmp_path, monkeypatch):
    tiny_lab(tmp_path)
    monkeypatch.setattr(settings, "SOLUTIONS", tmp_path / "solutions")
    monkeypatch.setattr(settings, "MUTANTS", tmp_path / "mutants")
    (tmp_path / "mutants" / f"{LAB}.md").write_text(
        "## no_fields\nforgets the fields\n\n```python\ndef double(x):\n    return x\n```\n"
        "## stale_diff\nthe solution changed under it\n\n- replaces: double\n- must fail: test_double\n\n"
        "```diff\n-    return 3 * x\n+    return x\n```\n"
        "## unknown_function\nnames a function the lab lacks\n\n- replaces: triple\n- must fail: test_double\n\n"
        "```python\ndef triple(x):\n    return x\n```\n")
    errors = {m.name: m.error for m in mutants.load_mutants(LAB, strict=False)}
    assert "'- replaces: <function>'" in errors["no_fields"] and "'- must fail:" in errors["no_fields"]
    assert "does not apply" in errors["stale_diff"] and "occur 0 times" in errors["stale_diff"]
    assert "no solution cell" in errors["unknown_function"]


def test_a_diff_edits_only_the_function_it_replaces():
    from coursetools.catalogue import apply_diff

    cell = "def helper(x):\n    return x\n\n\ndef double(x):\n    return 2 * helper(x)\n"
    assert apply_diff(cell, "-    return 2 * helper(x)\n+    return helper(x) + 1", inside="double") == \
        "def helper(x):\n    return x\n\n\ndef double(x):\n    return helper(x) + 1\n"
    with pytest.raises(ValueError, match="outside the definition"):
        apply_diff(cell, "-    return x\n+    return 0", inside="double")
    with pytest.raises(ValueError, match="occur 2 times"):
        apply_diff("def double(x):\n    y = x\n    y = x\n    return y\n", "-    y = x\n+    y = 2 * x",
                   inside="double")
    # hunks apply in order; a context line anchors an insertion
    two = " def double(x):\n+    x = int(x)\n@@\n-    return 2 * helper(x)\n+    return helper(x) * 2"
    assert apply_diff(cell, two, inside="double").endswith("def double(x):\n    x = int(x)\n    return helper(x) * 2\n")


def test_branch_count_follows_each_side_of_each_decision():
    """coursetools/branches.py: an if's two sides (also `if x: return y` on one line), a loop entered and left,
    an except handler; a decision whose body shares its line with anything else is not counted."""
    from coursetools import branches

    src = ("def f(xs, flag):\n"
           "    if not xs: return 0\n"
           "    total = 0\n"
           "    for x in xs:\n"
           "        if x < 0:\n"
           "            continue\n"
           "        total += x\n"
           "    try:\n"
           "        total = int(total)\n"
           "    except ValueError:\n"
           "        total = -1\n"
           "    if flag: total += 1\n"
           "    return total\n")
    ns: dict = {}
    exec(compile(src, "<branches-test>", "exec"), ns)
    whats = [str(b) for b, _ in branches.decisions(src)]
    assert len(whats) == 7 and not any("line 12" in w for w in whats), whats
    recorder = branches.Recorder({"<branches-test>"})
    with recorder:
        ns["f"]([1, 2], False)
    first = branches.report({"<branches-test>": src}, recorder)
    assert first["total"] == 7 and sorted(first["missed"]) == [
        "`f` line 10: except ValueError", "`f` line 2: if true", "`f` line 5: if true"], first
    with recorder:
        ns["f"]([], True), ns["f"]([-1, 3], True)
    assert branches.report({"<branches-test>": src}, recorder)["missed"] == ["`f` line 10: except ValueError"]
