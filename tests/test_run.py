"""Stage "run", without a sandbox: what comes back from a run is read defensively, and what a person
will open is inert. Also the static reading of answer code (screen.py) and the status words."""

from __future__ import annotations

import json

import nbformat

from autograder import screen
from autograder.run import read_records, sanitize_outputs
from autograder.sandbox import Result
from autograder.status import Status, kind_of, status


def channel(*records, nonce="n" * 32, end=True):
    lines = [json.dumps({"nonce": nonce, "event": "start"})]
    lines += [r if isinstance(r, str) else json.dumps({"nonce": nonce, **r}) for r in records]
    if end:
        lines.append(json.dumps({"nonce": nonce, "event": "end"}))
    return Result(0, "\n".join(lines).encode(), b"", 1.0)


def cell(i, **extra):
    return {"i": i, "outputs": [], "error": None, "seconds": 0.1, "obs": [], "obs_cut": 0, **extra}


def test_a_clean_run_is_graded():
    status_, records, flags = read_records(channel(cell(0), cell(1)), "n" * 32, 2)
    assert status_ == Status.GRADED and sorted(records) == [0, 1] and not flags


def test_records_of_the_wrong_shape_stop_the_reading_with_a_flag_and_never_raise():
    for bad in [{**cell(0), "i": "0"}, cell(0, outputs="x"), cell(0, seconds=True), cell(0, obs={}),
                cell(0, obs_cut=None),
                cell(0, error=3), cell(5), "not json", "[" * 100_000, json.dumps({"nonce": "forged", **cell(0)})]:
        status_, records, flags = read_records(channel(bad, cell(1)), "n" * 32, 2)
        assert kind_of(status_) == Status.FORGED and not records and flags, bad if isinstance(bad, dict) else ""


def test_a_run_that_ends_early_or_is_killed_says_so():
    assert read_records(channel(cell(0), end=False), "n" * 32, 2)[0] == Status.KERNEL_DIED
    killed = channel(cell(0))
    killed.killed = "memory"
    assert read_records(killed, "n" * 32, 2)[0] == Status.MEMORY_LIMIT


