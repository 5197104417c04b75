"""Mutants and alternatives: answers that must lose points, and answers that must not.

Both come from the lab's catalogues (`coursetools/catalogue.py` reads them):
`tests/fixtures/mutants/<lab>.md` and `tests/fixtures/alternatives/<lab>.md`.
`evaluate_solution` runs the solution notebook once in one kernel, checks it scores
full marks, then for each entry executes its source (redefining one answer cell), re-runs
every test cell and restores the solution. The test cells run as the grader runs them: a
visible test in full, a hidden one as its probe (`autograder/probe.py`), with the lab's
interface observed, and a test keeps its points only when it finished cleanly *and* the
judge (`autograder/judge.py`) finds its observations equal to those of the solution's two
baseline runs. A mutant is caught when every grade_id it names loses its points and the
kernel survived; an alternative holds when no test cell loses points.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field

from autograder import notebooks as nbs
from autograder import screen, settings
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
    reasons: dict[str, str] = field(default_factory=dict)  # grade_id -> why it lost its points
    # grade_id -> how its run differed from the reference (judge.fingerprint; "" for a test it passed), for each
    # test it ran: the pattern `autograder/diagnose.py` recognises in a hand-in
    fingerprints: dict[str, str] = field(default_factory=dict)
    # grade_id -> labkit.testing.failure_signature of the message a visible test failed with (for Validate)
    visible: dict[str, str] = field(default_factory=dict)

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
    unjudged: list[str] = field(default_factory=list)  # test cells whose reference runs give the judge nothing
    skipped_gpu: int = 0
    mutants: list[MutantResult] = field(default_factory=list)
    alternatives: list[MutantResult] = field(default_factory=list)  # `failed` must stay empty
    wrong: list[MutantResult] = field(default_factory=list)  # settings.WRONG: run on every test, to be diagnosed
    mutant_seconds: float = 0.0
    executed_path: str = ""
    # which branches of the answers' functions the hidden tests reach (coursetools/branches.py)
    branches: dict = field(default_factory=dict)


def evaluate_solution(lab: str, params: dict | None = None, threads: int | None = None,
                      with_mutants: bool = True) -> SolutionRun:
    src = nbs.read(settings.solution_notebook(lab))
    nb = nbs.inject_parameters(nbs.clear_outputs(src), params or {})
    run = SolutionRun(lab)
    from autograder import compile as compile_stage

    if compile_stage.compiled_cells(src):  # C++ answers: the kernel's builds start from the shared headers
        compile_stage.prepare_headers()  # (sets COURSE_CPP_PCH, which the kernel inherits)
    # the kernel works in a scratch copy of the lab's folder: what the notebook writes (a file a cell saves)
    # must not land in solutions/, whose every file is released to learners and bound into sandboxes
    work = settings.SCRATCH / "solution-runs" / lab
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(settings.solution_notebook(lab).parent, work)
    session = KernelSession(nb, work, threads)
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
        tests = graded_tests(nb)
        answers = [c.source for c in nb.cells if nbs.is_solution(c)]
        session.run_source(DRIVER)
        # Baseline, twice: the tests must pass again when re-run (otherwise they depend on state from other
        # cells and mutant results would mean nothing), and what the two runs observe alike is compared exactly.
        names = interface_of(session)  # the lab's interface, read once
        base = _drive(session, "", tests, answers, mode="baseline", names=names)[1]
        again = _drive(session, "", tests, answers, mode="baseline", names=names)[1]
        for gid, ok, msg, *_ in base:
            if not ok:
                run.rerun_problems.append(f"{gid}: {msg}")
        run.unjudged = [gid for gid, _, _, judged, *_ in again if not judged]
        run.branches = _branches(session, tests, answers)
        # A mutant's test may run 5x the solution's time (at least 30 s, at most the grader's cell limit): a
        # wrong answer that never ends fails there, as the grader's cell limit fails it, without the wait. The
        # solution's time is its slowest run of the test, the notebook's first included: a test whose first run
        # builds what later runs reuse (lab 14's C++) gives a mutant, which builds its own, that much time.
        first = getattr(session, "cell_seconds", {})
        limits = [min(float(settings.CELL_TIMEOUT_S), max(30.0, 5 * max(a[5], b[5]), 3 * first.get(a[0], 0.0)))
                  for a, b in zip(base, again)]
        hidden_test = {gid: hidden for gid, _, hidden in tests}
        quick = [max(a[5], b[5]) <= FAMILY_TEST_S for a, b in zip(base, again)]
        from coursetools.diagnosis import families as answer_families

        families = answer_families(load_mutants(lab), [gid for gid, _, _ in tests])
        entries = [(run.mutants, m) for m in load_mutants(lab)] + \
            [(run.alternatives, a) for a in load_alternatives(lab)] + \
            [(run.wrong, w) for w in _load("wrong", lab, strict=True)]
        for results, mutant in entries:
            result = MutantResult(mutant.name, mutant.must_fail, ())
            # A mutant is judged on the tests it names (it is caught when it fails every one of them), so only
            # those run; an alternative must keep every test's points, so all of them run.
            # A mutant that passes a test it names runs again on every test, to say where it does fail.
            # A mutant also runs the other quick tests of its answer's family (diagnosis.families): the diagnosis
            # table then knows the whole pattern a learner with that mistake would show on them. A slow one (lab
            # 6's class is tested by many) is left out: a hand-in failing it is then not diagnosed, not misnamed.
            keep = [k for k, t in enumerate(tests) if results is not run.mutants or t[0] in mutant.must_fail
                    or (t[0] in families.get(mutant.replaces, ()) and quick[k])]
            try:
                broken_rules = screen.constraint_failures(answer_cells(nb, mutant))
                for subset in (keep, list(range(len(tests)))):
                    broken, outcomes = _drive(session, mutant.source, [tests[k] for k in subset], answers,
                                              [limits[k] for k in subset], names=names,
                                              seeds=[runner_seed(tests[k][0]) for k in subset])
                    result.broken = broken
                    result.reasons, result.fingerprints, result.visible = {}, {}, {}
                    for gid, ok, msg, passed, reason, _, fp, sig in outcomes:
                        if sig and not hidden_test.get(gid, True):
                            result.visible[gid] = sig
                        if gid in broken_rules or not passed:
                            result.reasons[gid] = broken_rules.get(gid) or (msg if not ok else reason)
                        result.fingerprints[gid] = f"constraint: {broken_rules[gid]}" if gid in broken_rules \
                            else "" if passed else fp
                    result.failed = tuple(result.reasons)
                    if broken or len(subset) == len(tests) or set(mutant.must_fail) <= set(result.failed):
                        break
            except DeadKernelError:
                result.crashed = True
                session.nb = nbs.inject_parameters(nbs.clear_outputs(src), params or {})
                session.restart()
                session.run_notebook()
                session.run_source(DRIVER)
                for _ in range(2):  # the reference runs lived in the kernel that died
                    _drive(session, "", tests, answers, mode="baseline", names=names)
            results.append(result)
        run.mutant_seconds = time.perf_counter() - t0
    finally:
        session.stop()
    return run


FAMILY_TEST_S = 0.5  # a test the solution passes in at most this many seconds runs for every mutant of its answer


def runner_seed(label: str) -> int:
    """The seed the grader's runner gives the test cell `label` (by grade_id, `sandbox_runner.cell_seed`)."""
    from autograder.sandbox_runner import cell_seed

    return cell_seed(0, label)


