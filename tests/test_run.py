"""Stage "run", without a sandbox: what comes back from a run is read defensively, and what a person
will open is inert. Also the static reading of answer code (screen.py) and the status words."""

from __future__ import annotations

import json

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
    assert "seeded_worker_init" in lab11 and "loader_draws" not in lab11, \
        "loader_draws' draws depend on how a right answer derives its seeds: it must not be judged"
    assert not [n for n in lab10 + lab11 if n.startswith("_")]