def test_outputs_are_reduced_to_inert_forms():
    evil = [{"output_type": "display_data", "data": {"text/html": "<script>x</script>", "image/svg+xml": "<svg/>",
                                                     "application/javascript": "x", "text/plain": "ok",
                                                     "image/png": "<script>"}},
            {"output_type": "stream", "name": "stdout", "text": "<b>hi</b>"},
            {"output_type": "stream", "name": "weird", "text": "x"}, "junk", None,
            {"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["t", 3]}]
    clean = sanitize_outputs(evil)
    text = json.dumps(clean)
    assert "text/html" not in text and "svg" not in text and "javascript" not in text and "<script>" not in text
    assert [o["output_type"] for o in clean] == ["display_data", "stream", "error"]
    assert clean[0]["data"] == {"text/plain": "ok"}


def answer(label, source, **constraint):
    return {"kind": "answer", "label": label, "source": source, **constraint}


def test_constraints_follow_the_helpers_an_answer_calls():
    rule = {"forbid": ["transpose"], "constrains": ["test_t", "hidden_t"]}
    honest = [answer("helpers", "def _swap(s, a, b):\n    s = list(s)\n    s[a], s[b] = s[b], s[a]\n    return s\n"),
              answer("transpose_view", "def transpose_view(t, a, b):\n    return t.as_strided(_swap(t.shape, a, b),"
                     " _swap(t.stride(), a, b))\n", **rule)]
    assert screen.constraint_failures(honest) == {}
    via_helper = [answer("helpers", "def _swap(t, a, b):\n    return t.transpose(a, b)\n"),
                  answer("transpose_view", "def transpose_view(t, a, b):\n    return _swap(t, a, b)\n", **rule)]
    assert set(screen.constraint_failures(via_helper)) == {"test_t", "hidden_t"}
    computed = [answer("transpose_view",
                       "def transpose_view(t, a, b):\n    return getattr(t, 'tr' + 'anspose')(a, b)\n", **rule)]
    assert "computed name" in screen.constraint_failures(computed)["test_t"]
    broken = [answer("transpose_view", "def transpose_view(:\n", **rule)]
    assert screen.constraint_failures(broken) == {}, "code that does not parse fails when it runs, not here"


def test_status_words_read_back():
    assert kind_of(status(Status.MALFORMED, "not UTF-8")) == Status.MALFORMED
    assert kind_of("kernel died (signal 9)") == Status.KERNEL_DIED
    assert kind_of("graded") == Status.GRADED and kind_of("something else") is None


def test_the_interface_comes_from_the_instructors_source():
    """Answer cells' public functions and classes, and labkit helpers that run them in other processes."""
    from autograder import notebooks as nbs
    from autograder import settings
    from autograder.run import interface

    lab10 = interface(nbs.read(settings.solution_notebook("lab10-distributed")))
    assert {"ring_allreduce", "allreduce_trials"} <= set(lab10)
    lab11 = interface(nbs.read(settings.solution_notebook("lab11-modules")))
    assert {"seeded_worker_init", "loader_draws"} <= set(lab11), \
        "loader_draws brings the workers' draws back (compared by their pattern: settings.BY_PATTERN)"
    assert not [n for n in lab10 + lab11 if n.startswith("_")]


# ---- no false zeros: what is not the answer never changes a score ----

def _runner_outputs(cells: list[dict]) -> dict[str, str]:
    """Run cells through the sandbox runner (no sandbox: plain Python) and give each test cell's stdout."""
    from autograder import run

    job = {"schema": 2, "nonce": "n" * 32, "cell_timeout": 30, "output_limit": 10_000, "seed": 0, "interface": [],
           "max_observations": 100, "fields": {}, "cells": cells}
    result = run._run_insecure(json.dumps(job).encode(), 60, 1, None)
    _, records, flags = read_records(result, "n" * 32, len(cells))
    assert not flags, flags
    return {c["label"]: "".join(o.get("text", "") for o in records[n]["outputs"])
            for n, c in enumerate(cells) if c["kind"] == "test"}


def test_a_scratch_cell_does_not_shift_a_test_cells_seed():
    """Each test cell is seeded by its grade_id (sandbox_runner.cell_seed), not by its position: a hand-in that
    adds a cell before a test draws the same random inputs in it as the reference did."""
    def cells(scratch: bool):
        out = [{"kind": "answer", "label": "answer", "source": "x = 1", "hidden": False}]
        if scratch:
            out.append({"kind": "answer", "label": "added", "source": "import random\nrandom.random()",
                        "hidden": False})
        return out + [{"kind": "test", "label": "test_draws", "hidden": False,
                       "source": "import random\nprint(random.random())"}]

    plain, with_scratch = _runner_outputs(cells(False)), _runner_outputs(cells(True))
    assert plain["test_draws"] and plain == with_scratch, (plain, with_scratch)


def test_stderr_in_a_test_cell_is_kept_but_never_scores_zero():
    """nbgrader's determine_grade scores a cell with any stderr stream 0; the grader shows it as stdout, so a
    warning or a log line from a right answer (or a library) costs nothing. Only an error fails a test."""
    import nbformat

    from autograder import notebooks as nbs
    from autograder.run import test_outputs

    outputs = test_outputs(sanitize_outputs([{"output_type": "stream", "name": "stderr",
                                              "text": "UserWarning: careful\nINFO a log line\n"}]))
    cell_ = nbformat.v4.new_code_cell("x", metadata={"nbgrader": {"grade": True, "grade_id": "t", "points": 2}},
                                      outputs=outputs)
    assert nbs.score_test_cell(cell_).score == 2 and "careful" in outputs[0]["text"]
    from nbgrader.utils import determine_grade

    assert determine_grade(cell_) == (2, 2), "nbgrader itself must score it full"


def test_a_lone_surrogate_or_a_flood_of_outputs_is_written_safely():
    import nbformat

    outputs = sanitize_outputs([{"output_type": "stream", "name": "stdout", "text": "a\ud800b"}] * 300_000)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=outputs)])
    assert "\\ud800" in nbformat.writes(nb) and len(outputs) <= 64