def answer_cells(nb, entry: Entry) -> list[dict]:
    """The answer cells as the grader assembles them for a hand-in made of the solution and this entry (with
    the constraints the instructor's cells declare), for `screen.constraint_failures`."""
    from autograder.run import constraint
    from coursetools.catalogue import defined_names

    return [{"kind": "answer", "label": nbs.grade_id(c), **constraint(c),
             "source": entry.source if entry.replaces in defined_names(c.source) else c.source}
            for c in nb.cells if nbs.is_solution(c)]


def graded_tests(nb) -> list[tuple[str, str, bool]]:
    """(grade_id, the source the grader runs, hidden) for each test cell: a hidden test as its probe."""
    from autograder.probe import probe
    from autograder.run import interface

    names = interface(nb)
    out = []
    for c in nb.cells:
        if nbs.is_test(c):
            hidden = "BEGIN HIDDEN TESTS" in c.source
            out.append((nbs.grade_id(c), probe(c.source, names).source if hidden else c.source, hidden))
    return out


# Runs in the lab's kernel: define a mutant, run every test cell's source the way the grader
# does (each test reseeded by its grade_id, the lab's interface observed by the sandbox runner's own Observer;
# an exception loses the points, output on stderr does not), then put the right answers back, all in one round
# trip. Returns JSON on stdout.
DRIVER = r"""
def __course_quality_drive(mutant, tests, answers, ignore, interface, recording, limits, mode, max_records, seeds=None):
    import contextlib, io, json, re, signal, sys, time, traceback
    from autograder import sandbox_runner as runner
    ip = get_ipython()
    # One observer for the kernel's life: a function the answers do not redefine (a labkit helper in the
    # interface) stays wrapped from the first run, and its wrapper records to this observer.
    observer = globals().setdefault("__course_quality_observer", runner.Observer(max_records))
    observer.configure(recording)
    # A mutant may rebind a name the tests use (a recorder, a helper of the set-up): the grader runs each hand-in
    # in a fresh process, so the kernel's names go back to what they were once this run is over.
    saved = dict(ip.user_ns)

    def alarm(signum, frame):
        raise runner.CellTimeout()

    signature = [""]  # labkit.testing.failure_signature of the last failed check's message

    def run(src, seed=None, limit=0):
        signature[0] = ""
        # Register the source as IPython does for a cell, so inspect.getsource and
        # @triton.jit can read what is defined here.
        import linecache
        code = ip.transform_cell(src)
        name = f"<course-quality-{len(linecache.cache)}-{id(code)}>"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        err, out = io.StringIO(), io.StringIO()
        if seed is not None:
            runner._reseed(seed)
        observer.take()
        observer.active, observer.depth = seed is not None, 0
        old = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                exec(compile(code, name, "exec"), ip.user_ns)
        except runner.CellTimeout:
            return f"CellTimeout: the test ran past {limit:.0f} s"
        except BaseException as exc:
            signature[0] = getattr(exc, "signature", "") if isinstance(getattr(exc, "signature", ""), str) else ""
            return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            observer.active = False
        return ""  # stderr (a warning, a log line) never fails a test: only an exception does

    def observe():
        observer.watch()
        ip.user_ns[runner.OBSERVE] = observer.observe
        ip.user_ns[runner.QUIET] = observer.quiet
        for name in interface:
            observer.wrap(ip.user_ns, name)

    broken = run(mutant) if mutant else ""
    outcomes = []
    if not broken:
        observe()
        stopped = False
        for k, (gid, src, _) in enumerate(tests):
            if stopped:  # the grader stops a hand-in's run at a cell that times out
                outcomes.append((gid, False, "not run: an earlier test ran past its time", [], 0, 0.0, ""))
                continue
            t0 = time.perf_counter()
            msg = run(src, seed=seeds[k] if seeds else runner.cell_seed(0, gid), limit=limits[k])
            observed = observer.observed
            obs, cut = observer.take()
            if mode == "baseline" and not msg and (cut or observed > runner.OBSERVED_PER_CELL):
                # the grader records that much and no more: a check past it would be judged by nothing
                msg = (f"the solution's run made {len(obs) + cut} calls into the lab (the grader records "
                       f"{max_records}) and {observed} __observe__ values (it compares "
                       f"{runner.OBSERVED_PER_CELL}): checks past the cap are not judged; test less, or earlier")
            stopped = msg.startswith("CellTimeout")
            outcomes.append((gid, not msg, msg, obs, cut, time.perf_counter() - t0, signature[0]))
    for src in answers:
        run(src)
    for name in [k for k in ip.user_ns if k not in saved and not k.startswith("__course_quality")]:
        del ip.user_ns[name]
    for name, value in saved.items():
        if not name.startswith("__course_quality") and ip.user_ns.get(name, saved) is not value:
            ip.user_ns[name] = value
    # The observations stay in the kernel (megabytes for some labs): the solution's two runs are kept as the
    # reference, and each later run is judged here by the grader's own judge; only verdicts travel.
    runs = globals().setdefault("__course_quality_runs", [])
    if mode == "baseline":
        runs.append(outcomes)
        globals()["__course_quality_ref"] = None
        # what the judge can compare in each test: nothing when the runs observed nothing, or took different
        # paths, or agree on no observation (compared in kind only)
        from autograder import judge
        previous = {o[0]: o for o in runs[-2]} if len(runs) > 1 else {}
        verdicts = []
        for gid, ok, msg, obs, cut, sec, _ in outcomes:
            judged = bool(obs)
            if judged and gid in previous:
                judged = judge.judged(judge.reference_cell(previous[gid][3], obs, previous[gid][4], cut))
            verdicts.append((gid, ok, msg, judged, "", sec, "", ""))
    else:
        from autograder import judge
        hidden = {gid: h for gid, _, h in tests}
        ref = globals().get("__course_quality_ref")
        if ref is None:
            ref = {}
            for (gid, _, _, obs, cut, _, _), (_, _, _, obs2, cut2, _, _) in zip(runs[-2], runs[-1]):
                ref[gid] = judge.reference_cell(obs, obs2, cut, cut2)
            globals()["__course_quality_ref"] = ref
        verdicts = []
        for gid, ok, msg, obs, cut, sec, sig in outcomes:
            record = {"error": None if ok else {"ename": msg.split(":")[0], "evalue": msg}, "obs": obs,
                      "obs_cut": cut}
            v = judge.judge_cell(gid, hidden[gid], ref[gid], record)
            verdicts.append((gid, ok, msg, v.passed, v.reason, sec,
                             "" if v.passed else judge.fingerprint(ref[gid], record), sig))
    sys.__stdout__.flush()
    print(json.dumps({"broken": broken, "outcomes": verdicts}))
"""


