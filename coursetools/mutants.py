"""Mutants and alternatives: answers that must lose points, and answers that must not.

Both come from the lab's catalogues (`coursetools/catalogue.py` reads them):
`tests/fixtures/mutants/<lab>.md` and `tests/fixtures/alternatives/<lab>.md`.
`evaluate_solution` runs the solution notebook once in one kernel, checks it scores
full marks, then for each entry executes its source (redefining one answer cell), re-runs
every test cell and restores the solution. A mutant is caught when every grade_id it
names loses its points and the kernel survived; an alternative holds when no test
cell loses points.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from autograder import notebooks as nbs
from autograder import settings
from coursetools.catalogue import Entry, read_catalogue
from coursetools.execute import DeadKernelError, KernelSession

Mutant = Entry


def _load(kind: str, lab: str, strict: bool) -> list[Entry]:
    entries = read_catalogue(kind, lab)
    bad = [e for e in entries if e.error]
    if strict and bad:
        raise ValueError("\n".join(f"{e.where}: {e.error}" for e in bad))
    return entries


def load_mutants(lab: str, strict: bool = True) -> list[Entry]:
    return _load("mutants", lab, strict)


def load_alternatives(lab: str, strict: bool = True) -> list[Entry]:
    return _load("alternatives", lab, strict)


@dataclass
class MutantResult:
    name: str
    must_fail: tuple[str, ...]
    failed: tuple[str, ...]  # every test cell that lost points
    crashed: bool = False  # the kernel died: does not count as caught
    broken: str = ""  # the mutant's own source raised when defined

    @property
    def caught(self) -> bool:
        return not self.crashed and not self.broken and bool(self.must_fail) and \
            all(g in self.failed for g in self.must_fail)


@dataclass
class SolutionRun:
    lab: str
    seconds: float = 0.0
    score: float = 0.0
    max_score: float = 0.0
    cell_errors: list[str] = field(default_factory=list)  # any cell that failed in the solution
    test_scores: list[nbs.CellScore] = field(default_factory=list)
    rerun_problems: list[str] = field(default_factory=list)  # test cells that are not self-contained
    skipped_gpu: int = 0
    mutants: list[MutantResult] = field(default_factory=list)
    alternatives: list[MutantResult] = field(default_factory=list)  # `failed` must stay empty
    mutant_seconds: float = 0.0
    executed_path: str = ""


def evaluate_solution(lab: str, params: dict | None = None, threads: int | None = None,
                      with_mutants: bool = True) -> SolutionRun:
    src = nbs.read(settings.solution_notebook(lab))
    nb = nbs.inject_parameters(nbs.clear_outputs(src), params or {})
    run = SolutionRun(lab)
    session = KernelSession(nb, settings.solution_notebook(lab).parent, threads)
    session.start()
    try:
        run.seconds = session.run_notebook()
        out = settings.EXECUTED / "solutions" / f"{lab}.ipynb"
        nbs.write(nb, out)
        run.executed_path = str(out)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and any(o.output_type == "error" for o in cell.outputs):
                run.cell_errors.append(f"cell {i} ({nbs.grade_id(cell) or 'ungraded'}): "
                                       + _error_line(cell))
        run.test_scores = [nbs.score_test_cell(c) for c in nb.cells if nbs.is_test(c)]
        run.score = sum(s.score for s in run.test_scores)
        run.max_score = sum(s.max_score for s in run.test_scores)
        run.skipped_gpu = nbs.count_skips(nb)
        if not with_mutants:
            return run
        t0 = time.perf_counter()
        tests = [(nbs.grade_id(c), c.source) for c in nb.cells if nbs.is_test(c)]
        answers = [c.source for c in nb.cells if nbs.is_solution(c)]
        session.run_source(DRIVER)
        # Baseline: the tests must pass again when re-run; otherwise they depend
        # on state from other cells and mutant results would mean nothing.
        for gid, ok, msg in _drive(session, "", tests, answers)[1]:
            if not ok:
                run.rerun_problems.append(f"{gid}: {msg}")
        entries = [(run.mutants, m) for m in load_mutants(lab)] + \
            [(run.alternatives, a) for a in load_alternatives(lab)]
        for results, mutant in entries:
            result = MutantResult(mutant.name, mutant.must_fail, ())
            try:
                broken, outcomes = _drive(session, mutant.source, tests, answers)
                result.broken = broken
                result.failed = tuple(gid for gid, ok, _ in outcomes if not ok)
            except DeadKernelError:
                result.crashed = True
                session.nb = nbs.inject_parameters(nbs.clear_outputs(src), params or {})
                session.restart()
                session.run_notebook()
                session.run_source(DRIVER)
            results.append(result)
        run.mutant_seconds = time.perf_counter() - t0
    finally:
        session.stop()
    return run


# Runs in the lab's kernel: define a mutant, run every test cell's source the way
# nbgrader scores a cell (an exception or any stderr output loses the points;
# stderr matching nbgrader's IgnorePattern is forgiven), then put the right
# answers back, all in one round trip. Returns JSON on stdout.
DRIVER = r"""
def __course_quality_drive(mutant, tests, answers, ignore):
    import contextlib, io, json, re, sys, traceback
    ip = get_ipython()

    def run(src):
        # Register the source as IPython does for a cell, so inspect.getsource and
        # @triton.jit can read what is defined here.
        import linecache
        code = ip.transform_cell(src)
        name = f"<course-quality-{len(linecache.cache)}-{id(code)}>"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        err, out = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                exec(compile(code, name, "exec"), ip.user_ns)
        except BaseException as exc:
            return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        text = err.getvalue()
        if text and not (ignore and re.search(ignore, text)):
            return "wrote to stderr: " + text[:120]
        return ""

    broken = run(mutant) if mutant else ""
    outcomes = [] if broken else [(gid, *(lambda m: (not m, m))(run(src))) for gid, src in tests]
    for src in answers:
        run(src)
    sys.__stdout__.flush()
    print(json.dumps({"broken": broken, "outcomes": outcomes}))
"""


def _drive(session: KernelSession, mutant: str, tests: list, answers: list) -> tuple[str, list]:
    import json

    call = f"__course_quality_drive({mutant!r}, {tests!r}, {answers!r}, {settings.IGNORE_STDERR!r})"
    cell = session.run_source(call)
    text = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
    errors = [o for o in cell.outputs if o.output_type == "error"]
    if errors or not text.strip():
        raise RuntimeError(f"the quality driver failed in the kernel: {errors[0].evalue if errors else 'no output'}")
    data = json.loads(text.strip().splitlines()[-1])
    return data["broken"], [tuple(x) for x in data["outcomes"]]


def _error_line(cell) -> str:
    for o in cell.outputs:
        if o.output_type == "error":
            return f"{o.ename}: {(o.evalue or '').strip().splitlines()[0] if o.evalue else ''}"
    return ""