def test_constraints_follow_functions_not_cells_and_what_cannot_be_read_fails():
    rule = {"forbid": ["transpose", "as_strided"], "constrains": ["test_t"]}
    ok = "def transpose_view(t, a, b):\n    return t.as_strided_ok(a, b)\n"

    def judged(source, *extra):
        cells = [answer("transpose_view", source, **rule)] + [answer("added", x) for x in extra]
        return screen.constraint_failures(cells).get("test_t", "")

    # a helper in the same cell that the constrained function never calls may use anything
    assert judged(ok + "\ndef _debug(t):\n    return t.as_strided((1,), (1,))\n") == ""
    assert judged("def transpose_view(t, a, b):\n    strides = list(t.shape)\n    return strides\n",
                  "def other(x):\n    strides = x.transpose(0, 1)\n    return strides\n") == "", \
        "a local name is the function's own, not another function's"
    import_sys = "import sys, warnings, functools, operator\n"
    noisy = ("def transpose_view(t, a, b):\n    print('note', file=sys.stderr)\n    warnings.warn('w')\n"
             "    return functools.reduce(operator.mul, [a, b], 1)\n")
    assert judged(import_sys + noisy) == "", "printing to stderr, warning, reduce over operator.mul are fine"
    hidden = {
        "a def under if": ("if True:\n    def _h(t, a, b):\n        return t.transpose(a, b)\n"
                           "def transpose_view(t, a, b):\n    return _h(t, a, b)\n"),
        "a lambda in a tuple": "_h, _x = (lambda t, a, b: t.transpose(a, b)), 1\n"
                               "def transpose_view(t, a, b):\n    return _h(t, a, b)\n",
        "a method attached later": "class B:\n    pass\nB.go = lambda self, t: t.transpose(0, 1)\n"
                                   "def transpose_view(t, a, b):\n    return B().go(t)\n",
        "setattr with a constant name": "class B:\n    pass\nsetattr(B, 'go', lambda self, t: t.transpose(0, 1))\n"
                                        "def transpose_view(t, a, b):\n    return B().go(t)\n",
        "attrgetter": "from operator import attrgetter\n"
                      "def transpose_view(t, a, b):\n    return attrgetter('tr' + 'anspose')(t)(a, b)\n",
        "reduce over getattr": "import functools\ndef transpose_view(t, a, b):\n"
                               "    return functools.reduce(getattr, ['tr' + 'anspose'], t)(a, b)\n",
        "a module the grader cannot find": "import my_helper\ndef transpose_view(t, a, b):\n"
                                           "    return my_helper.swap(t, a, b)\n",
        "importlib": "import importlib\ndef transpose_view(t, a, b):\n    return importlib.import_module('x')\n",
        "__getattribute__": "def transpose_view(t, a, b):\n    return t.__getattribute__('transpose')\n",
        "vars of a module": "import torch\ndef transpose_view(t, a, b):\n    return vars(torch)['trans' + 'pose'](t)\n",
        "a frame's globals": "import sys\ndef transpose_view(t, a, b):\n    return sys._getframe().f_globals['h'](t)\n",
        "a rebinding elsewhere": (ok, "globals()['transpose_view'] = lambda t, a, b: t.transpose(a, b)\n"),
        "__code__ swapped elsewhere": (ok, "def _g(t, a, b):\n    return t.transpose(a, b)\n"
                                           "transpose_view.__code__ = _g.__code__\n"),
        "a python file named": (ok, "open('h' + '.py', 'w').write('x')\n"),
        "a later rebinding": (ok, "transpose_view = lambda t, a, b: t.transpose(a, b)\n"),
        "a global rebinding inside a function": (ok, "def _install():\n    global transpose_view\n"
                                                     "    transpose_view = lambda t, a, b: t.transpose(a, b)\n"
                                                     "_install()\n"),
        "an attribute of __main__": (ok, "import __main__\n"
                                         "__main__.transpose_view = lambda t, a, b: t.transpose(a, b)\n"),
    }
    for what, source in hidden.items():
        source, *extra = source if isinstance(source, tuple) else (source,)
        assert judged(source, *extra), f"{what}: the reader let it through"


