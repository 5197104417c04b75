"""The diagnosis stage (`autograder/diagnose.py`): a failed test names a known misconception only when one
catalogue entry explains it exactly, never quotes a hidden test, and the learner's own Validate names it too
(`labkit.testing.fail` reads the released lab's known-mistakes.json)."""

from __future__ import annotations

import json

import pytest

from autograder import diagnose, judge, settings
from coursetools.catalogue import read_catalogue


def row(name, cells, misconception=None, replaces="f", words="forgets the offset", visible=None):
    return {"name": name, "misconception": misconception or name, "replaces": replaces, "words": words,
            "shown": True, "see": {"path": "course/week01-strides.ipynb#Views", "title": "“Views”"},
            "cells": cells, "visible": visible or {}}


TABLE = [
    row("no_offset", {"test_f": "0: different values", "hidden_f": "2: different values; 5: different values"}),
    row("no_offset_twin", {"test_f": "0: different values", "hidden_f": "2: different values; 5: different values"},
        misconception="no_offset"),
    row("wrong_dtype", {"hidden_f": "1: a tensor of another dtype than the reference solution's"},
        words="returns float32"),
    row("twin_a", {"hidden_g": "3: different values"}, replaces="g", words="a"),
    row("twin_b", {"hidden_g": "3: different values"}, replaces="g", words="b"),
    row("passes_visible", {"test_h": "", "hidden_h": "0: different values"}, replaces="h"),
]


def test_an_exact_match_names_the_misconception_and_its_section():
    got = diagnose.explain({"test_f": "0: different values", "hidden_f": "2: different values; 5: different values"},
                           TABLE)
    assert {g: r["misconception"] for g, r in got.items()} == {"test_f": "no_offset", "hidden_f": "no_offset"}
    text = diagnose.message(got["hidden_f"])
    assert "forgets the offset" in text and "course/week01-strides.ipynb#Views" in text and "`f`" in text


def test_a_partial_or_different_pattern_names_nothing():
    # the same tests fail, on other cases: no diagnosis (a wrong one is worse than none)
    assert diagnose.explain({"test_f": "0: different values", "hidden_f": "2: different values"}, TABLE) == {}
    # an entry that passed a test the hand-in failed does not explain the hand-in
    assert diagnose.explain({"test_h": "0: different values", "hidden_h": "0: different values"}, TABLE) == {}
    assert set(diagnose.explain({"test_h": "", "hidden_h": "0: different values"}, TABLE)) == {"hidden_h"}
    # a test the hand-in never ran is not a match
    assert diagnose.explain({"hidden_f": "2: different values; 5: different values"}, TABLE) == {}


def test_two_misconceptions_with_one_pattern_name_neither():
    assert diagnose.explain({"hidden_g": "3: different values"}, TABLE) == {}
    # leave-one-out: with twin_b held out, twin_a is the only claim (the measure counts that as wrong)
    assert diagnose.explain({"hidden_g": "3: different values"}, TABLE, leave_out="twin_b")["hidden_g"]["name"] \
        == "twin_a"


def test_fingerprints_tell_where_and_how_a_record_differs():
    def obs(*values):
        return [{"fn": "f", "out": {"t": "int", "v": v}} for v in values]

    ref = {"obs": obs(1, 2, 3), "cut": 0, "stable": [True] * 3}
    assert judge.fingerprint(ref, {"error": None, "obs": obs(1, 2, 3), "obs_cut": 0}) == ""
    second = judge.fingerprint(ref, {"error": None, "obs": obs(1, 5, 3), "obs_cut": 0})
    assert second.startswith("1 differ #") and second == judge.fingerprint(ref, {"obs": obs(1, 7, 3)})
    assert judge.fingerprint(ref, {"obs": obs(1, 2, 4)}) != second, "another case differs: another fingerprint"
    stopped = judge.fingerprint(ref, {"error": {"ename": "LabCheckFailure"}, "obs": obs(1, 5), "obs_cut": 0})
    assert stopped.startswith("raised LabCheckFailure; fewer calls; 1 differ #")
    assert judge.fingerprint(ref, None) == "not run"
    # a hand-in's exception name is its own text: only an identifier is kept
    assert judge.fingerprint(ref, {"error": {"ename": "<b>x</b>"}, "obs": obs(1, 2, 3)}) == "raised ?"


def test_apply_adds_words_only_to_failed_tests_and_only_for_shown_rows():
    class Run:
        verdicts = {"test_f": {"passed": False, "fp": "0: different values"},
                    "hidden_f": {"passed": False, "fp": "2: different values; 5: different values"}}

    hidden = [dict(r, shown=False) if r["name"].startswith("no_offset") else r for r in TABLE]
    diagnose.apply(Run, hidden)
    assert "diagnosis" not in Run.verdicts["hidden_f"], "a row whose words quote a hidden test is never shown"
    diagnose.apply(Run, TABLE)
    assert Run.verdicts["hidden_f"]["misconception"] == "no_offset"
    assert Run.verdicts["hidden_f"]["diagnosis"].startswith("This looks like a known mistake in `f`")


