"""Lab quality, measured: for every lab in solutions/

1. the solution runs top to bottom and its hand-in autogrades to full marks;
2. the untouched student notebook autogrades to 0;
3. every mutant loses points on the test it names, without crashing the kernel;
4. every correct alternative keeps full marks, in the kernel and through the real grader, and so does the
   solution made untidy as learners' hand-ins are (coursetools/honest.py: scratch cells, stderr, logging,
   warnings, an unused helper beside a constrained function);
5. labs/ equals a fresh regeneration from solutions/.

Work runs as independent jobs in a process pool (one job = one kernel or one
nbgrader run), so the whole course fits the CI budget on 2 cores.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from autograder import settings


@dataclass
class GradingRun:
    lab: str
    seconds: float = 0.0
    solution: object = None  # grade.SubmissionGrade of the filled-in student notebook
    blank: object = None  # grade.SubmissionGrade of the untouched student notebook
    # (names of the alternatives in one hand-in, its grade.SubmissionGrade): at most one alternative per answer cell
    alternatives: list = field(default_factory=list)
    untidy: object = None  # grade.SubmissionGrade of the solution made untidy (coursetools/honest.py)
    out_of_sync: str = ""


@dataclass
class CourseRun:
    path: str
    seconds: float = 0.0
    error: str = ""
    skipped_gpu: int = 0


@dataclass
class LabQuality:
    lab: str
    solution: object = None  # mutants.SolutionRun
    grading: GradingRun | None = None
    errors: list[str] = field(default_factory=list)  # a job that crashed
    diagnosis: object = None  # coursetools.diagnosis.Measure, from the solution run's results

    @property
    def seconds(self) -> float:
        return (self.solution.seconds + self.solution.mutant_seconds if self.solution else 0) + \
            (self.grading.seconds if self.grading else 0)

    def untested(self) -> list[str]:
        """Graded tests that no mutant fails (a mutant runs only the tests it names: the tests no mutant names)."""
        if not self.solution:
            return []
        failed = {g for m in self.solution.mutants for g in m.failed if not m.crashed}
        return [s.grade_id for s in self.solution.test_scores if s.grade_id not in failed]

    def problems(self) -> dict[str, list[str]]:
        """check name -> what is wrong (empty lists mean the check passed)."""
        p: dict[str, list[str]] = {"solution": [], "blank": [], "mutants": [], "alternatives": [], "sync": [],
                                   "time": [], "judged": [], "branches": [], "diagnosis": []}
        p["solution"] += self.errors
        s, g = self.solution, self.grading
        if s:
            p["solution"] += [f"solution notebook cell failed: {e}" for e in s.cell_errors]
            p["solution"] += [f"solution notebook test cell lost its points: {c.grade_id}: {c.error}"
                              for c in s.test_scores if c.score < c.max_score and not s.cell_errors]
            p["solution"] += [f"test cell is not re-runnable on its own (uses state of other cells?): {e}"
                              for e in s.rerun_problems]
            known = settings.UNJUDGED_KNOWN.get(self.lab, {})
            p["judged"] += [f"test cell with nothing the judge compares (its verdict would be the learner "
                            f"process's own): {gid}" for gid in s.unjudged if gid not in known]
            b = s.branches or {}
            allowed = settings.UNREACHED_KNOWN.get(self.lab, {})
            p["branches"] += [f"a branch of the solution no hidden test reaches (a wrong answer there passes): {m}"
                              for m in b.get("missed", []) if m not in allowed and "*" not in allowed]
            p["branches"] += [f"the branch count stopped in a hidden test: {e}" for e in b.get("errors", [])]
            if "error" in b:
                p["branches"].append(b["error"])
            if s.seconds > 3 * settings.solution_budget_s(self.lab):  # a budget is reported; only 3x fails
                p["time"].append(f"solution took {s.seconds:.0f} s, more than three times its budget of "
                                 f"{settings.solution_budget_s(self.lab)} s")
            for m in s.mutants:
                if m.caught:
                    continue
                if m.crashed:
                    why = "crashed the kernel (a crash is not a catch)"
                elif m.broken:
                    why = f"its own source fails to run: {m.broken}"
                else:
                    missed = [x for x in m.must_fail if x not in m.failed]
                    why = (f"did not lose points on {', '.join(missed)} "
                           f"(tests it failed: {', '.join(m.failed) or 'none'})")
                p["mutants"].append(f"mutant {m.name} {why}")
            for a in s.alternatives:
                if a.crashed or a.broken or a.failed:
                    why = ("crashed the kernel" if a.crashed else f"its own source fails to run: {a.broken}"
                           if a.broken else f"lost points on {', '.join(a.failed)}")
                    p["alternatives"].append(f"alternative {a.name} (a right answer) {why}")
        d = self.diagnosis
        if d is not None:  # the independent wrong answers: each must lose points, and none may be misdiagnosed
            p["diagnosis"] += [w for w in d.wrong_cases if w.startswith("written ")]
        if g:
            if g.solution is None or g.solution.status != "graded" or g.solution.score != g.solution.max_score:
                got = f"{g.solution.score:g}/{g.solution.max_score:g} ({g.solution.status})" if g.solution else "none"
                lost = [f"{k} {v[0]:g}/{v[1]:g}" for k, v in (g.solution.cells if g.solution else {}).items()
                        if v[0] < v[1]]
                p["solution"].append(f"filled-in hand-in autograded to {got}, expected full marks; lost: {lost}")
            if g.blank is None or g.blank.status != "graded" or g.blank.score != 0:
                earned = [f"{k} {v[0]:g}" for k, v in (g.blank.cells if g.blank else {}).items() if v[0] > 0]
                p["blank"].append(f"untouched hand-in autograded to {g.blank.score if g.blank else '?'}, expected 0; "
                                  f"tests that give points for no work: {earned}")
            for names, r in g.alternatives:
                if r is None or r.status != "graded" or r.score != r.max_score:
                    lost = [f"{k} {v[0]:g}/{v[1]:g}" for k, v in (r.cells if r else {}).items() if v[0] < v[1]]
                    p["alternatives"].append(
                        f"a hand-in with the alternatives {', '.join(names)} autograded to "
                        f"{f'{r.score:g}/{r.max_score:g} ({r.status})' if r else 'nothing'}, expected full marks; "
                        f"lost: {lost}")
            u = g.untidy
            if u is None or u.status != "graded" or u.score != u.max_score:
                lost = [f"{k} {v[0]:g}/{v[1]:g}" for k, v in (u.cells if u else {}).items() if v[0] < v[1]]
                p["alternatives"].append(
                    f"the solution made untidy (coursetools/honest.py: scratch cells, stderr, logging, warnings, "
                    f"a helper beside a constrained function) autograded to "
                    f"{f'{u.score:g}/{u.max_score:g} ({u.status})' if u else 'nothing'}, expected full marks; "
                    f"lost: {lost}")
            if g.out_of_sync:
                p["sync"].append(g.out_of_sync)
        return p


@dataclass
class QualityReport:
    labs: list[LabQuality]
    course: list[CourseRun]
    seconds: float
    reused: list[str] = field(default_factory=list)  # labs and walkthroughs whose cached result was reused
    diagnosis: list = field(default_factory=list)  # coursetools.diagnosis.Measure per lab


# ---- jobs (module-level so a spawned worker can run them) ----

def _solution_job(lab: str, params: dict, threads: int):
    from coursetools.mutants import evaluate_solution
    return evaluate_solution(lab, params, threads)


def _grading_job(lab: str, params: dict, threads: int) -> GradingRun:
    import os

    from autograder import grade
    from autograder import notebooks as nbs
    from coursetools.execute import kernel_env
    from coursetools.honest import untidy_handin
    from coursetools.release import out_of_sync

    os.environ.update(kernel_env(threads))
    t0 = time.perf_counter()
    run = GradingRun(lab)
    course = settings.SCRATCH / "quality" / lab
    fresh = grade.prepare_course(lab, course)
    run.out_of_sync = out_of_sync(lab, fresh)
    if params:
        fresh = grade.prepare_course(lab, course, params)
    student = nbs.read(fresh)
    handins = course.parent / f"{lab}-handins"
    filled = nbs.fill_solutions(student, nbs.read(settings.solution_notebook(lab)))
    nbs.write(filled, handins / "solution" / f"{lab}.ipynb")
    nbs.write(student, handins / "blank" / f"{lab}.ipynb")
    nbs.write(untidy_handin(filled), handins / "untidy" / f"{lab}.ipynb")
    groups = alternative_handins(lab, student)
    for k, (_, nb) in enumerate(groups):
        nbs.write(nb, handins / f"alternatives{k + 1}" / f"{lab}.ipynb")
    sids = ["solution", "blank", "untidy"] + [f"alternatives{k + 1}" for k in range(len(groups))]
    subs = {sid: handins / sid / f"{lab}.ipynb" for sid in sids}
    results = {r.student_id: r for r in grade.grade_prepared(lab, subs, course, jobs=threads)}
    run.solution, run.blank, run.untidy = results.get("solution"), results.get("blank"), results.get("untidy")
    run.alternatives = [(names, results.get(f"alternatives{k + 1}")) for k, (names, _) in enumerate(groups)]
    run.seconds = time.perf_counter() - t0
    return run


def alternative_handins(lab: str, student) -> list[tuple[list[str], object]]:
    """Hand-ins that carry the lab's correct alternatives, as few as possible: each holds at most
    one alternative per answer cell, the other cells answered as the solution does."""
    from autograder import notebooks as nbs
    from coursetools.catalogue import defined_names
    from coursetools.demo import replace_answer
    from coursetools.mutants import load_alternatives

    full = nbs.fill_solutions(student, nbs.read(settings.solution_notebook(lab)))
    groups: list[tuple[list[str], object, set]] = []
    for alt in load_alternatives(lab):
        cell = next(nbs.grade_id(c) for c in full.cells
                    if nbs.is_solution(c) and alt.replaces in defined_names(c.source))
        group = next((g for g in groups if cell not in g[2]), None)
        if group is None:
            group = ([], full, set())
            groups.append(group)
        group[0].append(alt.name)
        group[2].add(cell)
        groups[groups.index(group)] = (group[0], replace_answer(group[1], alt.replaces, alt.source, alt.where),
                                       group[2])
    return [(names, nb) for names, nb, _ in groups]


def _course_job(path: str, params: dict, threads: int) -> CourseRun:
    from autograder import notebooks as nbs
    from coursetools.execute import run_papermill

    out = settings.EXECUTED / "course" / Path(path).name
    run = CourseRun(path)
    t0 = time.perf_counter()
    try:
        run_papermill(Path(path), out, params, threads)
        run.skipped_gpu = nbs.count_skips(nbs.read(out))
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        run.error = str(exc).strip()[-1500:]
    run.seconds = time.perf_counter() - t0
    return run


# ---- the cache: a lab whose every input is unchanged is not run again ----
#
# A clean result (a lab with no problem, a walkthrough that ran) is kept outside the checkout, under a hash of
# everything that decides it: the lab's notebooks, data files and catalogues (or the walkthrough), the grader,
# coursetools and labkit, the requirements and the installed torch, the run's parameters and whether the sandbox
# is there. A fresh clone on the same machine (CI after a session) reuses it; a change anywhere in those runs
# the lab again. COURSE_QUALITY_CACHE=<dir> moves it, COURSE_QUALITY_CACHE=off turns it off.

def cache_dir() -> Path | None:
    import os

    where = os.environ.get("COURSE_QUALITY_CACHE", "")
    if where.lower() in ("off", "0", "no", "false"):
        return None
    if where.lower() in ("", "on", "1", "yes", "true"):  # a switch, not a folder named "on" in the checkout
        return Path.home() / ".cache" / "pytorch-internals-course" / "quality"
    return Path(where).expanduser().resolve()


def _common_hash(params: dict) -> str:
    import hashlib
    import importlib.metadata
    import sys

    from autograder import sandbox
    from autograder.reference import grader_files

    h = hashlib.sha256()  # what can change a grade (the reference's key), and the quality run's own code
    files = grader_files() + sorted(p for p in (settings.ROOT / "coursetools").rglob("*")
                                    if p.is_file() and "__pycache__" not in p.parts)
    files += [settings.ROOT / "requirements.lock", settings.ROOT / "pyproject.toml"]
    for f in files:
        if f.exists():
            h.update(str(f.relative_to(settings.ROOT)).encode() + b"\0" + f.read_bytes())
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        torch_version = "?"
    h.update(repr((sys.version, torch_version, sorted(params.items()), sandbox.available(),
                   settings.WARM_SANDBOX)).encode())
    return h.hexdigest()


def _task_hash(common: str, kind: str, key: str) -> str:
    import hashlib

    h = hashlib.sha256(common.encode() + kind.encode())
    if kind == "course":
        paths = [Path(key)]
    else:
        paths = sorted(p for d in (settings.SOLUTIONS / key, settings.LABS / key) if d.exists()
                       for p in d.rglob("*") if p.is_file()) + \
            [settings.MUTANTS / f"{key}.md", settings.ALTERNATIVES / f"{key}.md", settings.WRONG / f"{key}.md"]
    for p in paths:
        if p.exists():
            name = p.relative_to(settings.ROOT) if p.is_relative_to(settings.ROOT) else p.name
            h.update(str(name).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:32]


def _cached(folder: Path | None, kind: str, key: str, digest: str):
    import pickle

    if folder is None:
        return None
    path = folder / f"{kind}-{Path(key).stem}-{digest}.pickle"
    try:
        return pickle.loads(path.read_bytes()) if path.exists() else None
    except Exception:  # noqa: BLE001 - a damaged or older entry is run again
        return None


def _store(folder: Path | None, kind: str, key: str, digest: str, result) -> None:
    import pickle

    if folder is None or result is None:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{kind}-{Path(key).stem}-{digest}.tmp"
        tmp.write_bytes(pickle.dumps(result))
        tmp.replace(folder / f"{kind}-{Path(key).stem}-{digest}.pickle")
    except OSError:
        pass  # a cache that cannot be written only costs time


def run_all(labs: list[str] | None = None, course: bool | list[Path] = True, jobs: int | None = None,
            params: dict | None = None, progress=print) -> QualityReport:
    labs = settings.labs() if labs is None else labs
    jobs = jobs or settings.jobs()
    params = settings.run_parameters() if params is None else params
    threads = max(1, (multiprocessing.cpu_count() or 1) // jobs)
    tasks = []
    for lab in labs:
        tasks += [("grading", lab, _grading_job), ("solution", lab, _solution_job)]
    if course:
        tasks += [("course", str(p), _course_job) for p in settings.course_notebooks()
                  if course is True or p in course]
    t0 = time.perf_counter()
    results: dict[tuple[str, str], object] = {}
    errors: dict[str, list[str]] = {lab: [] for lab in labs}
    course_runs = []
    folder = cache_dir()
    common = _common_hash(params) if folder is not None else ""
    digests = {(kind, key): _task_hash(common, kind, key) for kind, key, _ in tasks} if folder is not None else {}
    reused: set[tuple[str, str]] = set()
    for kind, key, _ in tasks:
        hit = _cached(folder, kind, key, digests.get((kind, key), ""))
        if hit is not None:
            reused.add((kind, key))
            if kind == "course":
                hit.path = key
                course_runs.append(hit)
            else:
                results[(kind, key)] = hit
            progress(f"  reused: {kind:<8} {Path(key).name} (nothing it depends on changed)")
    tasks = [t for t in tasks if (t[0], t[1]) not in reused]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(fn, key, params, threads): (kind, key) for kind, key, fn in tasks}
        for fut, (kind, key) in futures.items():
            try:
                res = fut.result()
            except Exception:  # noqa: BLE001 - one broken lab must not hide the others
                msg = f"{kind} job crashed:\n{traceback.format_exc(limit=3)}"
                if kind == "course":
                    res = CourseRun(key, error=msg)
                else:
                    errors[key].append(msg)
                    res = None
            if kind == "course":
                course_runs.append(res)
            else:
                results[(kind, key)] = res
            progress(f"  done: {kind:<8} {Path(key).name}")
    report = QualityReport(
        [LabQuality(lab, results.get(("solution", lab)), results.get(("grading", lab)), errors[lab])
         for lab in labs], course_runs, time.perf_counter() - t0)
    report.reused = sorted(Path(key).name for _, key in reused)
    for q in report.labs:  # only a clean lab is kept: a failure always runs again
        if not any(q.problems().values()):
            for kind, result in (("solution", q.solution), ("grading", q.grading)):
                if (kind, q.lab) not in reused:
                    _store(folder, kind, q.lab, digests.get((kind, q.lab), ""), result)
    from autograder import diagnose
    from coursetools import diagnosis

    for q in report.labs:  # each lab's diagnosis table for `make grade`, and how well it diagnoses
        if q.solution and q.solution.mutants:
            diagnose.save(q.lab, diagnosis.table_entries(q.lab, q.solution.mutants))
            q.diagnosis = diagnosis.measure(q.lab, q.solution)
            report.diagnosis.append(q.diagnosis)
    for c in course_runs:
        if not c.error and ("course", c.path) not in reused and c.seconds <= 3 * settings.NOTEBOOK_BUDGET_S:
            _store(folder, "course", c.path, digests.get(("course", c.path), ""), c)
    return report


def format_table(report: QualityReport) -> str:
    head = (f"{'lab':<22}{'solution':>10}{'run':>10}{'blank':>7}{'mutants':>9}{'alternatives':>14}{'unjudged':>10}"
            f"{'branches':>10}{'seconds':>9}{'GPU skipped':>13}  status")
    lines = ["lab quality", head, "-" * len(head)]
    for q in report.labs:
        s, g = q.solution, q.grading
        sol = f"{g.solution.score:g}/{g.solution.max_score:g}" if g and g.solution else "-"
        ran = f"{s.score:g}/{s.max_score:g}" if s else "-"
        blank = f"{g.blank.score:g}" if g and g.blank else "-"
        mut = f"{sum(m.caught for m in s.mutants)}/{len(s.mutants)}" if s else "-"
        alts = f"{sum(not (a.failed or a.crashed or a.broken) for a in s.alternatives)}/{len(s.alternatives)}" \
            if s else "-"
        bad = [k for k, v in q.problems().items() if v]
        status = "ok" if not bad else "FAIL: " + ", ".join(bad)
        unjudged = f"{len(s.unjudged)}" if s else "-"
        b = (s.branches if s else None) or {}
        branches = f"{b['reached']}/{b['total']}" if "total" in b else "-"
        lines.append(f"{q.lab:<22}{sol:>10}{ran:>10}{blank:>7}{mut:>9}{alts:>14}{unjudged:>10}{branches:>10}"
                     f"{q.seconds:>9.1f}{(s.skipped_gpu if s else 0):>13}  {status}")
        if s and s.unjudged:
            lines.append(f"{'':<22}test cells with nothing judged: {', '.join(s.unjudged)}")
        if b.get("missed"):
            lines.append(f"{'':<22}branches the hidden tests never reach: {'; '.join(b['missed'][:12])}"
                         + (f"; and {len(b['missed']) - 12} more" if len(b["missed"]) > 12 else ""))
        untested = q.untested()
        if untested:
            lines.append(f"{'':<22}graded tests no mutant fails: {', '.join(untested)}")
    lines.append("  solution = the filled-in student notebook autograded by nbgrader; run = the solution "
                 "notebook's own test cells; alternatives = right answers written differently, full marks both in "
                 "the kernel and through the grader (the solution made untidy too, coursetools/honest.py); "
                 "unjudged = test cells whose reference runs give the judge "
                 "nothing to compare (settings.UNJUDGED_KNOWN lists the known ones and why); branches = branches "
                 "of the solution's answer functions the hidden tests reach (coursetools/branches.py)")
    if report.diagnosis:
        from coursetools.diagnosis import format_measures

        lines += ["", format_measures(report.diagnosis)]
    if report.course:
        lines += ["", "course notebooks", "-" * len(head)]
        for c in sorted(report.course, key=lambda c: c.path):
            status = "ok" if not c.error else "FAIL: " + c.error.splitlines()[-1][:80]
            lines.append(f"{Path(c.path).name:<32}{c.seconds:>9.1f} s  GPU skipped {c.skipped_gpu}  {status}")
    if report.reused:
        lines.append(f"reused from the cache (nothing they depend on changed; COURSE_QUALITY_CACHE=off runs them): "
                     f"{', '.join(sorted(set(report.reused)))}")
    lines.append(f"total {report.seconds:.1f} s wall with {settings.jobs()} job(s)")
    return "\n".join(lines)