def test_an_allowlist_lets_through_only_what_the_task_allows():
    """`grader.allow`: outside Python's built-ins, its standard helpers and the hand-in's own code, the
    constrained code may reach only the dotted names the task lists, spelled as the lab's own cells import them
    (`import torch.distributed as dist` makes `dist.send` torch.distributed.send, however the hand-in imports it).
    A built-in no forbid list names fails; naming a type in an annotation uses nothing."""
    rule = {"forbid": ["stride"], "allow": ["torch.distributed.send"], "constrains": ["test_c"]}
    setup = {"kind": "trusted", "label": "setup", "source": "import torch\nimport torch.distributed as dist\n"}

    def judged(source):
        return screen.constraint_failures([setup, answer("contiguous_strides", source, **rule)]).get("test_c", "")

    fine = {
        "built-ins and math": "import math\ndef contiguous_strides(shape):\n    return [math.prod(shape[i + 1:]) "
                              "for i in range(len(shape))]\n",
        "an allowed name, as the set-up spells it": "def contiguous_strides(shape):\n    dist.send(1, 0)\n",
        "an allowed name, imported another way": "import torch.distributed as d\n"
                                                 "def contiguous_strides(shape):\n    d.send(1, 0)\n",
        "an annotation": "def contiguous_strides(shape: torch.Size) -> list:\n    return list(shape)\n",
        "a parameter stored on self": "class A:\n    def __init__(self, x):\n        self.kept = x\n"
                                      "def contiguous_strides(shape):\n    return A(shape).kept\n",
        "stderr and a warning": "import sys, warnings\ndef contiguous_strides(shape):\n"
                                "    print(1, file=sys.stderr)\n    warnings.warn('w')\n    return []\n",
        "shape arithmetic in NumPy": "import numpy as np\ndef contiguous_strides(shape):\n"
                                     "    return np.cumprod(np.asarray(shape)[::-1])\n",
        "a literal parsed": "import ast\ndef contiguous_strides(shape):\n    return ast.literal_eval('(1,)')\n",
    }
    for what, source in fine.items():
        assert judged(source) == "", f"{what}: {judged(source)}"
    unlisted = {
        "a private helper no forbid list names": "import torch._prims_common as pc\n"
                                                 "def contiguous_strides(shape):\n"
                                                 "    return pc.make_contiguous_strides_for(shape)\n",
        "the set-up's torch": "def contiguous_strides(shape):\n    return torch.zeros(shape)\n",
        "a module passed as a value": "def contiguous_strides(shape, m=torch):\n    return m\n",
        "another collective": "def contiguous_strides(shape):\n    dist.all_reduce(shape)\n",
        "a from-import": "from torch.distributed import recv\ndef contiguous_strides(shape):\n    recv(1, 0)\n",
        "an import inside the function": "def contiguous_strides(shape):\n    import torch\n"
                                         "    return torch.cumprod(shape)\n",
        "NumPy's own strides": "import numpy as np\ndef contiguous_strides(shape):\n"
                               "    return np.ndarray(shape).strides\n",
    }
    for what, source in unlisted.items():
        why = judged(source)
        assert "does not allow" in why and "`torch.distributed.send`" in why, f"{what}: {why!r}"


def test_the_constrained_functions_own_name_and_harmless_dunders_are_fine():
    rule = {"forbid": ["is_contiguous"], "constrains": ["test_c"]}
    cells = [answer("is_contiguous", "def is_contiguous(shape, strides):\n    return True\n", **rule),
             answer("added", "import functools\n\ndef _wrap(fn):\n    @functools.wraps(fn)\n"
                             "    def inner(*a):\n        return fn(*a)\n    return inner\n\n"
                             "is_contiguous = _wrap(is_contiguous)\nname = is_contiguous.__class__.__name__\n")]
    assert screen.constraint_failures(cells) == {}


def test_padded_and_flooding_records_keep_the_grader_small_and_quick():
    """A hand-in that found the run's nonce can write records itself: one with 200 000 outputs, one padded by
    60 MB. The grader reads the channel line by line, refuses a record larger than the runner writes, and keeps
    64 outputs a cell: it stays far under 512 MB and reads both in seconds, not minutes."""
    import time
    import tracemalloc

    flood = cell(0, outputs=[{"output_type": "stream", "name": "stdout", "text": "y"}] * 200_000)
    pad = cell(1, outputs=[{"output_type": "stream", "name": "stdout", "text": "x" * (60 << 20)}])
    result = channel(flood, pad)
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        status_, records, flags = read_records(result, "n" * 32, 2)
        kept = [sanitize_outputs(r["outputs"]) for r in records.values()]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sorted(records) == [0] and "larger than the runner writes" in flags[0], flags
    assert len(kept[0]) == 64 and kind_of(status_) == Status.FORGED
    assert peak < 512 << 20, f"reading the records took {peak / 2**20:.0f} MB"
    assert time.perf_counter() - t0 < 30


def test_a_declared_constraint_reaches_the_reader_whole():
    """`run.constraint` hands the reader everything the instructor's cell declares: the allowlist, and the
    functions it constrains when they are not named after the cell (`functions`)."""
    from autograder import run

    meta = {"nbgrader": {"solution": True, "grade_id": "helpers", "grade": False, "locked": False,
                         "schema_version": 3},
            "grader": {"constrains": ["test_a"], "forbid": ["x"], "allow": ["torch.cat"], "functions": ["a", "b"]}}
    cell = nbformat.v4.new_code_cell("def a():\n    pass\n", metadata=meta)
    assert run.constraint(cell) == {"forbid": ["x"], "constrains": ["test_a"], "allow": ["torch.cat"],
                                    "functions": ["a", "b"]}