COVER = r"""
def __course_quality_cover(tests, answers):
    import contextlib, io, json, linecache, sys
    from autograder import sandbox_runner as runner
    from coursetools import branches
    ip = get_ipython()
    sources = {}
    for k, src in enumerate(answers):
        code = ip.transform_cell(src)
        name = f"<course-quality-answer-{k}>"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        exec(compile(code, name, "exec"), ip.user_ns)
        sources[name] = code
    # the hidden tests run as the grader runs them, as probes that hand their checks to __observe__, which
    # runs them when active (the driver's observer, when it ran; what it records is dropped)
    observer = globals().get("__course_quality_observer") or runner.Observer(100_000)
    ip.user_ns[runner.OBSERVE] = observer.observe
    ip.user_ns[runner.QUIET] = observer.quiet
    recorder = branches.Recorder(set(sources))
    errors = []
    for gid, src, hidden in tests:
        if not hidden:
            continue
        runner._reseed(runner.cell_seed(0, gid))
        code = ip.transform_cell(src)
        name = f"<course-quality-cover-{gid}>"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            observer.take()
            observer.active, observer.depth = True, 0
            try:
                with recorder:
                    exec(compile(code, name, "exec"), ip.user_ns)
            except BaseException as e:  # the count is then short: say which test stopped
                errors.append(f"{gid}: {type(e).__name__}: {str(e)[:200]}")
            finally:
                observer.active = False
                observer.take()
    sys.__stdout__.flush()
    print(json.dumps({**branches.report(sources, recorder), "errors": errors}))
"""


