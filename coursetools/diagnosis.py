"""The diagnosis table of each lab, and how well it diagnoses.

The quality run (`mutants.evaluate_solution`) keeps each catalogue mutant's fingerprint on every test it
ran. `table_entries` turns them into `autograder/diagnose.py`'s table, saved under build/diagnosis/ for
`make grade`. `measure` says how the table does, the way issue "feedback that names the misconception"
asks:

- leave-one-out: each caught mutant, diagnosed by the rest of the catalogue (its own row left out): right
  when another row of the same misconception names it, wrong when a different misconception is named;
- wrong answers written independently of the catalogue (`tests/fixtures/wrong/<lab>.md`, each naming the
  catalogue entry that describes it, or none), run on every test: right when the named misconception is
  the expected one, wrong when another is named, or when one is named for an answer no entry describes.

A "wrong" diagnosis is the number that matters: it must stay under 5%.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from autograder import diagnose


def families(mutants, tests: list[str]) -> dict[str, set[str]]:
    """{answer (a function or class the catalogue replaces): its tests}: test_<answer> and hidden_<answer>, and
    every test a mutant of that answer must fail. Each mutant runs its answer's family, so the table knows what
    a hand-in with that mistake does on every test of the answer, not only on those the mutant must fail."""
    out: dict[str, set[str]] = {}
    for m in mutants:
        fam = out.setdefault(m.replaces, {t for t in tests if t in (f"test_{m.replaces}", f"hidden_{m.replaces}")})
        fam.update(m.must_fail)
    return out


def table_entries(lab: str, mutants) -> list[dict]:
    """The table rows from the quality run's results (`mutants.MutantResult`) and the lab's catalogue: caught
    mutants only, since one that passes its tests shows no pattern."""
    from coursetools.catalogue import read_catalogue

    entries = {e.name: e for e in read_catalogue("mutants", lab)}
    hidden = diagnose.hidden_words(lab, [e.description for e in entries.values()])
    rows = []
    for m in mutants:
        e = entries.get(m.name)
        if e is None or not m.caught or not getattr(m, "fingerprints", None):
            continue
        rows.append({"name": m.name, "misconception": e.misconception or m.name, "replaces": e.replaces,
                     "words": e.description, "shown": e.description not in hidden,
                     "see": (diagnose.named_section(lab, e.see) if e.see else None)
                     or diagnose.walkthrough_section(lab, e.replaces, e.description),
                     "cells": dict(m.fingerprints), "visible": dict(getattr(m, "visible", {}) or {})})
    return rows


@dataclass
class Measure:
    lab: str
    loo: dict[str, int] = field(default_factory=lambda: {"right": 0, "none": 0, "wrong": 0})
    written: dict[str, int] = field(default_factory=lambda: {"right": 0, "none": 0, "wrong": 0, "passed": 0})
    wrong_cases: list[str] = field(default_factory=list)  # what was misdiagnosed, for a maintainer to read
    withheld: int = 0  # rows whose words quote a hidden test's literal (never shown)

    @staticmethod
    def share(counts: dict[str, int], key: str) -> float:
        n = sum(v for k, v in counts.items() if k != "passed")
        return counts.get(key, 0) / n if n else 0.0


def _outcome(named: dict[str, dict], expected: str) -> tuple[str, str]:
    """("right" | "none" | "wrong", the misconceptions named) for one answer's diagnoses."""
    said = sorted({row["misconception"] for row in named.values()})
    if not said:
        return "none", ""
    if expected and said == [expected]:
        return "right", expected
    return "wrong", ", ".join(said)


def measure(lab: str, solution_run) -> Measure:
    """Leave-one-out over the catalogue and the independent wrong answers, from a quality run's results."""
    from coursetools.catalogue import read_catalogue

    out = Measure(lab)
    rows = table_entries(lab, solution_run.mutants)
    out.withheld = sum(not r["shown"] for r in rows)
    by_name = {r["name"]: r for r in rows}
    for r in rows:
        got, said = _outcome(diagnose.explain(r["cells"], rows, leave_out=r["name"]),
                             r["misconception"] if any(o["misconception"] == r["misconception"] and
                                                       o["name"] != r["name"] for o in rows) else "")
        out.loo[got] += 1
        if got == "wrong":
            out.wrong_cases.append(f"leave-one-out {r['name']}: named {said}")
    expect = {e.name: e.expect for e in read_catalogue("wrong", lab)}
    for w in getattr(solution_run, "wrong", []):
        if w.broken or w.crashed:
            continue
        if not w.failed:
            out.written["passed"] += 1
            out.wrong_cases.append(f"written {w.name}: passed every test (a wrong answer the tests miss)")
            continue
        target = by_name.get(expect.get(w.name, ""), {}).get("misconception", expect.get(w.name, ""))
        got, said = _outcome(diagnose.explain(w.fingerprints, rows), target)
        out.written[got] += 1
        if got == "wrong":
            out.wrong_cases.append(f"written {w.name}: named {said}, expected {target or 'none'}")
    return out


def format_measures(measures: list[Measure]) -> str:
    head = (f"{'lab':<22}{'leave-one-out right/none/wrong':>32}{'written right/none/wrong':>28}"
            f"{'missed':>8}{'withheld':>10}")
    lines = ["diagnosis (share of failing answers; 'wrong' must stay under 5%)", head, "-" * len(head)]

    def cell(c):
        n = sum(v for k, v in c.items() if k != "passed")
        return f"{c['right']}/{c['none']}/{c['wrong']} of {n} ({100 * Measure.share(c, 'wrong'):.0f}% wrong)"
    for m in measures:
        lines.append(f"{m.lab:<22}{cell(m.loo):>32}{cell(m.written):>28}{m.written['passed']:>8}{m.withheld:>10}")
        lines += [f"{'':<22}{w}" for w in m.wrong_cases[:8]]
    lines.append("  missed = independently written wrong answers that pass every test; withheld = catalogue rows "
                 "whose words quote a hidden test's literal, never shown")
    return "\n".join(lines)
