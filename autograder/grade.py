"""`make grade`: from a folder or LMS zip of hand-ins to the gradebook, grades.csv,
feedback, a class report and an audit log.

Stages (each its own module):
1. collect (`collect.py`): stage one checked notebook per student; malformed files,
   unknown students and unsafe zips get a status and are never run;
2. run (`run.py`): every hand-in in its own bubblewrap sandbox, JOBS at a
   time, each run stored under `<course>/runs/<lab>/` as it finishes, so a killed
   `make grade` resumes where it stopped (`--force` runs everything again);
3. score (`record.py`): nbgrader's autograde reads the stored runs and writes the
   gradebook, in this process's child, one hand-in at a time; manual scores given in
   formgrader stay (nbgrader keeps a grade's manual score over its auto score);
4. report (`report.py`): grades.csv, feedback/<student>/<lab>.html, report.html.

The lab-quality check calls `autograde`, the same stages 2 and 3 on a scratch course.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import nbformat

from autograder import notebooks as nbs
from autograder import sandbox, settings, sheets
from autograder.status import Status, kind_of, status

COURSE_CONFIG = """\
# A grading course; everything but the directories comes from the course's own
# nbgrader_config.py.
c = get_config()  # noqa: F821
load_subconfig({main!r})  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///" + {db!r}
# Hand-ins ran in the sandbox already (autograder/run.py); nbgrader scores the stored runs.
from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades
from nbconvert.preprocessors import ClearMetadataPreprocessor
from autograder.record import PrecomputedExecute
c.Autograde.autograde_preprocessors = [PrecomputedExecute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                       SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
c.PrecomputedExecute.runs_dir = {runs!r}
c.AssignLatePenalties.plugin_class = "autograder.late.PolicyPenalty"
"""


@dataclass
class SubmissionGrade:
    student_id: str
    score: float
    max_score: float
    status: str  # a status.Status, with its detail: "graded", or why not
    cells: dict[str, tuple[float, float]] = field(default_factory=dict)  # grade_id -> (score, max)
    raw_score: float = 0.0  # before the late penalty
    late_penalty: float = 0.0
    hours_late: float = 0.0  # after the learner's own due date (the lab's, plus any extension)
    extension_hours: float = 0.0  # grading.toml's [extensions] for this learner and lab
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    resumed: bool = False  # its run was stored by an earlier, interrupted `make grade`
    submitted: str = ""

    @property
    def needs_review(self) -> bool:
        return self.status != Status.GRADED or bool(self.flags) or any(n.startswith("review: ") for n in self.notes)


class GradingError(RuntimeError):
    pass


def nbgrader(args: list[str], course: Path) -> str:
    # nbgrader runs the venv's `alembic` script to create the gradebook: put the venv's bin first.
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
           "PYTHONPATH": str(settings.ROOT)}
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course,
                          capture_output=True, text=True, env=env)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise GradingError(f"`nbgrader {' '.join(args)}` failed in {course} (exit {proc.returncode}):\n"
                           + log[-3000:])
    return log


def prepare_course(lab: str, course: Path, params: dict | None = None, fresh: bool = True) -> Path:
    """A course holding `lab`'s source (with the run's parameters); returns the generated student
    notebook. `fresh=False` keeps an existing gradebook, submissions and runs (make grade)."""
    write_source(lab, course, params, fresh)
    return generate(lab, course)


def write_source(lab: str, course: Path, params: dict | None = None, fresh: bool = True) -> Path:
    """The course's config and `source/<lab>/` (what the hand-ins run against); fast, no nbgrader."""
    if fresh and course.exists():
        shutil.rmtree(course)
    (course / "source").mkdir(parents=True, exist_ok=True)
    config = COURSE_CONFIG.format(main=str(settings.NBGRADER_CONFIG), root=str(course),
                                  db=str(course / "gradebook.db"), runs=str(course / "runs" / lab))
    (course / "nbgrader_config.py").write_text(config)
    if (course / "source" / lab).exists():
        shutil.rmtree(course / "source" / lab)
    shutil.copytree(settings.SOLUTIONS / lab, course / "source" / lab,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    src = course / "source" / lab / f"{lab}.ipynb"
    if params:
        nbs.write(nbs.inject_parameters(nbs.read(src), params), src)
    return src


def generate(lab: str, course: Path) -> Path:
    """nbgrader generate_assignment: the assignment and its cells in the gradebook, and the release.
    Skipped when this course already generated it from the same source (a stamp keeps the hash)."""
    release = course / "release" / lab / f"{lab}.ipynb"
    digest = hashlib.sha256()
    for f in sorted((course / "source" / lab).rglob("*")):
        if f.is_file():
            digest.update(f.name.encode() + f.read_bytes())
    digest.update(settings.NBGRADER_CONFIG.read_bytes())
    stamp = course / f".generated-{lab}"
    if release.exists() and (course / "gradebook.db").exists() and stamp.exists() \
            and stamp.read_text() == digest.hexdigest():
        return release
    nbgrader(["generate_assignment", lab, "--force"], course)
    stamp.write_text(digest.hexdigest())
    return release


# ---- stage 2: run every hand-in in the sandbox, JOBS at a time ----

def _run_key(handin: Path, reference_key: str) -> str:
    """A stored run is reused only for the same hand-in against the same reference (whose key covers the
    lab, its parameters and every file of the grader and labkit)."""
    h = hashlib.sha256(handin.read_bytes())
    h.update(reference_key.encode())
    return h.hexdigest()


def lab_files(lab: str, course: Path) -> Path:
    """The lab's released data files (everything beside the notebook but notebooks), copied to a folder of
    their own: the sandbox binds that folder, never the source folder, which holds the answers."""
    dest = course / "files" / lab
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for f in (course / "source" / lab).iterdir():
        if f.is_file() and f.suffix != ".ipynb":
            shutil.copy(f, dest / f.name)
    return dest


def run_handins(lab: str, course: Path, handins: dict[str, Path], *, jobs: int = 1, sandboxed: bool = True,
                force: bool | frozenset = False, progress: bool = False,
                cell_timeout: int = settings.CELL_TIMEOUT_S,
                notebook_timeout: float = 600.0, on_done=None, scheduler: str | None = None
                ) -> dict[str, tuple[object, bool]]:
    """{student_id: (HandinRun, resumed)}; each run is judged against the lab's reference and stored as it
    finishes. Raises reference.SelfCheckFailed before any hand-in runs if the reference does not pass.
    `force`: True runs every hand-in again; a set of ids runs those again and reuses the others' stored runs."""
    from autograder import compile as compile_stage
    from autograder import judge, reference
    from autograder.run import HandinRun, failed_run, run_handin, warm_sandbox

    source_path = course / "source" / lab / f"{lab}.ipynb"
    # The committed student notebook (labs/, kept equal to a fresh release by make test) is what the
    # learners started from: answers missing from a hand-in fall back to its stubs, and its locked
    # cells are what a hand-in is compared with for tampering.
    release_path = settings.student_notebook(lab)
    source, release = nbs.read(source_path), nbs.read(release_path)
    files = lab_files(lab, course)
    if compile_stage.compiled_cells(source):  # hand-ins compile C++: their builds start from shared headers
        compile_stage.prepare_headers()
    cores = sorted(os.sched_getaffinity(0))
    threads = max(1, len(cores) // max(1, jobs))

    def cpus(slot: int) -> set[int] | None:  # slot n gets its own `threads` cores when there are enough
        mine = cores[slot * threads:(slot + 1) * threads]
        return set(mine) if jobs > 1 and len(mine) == threads else None
    slots = list(range(max(1, jobs)))
    runs_dir = course / "runs" / lab
    runs_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, tuple[object, bool]] = {}
    todo = []
    ref_key = reference.key_for(source_path, sandboxed)
    for sid, path in sorted(handins.items()):
        key = _run_key(path, ref_key)
        stored = runs_dir / f"{sid}.json"
        if stored.exists() and not (force is True or (isinstance(force, frozenset) and sid in force)):
            try:
                data = json.loads(stored.read_text())
                if data.get("key") == key:
                    results[sid] = (HandinRun.from_json(data), True)
                    continue
            except (ValueError, KeyError, TypeError):
                pass  # a damaged stored run is run again
        todo.append((sid, path, key))
    # One warm sandbox per slot: torch is imported once per slot, and every run (the reference's and each
    # hand-in's) is a fresh, isolated child of it (see sandbox.WarmSandbox). Started now, in the
    # background, when there is anything to run here (a dask cluster runs the hand-ins elsewhere).
    warm = {s: warm_sandbox(s, notebook_timeout, threads=threads, files=files, cpus=cpus(s), source=source)
            for s in slots} \
        if sandboxed and settings.WARM_SANDBOX else {}
    if warm and ((todo and not scheduler) or not reference.cached(lab, source_path, sandboxed)):
        for w in warm.values():
            w.start_soon()
    try:
        ref = reference.build(lab, source_path, release, sandboxed=sandboxed, files=files, threads=threads,
                              jobs=jobs, cell_timeout=cell_timeout, notebook_timeout=notebook_timeout, warm=warm)
    except BaseException:
        for w in warm.values():
            w.close()
        raise
    lock = threading.Lock()

    def one(sid, path, key):
        with lock:
            slot = slots.pop()
        handin = None
        try:
            handin = nbs.read(path)
            run = run_handin(source, release, handin, sandboxed=sandboxed, slot=slot, threads=threads,
                             cell_timeout=cell_timeout, notebook_timeout=notebook_timeout, files=files,
                             cpus=cpus(slot), warm=warm.get(slot))
        except Exception as e:  # noqa: BLE001 - one hand-in the grader cannot handle must not stop the class
            run = failed_run(source, release, status(Status.GRADER_ERROR, f"{type(e).__name__}: {str(e)[:200]}"))
        try:
            judge.apply(run, ref)
            if handin is not None:  # the compiler's words for C++ that did not build (compile.py), on this slot
                compile_stage.explain(source, handin, run, slot=slot, sandboxed=sandboxed)
        finally:
            run.records.clear()  # judged: the raw observations (megabytes for some hand-ins) are not kept
            with lock:
                slots.append(slot)
        _store_run(runs_dir, sid, run.to_json(), key)
        return sid, run

    bar = None
    if progress and todo:
        from tqdm import tqdm
        bar = tqdm(total=len(todo), desc=f"grading {lab}", unit="hand-in", file=sys.stderr, dynamic_ncols=True)
    failures = 0
    if scheduler:
        finished = _dask_runs(scheduler, todo, source_path, release_path, files, runs_dir, ref,
                              dict(sandboxed=sandboxed, threads=threads, cell_timeout=cell_timeout,
                                   notebook_timeout=notebook_timeout))
    else:
        pool = ThreadPoolExecutor(max_workers=max(1, jobs))
        finished = (f.result() for f in as_completed([pool.submit(one, *t) for t in todo]))
    try:
        for sid, run in finished:
            results[sid] = (run, False)
            failures += run.status != Status.GRADED
            if on_done:
                on_done(sid, run)
            if bar:
                bar.set_postfix_str(f"not clean: {failures}")
                bar.update(1)
    finally:
        if not scheduler:
            pool.shutdown(wait=True)
        for w in warm.values():
            w.close()
    if bar:
        bar.close()
    return results


def _store_run(runs_dir: Path, sid: str, data: dict, key: str) -> None:
    """Keep one finished run; atomic, so a killed `make grade` never leaves half a record."""
    tmp = runs_dir / f".{sid}.json.tmp"
    tmp.write_text(json.dumps({**data, "key": key}))
    tmp.replace(runs_dir / f"{sid}.json")


def _dask_runs(scheduler: str, todo, source_path: Path, release_path: Path, files: Path, runs_dir: Path, ref,
               options: dict):
    """Yield (student_id, HandinRun) as a dask.distributed cluster finishes them; judged here, in the trusted
    parent, and stored like local runs."""
    from distributed import Client
    from distributed import as_completed as dask_completed

    from autograder import judge
    from autograder.run import HandinRun, run_remote

    source, release = source_path.read_text(), release_path.read_text()
    lab = source_path.stem
    options = {**options, "files": str(files)}
    with Client(scheduler, timeout=30) as client:
        futures = {client.submit(run_remote, source, release, path.read_text(), options, key=f"{lab}-{sid}-{key[:12]}",
                                 pure=False): (sid, key) for sid, path, key in todo}
        for fut in dask_completed(list(futures)):
            sid, key = futures[fut]
            run = HandinRun.from_json(fut.result())
            judge.apply(run, ref)
            run.records.clear()
            _store_run(runs_dir, sid, run.to_json(), key)
            yield sid, run


# ---- stage 3: nbgrader scores the stored runs and writes the gradebook ----

class Scorer:
    """Stage 3 as a stream: nbgrader (`record.py`, in a child process) scores each hand-in as soon as its run
    is stored, so nbgrader's own start-up (seconds of imports) overlaps the runs instead of following them.

    What goes into submitted/ is the notebook that ran (the instructor's cells around the student's
    answers, outputs cleared), not the raw file: nbgrader never parses a hand-in's own metadata, so
    tampered metadata cannot make it fail. The raw file stays in OUT/staged/ for the record."""

    def __init__(self, lab: str, course: Path, due: datetime | None = None, before_start=None):
        self.lab, self.course, self.due = lab, course, due
        self.proc: subprocess.Popen | None = None
        self.lines: list[str] = []
        self.added: set[str] = set()
        self._error: BaseException | None = None
        self._reader: threading.Thread | None = None
        # nbgrader's gradebook must hold the assignment (generate_assignment, `before_start`) before it starts.
        self._starter = threading.Thread(target=self._start, args=(before_start,), daemon=True)
        self._starter.start()

    def _start(self, before_start) -> None:
        try:
            if before_start is not None:
                before_start()
            due_s = self.due.astimezone(UTC).isoformat() if self.due else ""
            env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
                   "PYTHONPATH": str(settings.ROOT)}
            self.proc = subprocess.Popen([sys.executable, "-m", "autograder.record", str(self.course), self.lab,
                                          due_s, "-"], cwd=self.course, stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            self._reader = threading.Thread(target=self._read, daemon=True)
            self._reader.start()
        except BaseException as e:  # noqa: BLE001 - raised in the grader's thread by add() or finish()
            self._error = e

    def _read(self) -> None:
        self.lines = self.proc.stdout.read().splitlines()

    def _ready(self) -> subprocess.Popen:
        self._starter.join()
        if self._error is not None:
            raise self._error
        return self.proc

    def add(self, sid: str, handin: Path) -> None:
        """Score one hand-in: its stored run's notebook goes into submitted/, its id to nbgrader."""
        if sid in self.added:
            return
        self.added.add(sid)
        dest = self.course / "submitted" / sid / self.lab
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        stored = self.course / "runs" / self.lab / f"{sid}.json"
        if stored.exists():
            nb = nbs.clear_outputs(nbformat.reads(json.loads(stored.read_text())["notebook"], as_version=4))
            nbs.write(nb, dest / f"{self.lab}.ipynb")
        else:
            shutil.copy(handin, dest / f"{self.lab}.ipynb")
        stamp = handin.parent / "timestamp.txt"
        if stamp.exists():
            shutil.copy(stamp, dest / "timestamp.txt")
        proc = self._ready()
        try:
            proc.stdin.write(sid + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it has died: finish() reports why

    def abort(self) -> None:
        """No scoring after all (the grader's self-check failed): stop nbgrader."""
        self._starter.join()
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    def finish(self) -> dict[str, str]:
        """Wait for nbgrader; {student_id: error} for the hand-ins it could not score."""
        proc = self._ready()
        try:
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        stderr = proc.stderr.read()
        proc.wait()
        self._reader.join()
        errors = {}
        for line in self.lines:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if not rec["ok"]:
                errors[rec["student_id"]] = rec["log"]
        if proc.returncode != 0:
            raise GradingError(f"scoring failed (exit {proc.returncode}):\n{stderr[-3000:]}")
        return errors


def read_gradebook(lab: str, course: Path, students: list[str]) -> dict[str, SubmissionGrade]:
    from nbgrader.api import Gradebook, MissingEntry

    out = {}
    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        max_score = float(gb.find_assignment(lab).max_score)
        for student in students:
            try:
                sub = gb.find_submission_notebook(lab, lab, student)
                asub = gb.find_submission(lab, student)
            except MissingEntry:
                out[student] = SubmissionGrade(student, 0.0, max_score, status(Status.NOT_GRADED, "see the audit log"))
                continue
            cells = {g.name: (float(g.score or 0.0), float(g.max_score)) for g in sub.grades
                     if g.cell_type == "code"}
            penalty = float(sub.late_submission_penalty or 0.0)
            out[student] = SubmissionGrade(
                student, float(sub.score) - penalty, max_score, str(Status.GRADED), cells, raw_score=float(sub.score),
                late_penalty=penalty, hours_late=round(float(asub.total_seconds_late or 0) / 3600, 2),
                extension_hours=round(asub.extension.total_seconds() / 3600, 2) if asub.extension else 0.0,
                submitted=asub.timestamp.isoformat() if asub.timestamp else "")
    return out


def autograde(lab: str, submissions: dict[str, Path], course: Path, params: dict | None = None,
              sandboxed: bool | None = None, jobs: int = 1) -> list[SubmissionGrade]:
    """Grade {student_id: notebook} for `lab` in a fresh scratch course (the lab-quality check)."""
    if sandboxed is None:
        sandboxed = sandbox.available()
    prepare_course(lab, course, params)
    return grade_prepared(lab, submissions, course, sandboxed=sandboxed, jobs=jobs)


def grade_prepared(lab: str, submissions: dict[str, Path], course: Path, sandboxed: bool | None = None,
                   jobs: int = 1, force: bool | frozenset = False, progress: bool = False,
                   due: datetime | None = None, before_score=None, **run_options) -> list[SubmissionGrade]:
    """Stages 2 and 3 for hand-ins already collected: run (or reuse stored runs), then score."""
    if sandboxed is None:
        sandboxed = sandbox.available()
    scorer = Scorer(lab, course, due, before_start=before_score)
    on_done = run_options.pop("on_done", None)

    def done(sid, run):
        scorer.add(sid, submissions[sid])
        if on_done is not None:
            on_done(sid, run)
    try:
        runs = run_handins(lab, course, submissions, jobs=jobs, sandboxed=sandboxed, force=force,
                           progress=progress, on_done=done, **run_options)
    except BaseException:
        scorer.abort()
        raise
    for sid in sorted(submissions):  # stored runs reused, and any a failure skipped
        scorer.add(sid, submissions[sid])
    errors = scorer.finish()
    grades = read_gradebook(lab, course, sorted(submissions))
    for sid, g in grades.items():
        run, resumed = runs[sid]
        g.status, g.flags, g.notes = run.status, list(run.flags), list(run.notes)
        g.seconds, g.resumed = run.seconds, resumed
        if sid in errors:
            g.status = status(Status.NOT_GRADED, "nbgrader failed (see audit.jsonl)")
            g.notes.append(errors[sid][-500:])
    return [grades[s] for s in sorted(grades)]


# ---- the command ----

def grade_command(lab: str, submissions: Path | None, out: Path | None, insecure: bool = False,
                  jobs: int | None = None, force: bool = False, roster: Path | None = None,
                  course: Path | None = None, exchange_root: str | None = None,
                  course_id: str | None = None, scheduler: str | None = None,
                  students: list[str] | None = None) -> int:
    """`make grade`. `students`: run these learners' hand-ins again (a regrade of one learner after a fix or an
    extension); every other learner's stored run is reused, so grades.csv and the report stay whole."""
    from autograder import collect, report

    if lab not in settings.labs():
        print(f"unknown lab {lab!r}; labs: {', '.join(settings.labs())}", file=sys.stderr)
        return 2
    if insecure:
        print("WARNING: --insecure: hand-ins run WITHOUT the sandbox, as this user, with access to the course "
              "files. Never use this for real hand-ins.", file=sys.stderr)
    elif not sandbox.available():
        print(sandbox.INSTALL_HINT, file=sys.stderr)
        return 2
    elif sandbox.why_it_cannot_start():
        print(f"{sandbox.why_it_cannot_start()}: no hand-in can run (each would score 0). Allow user namespaces "
              "(sysctl kernel.unprivileged_userns_clone=1, or the container's seccomp profile), or run as root.",
              file=sys.stderr)
        return 2
    if submissions is not None and str(submissions) == "exchange":
        try:
            submissions = collect_exchange(lab, (out or settings.GRADES / lab) / "exchange", exchange_root, course_id)
        except GradingError as e:
            print(str(e), file=sys.stderr)
            return 2
    if submissions is None:
        submissions = settings.DEMO_CLASS / lab
        if not submissions.exists():
            from coursetools import demo
            submissions = demo.build_demo_class(lab)
        print(f"SUBMISSIONS not given: grading the demo class in {submissions}")
    out = (out or settings.GRADES / lab).absolute()
    course = (course or settings.GRADING_COURSE).absolute()  # nbgrader runs with the course as its cwd
    for stale in sandbox.clean_up_stale():
        print(f"removed {stale}, left by a grader that did not finish")
    jobs = jobs or os.cpu_count() or 1
    try:  # the policy is read before anything runs: a bad due date or extension names its file and learner
        policy = collect.load_policy()
    except (ValueError, OSError) as e:
        print(f"grading policy: {e}", file=sys.stderr)
        return 2
    try:
        handins, roster_rows = collect.collect(submissions, lab, out / "staged", policy, roster)
    except FileNotFoundError as e:
        print(str(e), file=sys.stderr)
        return 2
    for sid in collect.unknown_extensions(policy, lab, roster_rows, handins):
        print(f"WARNING: {settings.policy_file()}: [extensions] {lab} gives {sid!r} an extension, but no hand-in "
              "or roster row has that id (a typo?)", file=sys.stderr)
    if not handins:
        print(f"no hand-ins found: expected {submissions}/<student_id>/{lab}.ipynb or an LMS zip", file=sys.stderr)
        return 2
    runnable = {sid: h.path for sid, h in handins.items() if h.status == "ok" and h.path is not None}
    if students:
        unknown = sorted(set(students) - set(handins))
        if unknown:
            print(f"STUDENT={','.join(unknown)}: no hand-in or roster row has that id (hand-ins: "
                  f"{', '.join(sorted(handins)[:20])}{' ...' if len(handins) > 20 else ''})", file=sys.stderr)
            return 2
        force = frozenset(students)  # regrade these; reuse everyone else's stored run
    out.mkdir(parents=True, exist_ok=True)
    audit = report.AuditLog(out / "audit.jsonl")
    audit.write("start", lab=lab, submissions=str(submissions), jobs=jobs, sandboxed=not insecure,
                force=sorted(force) if isinstance(force, frozenset) else force,
                user=getpass.getuser(), host=socket.gethostname(), handins=len(handins), runnable=len(runnable))
    where = f"on the dask cluster at {scheduler}" if scheduler else f"{jobs} at a time"
    print(f"grading {len(runnable)} of {len(handins)} hand-in(s) of {lab}, {where}, "
          f"{'WITHOUT a sandbox' if insecure else 'each in the sandbox'} ...")
    t0 = time.perf_counter()
    write_source(lab, course, settings.run_parameters(), fresh=False)
    # nbgrader's generate_assignment (seconds) only has to be done before scoring: overlap it with the runs.
    generated: dict = {}

    def gen():
        try:
            generate(lab, course)
        except GradingError as e:
            generated["error"] = e

    gen_thread = threading.Thread(target=gen, daemon=True)
    gen_thread.start()

    def before_score():
        gen_thread.join()
        if "error" in generated:
            raise generated["error"]

    def done(sid, run):
        audit.write("ran", student_id=sid, status=run.status, seconds=run.seconds, flags=run.flags[:5],
                    memory_peak=run.memory_peak, sha256=handins[sid].sha256)

    from autograder.reference import SelfCheckFailed
    try:
        graded = grade_prepared(lab, runnable, course, sandboxed=not insecure, jobs=jobs, force=force,
                                progress=True, due=policy.due.get(lab), on_done=done, scheduler=scheduler,
                                before_score=before_score)
    except SelfCheckFailed as e:
        audit.write("self-check failed", error=str(e)[:3000])
        print(f"NOT GRADED: {e}", file=sys.stderr)
        return 3
    grades = {g.student_id: g for g in graded}
    grades.update(_graded_earlier(lab, course, [sid for sid, h in handins.items()
                                                if kind_of(h.status) == Status.MISSING and sid not in grades]))
    max_score = next(iter(grades.values())).max_score if grades else _max_score(lab, course)
    for sid, h in handins.items():
        g = grades.get(sid) or SubmissionGrade(sid, 0.0, max_score, h.status)
        g.notes = h.notes + g.notes
        if h.submitted and not g.submitted:
            g.submitted = h.submitted.isoformat()
        grades[sid] = g
        audit.write("graded", student_id=sid, origin=h.origin, sha256=h.sha256, status=g.status, score=g.score,
                    max_score=g.max_score, late_penalty=g.late_penalty, resumed=g.resumed, flags=g.flags[:5],
                    notes=g.notes[:5])
    results = [grades[s] for s in sorted(grades)]
    roster_into_gradebook(course, roster_rows)
    write_grades_csv(results, out / "grades.csv", roster_rows)
    verdicts = report.write_feedback(lab, course, results, out / "feedback")
    report.write_report(lab, results, out / "report.html", time.perf_counter() - t0, jobs, verdicts)
    audit.write("end", seconds=round(time.perf_counter() - t0, 1), graded=len(runnable),
                resumed=sum(g.resumed for g in results), grader_peak_bytes=peak_memory())
    for r in results:
        extra = "  (stored run reused)" if r.resumed else ""
        print(f"  {r.student_id:<14} {r.score:>6g} / {r.max_score:g}  {r.status}{extra}")
    print(f"wrote {out / 'grades.csv'}, {out / 'report.html'}, {out / 'feedback'}/, {out / 'audit.jsonl'}")
    print(f"gradebook: {course / 'gradebook.db'} (formgrader: make lab, then Nbgrader > Formgrader)")
    return 0


def roster_into_gradebook(course: Path, roster: dict[str, dict] | None) -> None:
    """Every roster learner in nbgrader's gradebook with their names and e-mail, those who handed in nothing
    included: nbgrader's own exporters and formgrader read the gradebook, so `nbgrader export` (with this
    course's Canvas plug-in or nbgrader's CSV) then lists the same learners, names and e-mails as make export."""
    if not roster or not (course / "gradebook.db").exists():
        return
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        for sid, row in roster.items():
            gb.update_or_create_student(sid, first_name=row.get("first_name") or None,
                                        last_name=row.get("last_name") or None, email=row.get("email") or None)


def peak_memory() -> int:
    """The grading process's own peak resident memory in bytes (the hand-ins run in sandboxes with limits of
    their own; nbgrader's scoring runs in a child): Linux's VmHWM, the high-water mark of this program's own
    memory. Not ru_maxrss: Linux carries that across exec, so a grader started by a large process (a test
    runner that has imported torch) would report the starter's size. Elsewhere ru_maxrss (KiB on Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def collect_exchange(lab: str, dest: Path, exchange_root: str | None, course_id: str | None) -> Path:
    """`nbgrader collect` from the JupyterHub exchange (nbgrader_config.py names the exchange and the
    course id; the options override them) into `dest/<student_id>/<lab>/`."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    args = ["collect", lab, "--update", f"--CourseDirectory.submitted_directory={dest}"]
    if exchange_root:
        args.append(f"--Exchange.root={exchange_root}")
    if course_id:
        args.append(f"--CourseDirectory.course_id={course_id}")
    settings.GRADING_COURSE.mkdir(parents=True, exist_ok=True)  # nbgrader opens its gradebook; SQLite makes no folder
    log = nbgrader(args, settings.ROOT)
    print(f"collected {sum(1 for _ in dest.glob(f'*/{lab}'))} hand-in(s) from the exchange")
    if "error" in log.lower() and not any(dest.iterdir()):
        raise GradingError(f"nbgrader collect failed:\n{log[-2000:]}")
    return dest


def _graded_earlier(lab: str, course: Path, students: list[str]) -> dict[str, SubmissionGrade]:
    """Roster students missing from this SUBMISSIONS whose hand-in an earlier run graded: their
    grade stays (a regrade of a few students must not blank the rest of the class)."""
    from autograder.run import HandinRun

    out = {}
    for sid, g in read_gradebook(lab, course, students).items():
        stored = course / "runs" / lab / f"{sid}.json"
        if g.status != Status.GRADED or not stored.exists():
            continue
        run = HandinRun.from_json(json.loads(stored.read_text()))
        g.status, g.flags, g.seconds, g.resumed = run.status, list(run.flags), run.seconds, True
        g.notes = list(run.notes) + ["graded in an earlier run (not in this SUBMISSIONS)"]
        out[sid] = g
    return out


def _max_score(lab: str, course: Path) -> float:
    from nbgrader.api import Gradebook
    with Gradebook("sqlite:///" + str(course / "gradebook.db")) as gb:
        return float(gb.find_assignment(lab).max_score)


GRADES_COLUMNS = ["student_id", "first_name", "last_name", "email", "score", "max_score", "percent", "raw_score",
                  "late_penalty", "hours_late", "extension_hours", "status", "needs_review", "submitted_at"]


def write_grades_csv(results: list[SubmissionGrade], path: Path, roster: dict[str, dict] | None = None) -> None:
    """One row per student, keyed by the id the LMS and the roster share (see README, "Grades into an LMS")."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = sheets.writer(f)
        w.writerow(GRADES_COLUMNS)
        for r in sorted(results, key=lambda r: r.student_id):
            who = (roster or {}).get(r.student_id, {})
            pct = 100 * r.score / r.max_score if r.max_score else 0
            w.writerow([r.student_id, who.get("first_name", ""), who.get("last_name", ""), who.get("email", ""),
                        f"{r.score:g}", f"{r.max_score:g}", f"{pct:.1f}", f"{r.raw_score:g}", f"{r.late_penalty:g}",
                        f"{r.hours_late:g}", f"{r.extension_hours:g}",
                        r.status, "yes" if r.needs_review else "", r.submitted])


def as_dict(g: SubmissionGrade) -> dict:
    return asdict(g)