def _branches(session: KernelSession, tests: list, answers: list) -> dict:
    """Run the hidden tests once more with the answers traced: which of their branches are reached."""
    import json

    session.run_source(COVER)
    session.client.timeout = settings.CELL_TIMEOUT_S * max(1, len(tests))
    try:
        cell = session.run_source(f"__course_quality_cover({tests!r}, {answers!r})")
    finally:
        session.client.timeout = settings.CELL_TIMEOUT_S
    text = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
    try:
        return json.loads(text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": "the branch count failed in the kernel"}


def _drive(session: KernelSession, mutant: str, tests: list, answers: list,
           limits: list[float] | None = None, mode: str = "judge", names: list[str] | None = None,
           seeds: list[int] | None = None) -> tuple[str, list]:
    """Run the driver once: (broken, [(grade_id, finished cleanly, message, judge's verdict, its reason,
    seconds, judge.fingerprint of a failed test, the signature of a failed labkit check's message)]).
    mode "baseline" keeps the run in the kernel as one of the solution's two reference runs (no
    verdict); "judge" judges the run against them. `limits`: seconds each test may take; `seeds`: each test's
    seed, when `tests` is a subset of the notebook's (a test is reseeded as it was in the reference runs)."""
    import json

    from autograder.run import MAX_OBSERVATIONS  # what the grader records of one cell

    limits = limits or [float(settings.CELL_TIMEOUT_S)] * len(tests)
    call = (f"__course_quality_drive({mutant!r}, {tests!r}, {answers!r}, {settings.IGNORE_STDERR!r}, "
            f"{names if names is not None else interface_of(session)!r}, {settings.RECORDING!r}, "
            f"{limits!r}, {mode!r}, {MAX_OBSERVATIONS!r}, {seeds!r})")
    session.client.timeout = int(sum(limits)) + settings.CELL_TIMEOUT_S
    try:
        cell = session.run_source(call)
    finally:
        session.client.timeout = settings.CELL_TIMEOUT_S
    text = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
    errors = [o for o in cell.outputs if o.output_type == "error"]
    if errors or not text.strip():
        raise RuntimeError(f"the quality driver failed in the kernel: {errors[0].evalue if errors else 'no output'}")
    data = json.loads(text.strip().splitlines()[-1])
    return data["broken"], [tuple(x) for x in data["outcomes"]]


def interface_of(session: KernelSession) -> list[str]:
    from autograder.run import interface

    return interface(session.nb)


def _error_line(cell) -> str:
    for o in cell.outputs:
        if o.output_type == "error":
            return f"{o.ename}: {(o.evalue or '').strip().splitlines()[0] if o.evalue else ''}"
    return ""