@pytest.mark.parametrize("lab", settings.labs())
def test_no_shown_words_quote_a_hidden_test(lab):
    """Every catalogue description a learner could be shown holds no literal of a hidden test that the learner's
    notebook does not show too: descriptions that do are withheld (`diagnose.hidden_words`)."""
    secret = diagnose.secret_literals(lab)
    entries = read_catalogue("mutants", lab)
    withheld = diagnose.hidden_words(lab, [e.description for e in entries])
    for e in entries:
        see = (diagnose.named_section(lab, e.see) if e.see else None) or \
            diagnose.walkthrough_section(lab, e.replaces, e.description)
        for text in (e.description, see.get("title", ""), see.get("path", "")):
            assert e.description in withheld or not diagnose.quotes_secret(text, secret), (lab, e.name, text)


def test_a_see_line_names_the_section_and_must_be_a_real_heading(tmp_path, monkeypatch):
    """`- see: <heading>` overrides the word-overlap guess; a heading the walkthrough lacks is an entry error
    (the quality run and the lint report it), not a dead link on a learner's feedback page."""
    from coursetools.diagnosis import table_entries

    lab = "lab07-triton"
    entries = {e.name: e for e in read_catalogue("mutants", lab)}
    assert entries["fused_add_mul_two_kernels"].see == "3. A fused kernel"

    class Caught:  # a quality run's result for one mutant, as table_entries reads it
        name, caught, fingerprints, visible = "fused_add_mul_two_kernels", True, {"hidden_fused_add_mul": "x"}, {}
    (got,) = table_entries(lab, [Caught])
    assert got["see"] == {"path": "course/week07-triton.ipynb#3.-A-fused-kernel", "title": "“3. A fused kernel”"}

    text = settings.MUTANTS.joinpath(f"{lab}.md").read_text()
    monkeypatch.setattr(settings, "MUTANTS", tmp_path)
    (tmp_path / f"{lab}.md").write_text(text.replace("- see: 3. A fused kernel", "- see: 3. A fused kernal", 1))
    bad = [e for e in read_catalogue("mutants", lab) if e.error]
    assert [e.name for e in bad] and "is not a heading of lab07-triton's week walkthrough" in bad[0].error, bad


def test_a_description_quoting_a_hidden_literal_is_withheld():
    lab = "lab01-strides"
    secret = sorted(diagnose.secret_literals(lab), key=len)
    assert secret, "lab01's hidden tests have literals the learner never sees"
    assert diagnose.hidden_words(lab, [f"breaks on {secret[-1]}", "forgets the offset"]) == {f"breaks on {secret[-1]}"}


def test_validate_names_a_known_mistake_from_the_released_table(tmp_path, monkeypatch):
    """A visible check's failure carries the known mistake when the released lab's known-mistakes.json lists its
    message (student_dist writes it from the diagnosis table), and reads as before when it does not."""
    from labkit import testing

    monkeypatch.chdir(tmp_path)
    with pytest.raises(testing.LabCheckFailure) as plain:
        testing.fail("f((2, 3))", (3, 1), (1, 1))
    assert "known mistake" not in str(plain.value)
    sig = plain.value.signature
    table = [row("swaps", {"test_f": "raised LabCheckFailure; fewer calls"}, words="swaps the strides",
                 visible={"test_f": sig})]
    (tmp_path / testing.KNOWN_MISTAKES).write_text(json.dumps(diagnose.known_mistakes(table)))
    with pytest.raises(testing.LabCheckFailure) as known:
        testing.fail("f((2, 3))", (3, 1), (1, 1))
    assert str(known.value).startswith(str(plain.value)) and "known mistake: `f`: swaps the strides" in \
        " ".join(str(known.value).split()) and known.value.signature == sig
    # one message, two misconceptions: neither is named
    twins = table + [row("other", {"test_f": "x"}, words="something else", visible={"test_f": sig})]
    assert diagnose.known_mistakes(twins) == {}
    # a labkit module's own check (lab 13's stream checks, lab 6's allocator checks raise LabCheckFailure
    # directly) is named too, and a failure sent back from a rank's process keeps its words once
    import pickle

    direct_text = "simulate(program): op 3\n  expected: (0, 5)\n  got:      (0, 4)"
    (tmp_path / testing.KNOWN_MISTAKES).write_text(json.dumps(
        {testing.failure_signature(direct_text): "orders the host only after the copy's stream ends"}))
    direct = testing.LabCheckFailure(direct_text)
    assert "known mistake: orders the host only" in " ".join(str(direct).split()), str(direct)
    again = pickle.loads(pickle.dumps(direct))
    assert str(again) == str(direct) and again.signature == direct.signature


def test_a_failure_nothing_explains_silences_every_name():
    """"Where one misconception explains the failures": a hand-in that also fails a test no entry explains may
    have another mistake there, so nothing is named; a test whose answer is still the stub does not count."""
    fps = {"test_f": "0: different values", "hidden_f": "2: different values; 5: different values",
           "hidden_k": "1 differ #0123456789abcdef"}
    assert diagnose.explain(fps, TABLE) == {}
    fps["hidden_k"] = "raised NotImplementedError; fewer calls"
    assert set(diagnose.explain(fps, TABLE)) == {"test_f", "hidden_f"}
