"""Every path and limit the pipeline uses, spelled once."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"  # instructor notebooks: answers and hidden tests
LABS = ROOT / "labs"  # generated student notebooks (committed)
COURSE = ROOT / "course"  # walkthrough notebooks
LABKIT = ROOT / "labkit"  # support package shipped to learners
FIXTURES = ROOT / "tests" / "fixtures"  # never copied into a sandbox or the learners' tree
MUTANTS = FIXTURES / "mutants"  # <lab>.md: one catalogue of plausible wrong answers per lab
ALTERNATIVES = FIXTURES / "alternatives"  # <lab>.md: right answers written differently from the reference
# <lab>.md: wrong answers written as a learner would, without reading the mutant catalogue; each names the catalogue
# entry that describes its mistake (or none), to measure the feedback's diagnoses (coursetools/diagnosis.py)
WRONG = FIXTURES / "wrong"
EXPLOITS = FIXTURES / "exploits"  # hostile hand-ins against lab 1
DEMO_CLASS = FIXTURES / "demo"  # the committed demo class that `make grade` grades by default
NBGRADER_CONFIG = ROOT / "nbgrader_config.py"
# The grading policy (due dates, late penalty, extensions, roster); COURSE_GRADING_TOML points at another one
# (a term's own copy, a test's, Gradescope's), for `make grade` and the nbgrader process it starts alike.
POLICY_FILE = ROOT / "grading.toml"


def policy_file() -> Path:
    return Path(os.environ.get("COURSE_GRADING_TOML") or POLICY_FILE)
BUILD = ROOT / "build"
EXECUTED = BUILD / "executed"  # papermill outputs of solutions and course notebooks
CPP_PCH = BUILD / "cpp-pch"  # the precompiled C++ headers lab 14's builds start from (read-only in sandboxes)
SCRATCH = BUILD / "scratch"  # throw-away nbgrader courses used by quality checks
GRADES = BUILD / "grades"  # `make grade` output, one folder per lab
GRADING_COURSE = BUILD / "course"  # `make grade`'s gradebook and hand-ins: the folders nbgrader_config.py names
DEMO = BUILD / "demo"  # the generated demo class
STUDENT_DIST = BUILD / "student"

KERNEL = "python3"
# Hand-ins run as fresh children of one warm sandbox per slot (torch imported once; sandbox.WarmSandbox).
# COURSE_COLD_SANDBOX=1 starts a new sandbox and interpreter per hand-in instead.
WARM_SANDBOX = os.environ.get("COURSE_COLD_SANDBOX", "") != "1"
# labkit helpers that run a lab's function in other processes (ranks) and return what it did there: where a
# lab's set-up imports one, the runner observes its results as part of the interface, reduced to the fields
# whose right value the lab's contract fixes (the sums; not the order of messages, which may differ).
# `loader_draws` (lab 11's DataLoader workers) brings back every item's draws from four generators; which numbers
# come out depends on how a right answer derives its seeds, so those fields are compared by their pattern
# (BY_PATTERN), not by value.
# `run_ranks` (lab 10's ranks) brings back what each rank's test built: gradients, parameters, all-reduce sizes, state
# bytes; its timing fields (when the first all-reduce started, how long a rank waited) stay out.
OUT_OF_PROCESS_TRIALS = {"allreduce_trials": ["got", "returned_self"],
                         "run_ranks": ["grads", "ddp", "ready", "same_as_ddp", "sizes", "params", "adam", "adam_bytes",
                                       "balanced", "grads_none", "total_state_bytes", "ddp_grads", "grads_as_ddp",
                                       "params_as_ddp", "sgd", "as_adam", "before", "raised", "odd", "tiny",
                                       "deep", "scrambled", "none", "batchnorm", "reduction", "unused"],
                         "loader_draws": ["index", "worker", "np_global", "py_global", "np_own", "py_own"]}
# Fields of an observed function's results that the judge compares by their equality pattern across a test cell:
# each value becomes the order in which it first appeared among that field's values in the cell, in the
# reference's run and in the hand-in's alike. Every right seeding of lab 11's workers draws numbers of its own,
# and all of them draw alike where the task says so (the same loader seed twice) and differently everywhere else
# (two workers, two seeds, two epochs; 31-bit draws collide with odds near 1e-6): a wrong one shares a number
# where the reference has two, or two where it repeats one.
BY_PATTERN = {"loader_draws": ["np_global", "py_global", "np_own", "py_own"]}
# Lab 7's interface functions whose launches the task fixes beyond the kernel's name: each launch during an observed
# call records its grid and these constexprs, under Triton's launch path (sandbox_runner.Observer.watch_launches),
# and the judge compares them with the reference's. Other functions leave the grid and block to the answer.
# "loaded" and "stored" are not constexprs: they record how many elements an interpreted launch's loads (stores)
# touched, counted by the runner under the interpreter (Observer.count_traffic): online softmax reads its input
# exactly twice, whatever its BLOCK.
LAUNCH_RULES = {"softmax_rows": [], "online_softmax": ["BLOCK", "loaded"], "matmul": ["BLOCK_M", "BLOCK_N", "BLOCK_K"]}
# Lab 5's functions that must compute with integer ops only: each call records, under a dispatch mode the runner
# enters around it (labkit.amp's recorder and rule, taken before any answer cell runs), whether every ATen op it
# ran kept to that rule; the judge compares it with the reference's.
INTEGER_ONLY = ["decompose", "to_bfloat16_rne"]
# Lab 7's functions whose arithmetic belongs in their Triton kernels: each call records the ATen ops it ran that
# compute or convert dtypes (labkit.fusion.MATH_OPS), under a dispatch mode of the runner's own, entered around
# it; the judge compares them with the reference's (none).
KERNEL_ONLY = ["fused_add_mul", "softmax_rows", "matmul", "online_softmax", "attention", "silu_mul"]
# What a run records besides values, as the job tells the runner (sandbox_runner.Observer.configure): the grader's
# job (run.run_handin) and the quality run's driver (coursetools.mutants) both send this one dict.
RECORDING = {"fields": OUT_OF_PROCESS_TRIALS, "launch_rules": LAUNCH_RULES, "integer_only": INTEGER_ONLY,
             "kernel_only": KERNEL_ONLY}
# Memory one sandboxed run may use (its cgroup counts its processes, its tmpfs files and the page cache it
# faults in): a kernel holding torch, and lab 14's g++ with torch's headers (a CI run once hit 4 GiB there).
SANDBOX_MEMORY_BYTES = 6 << 30
CELL_TIMEOUT_S = 120  # one cell, while executing or grading
NOTEBOOK_BUDGET_S = 60  # a notebook with default parameters on a 2-core CPU
SOLUTION_BUDGET_S = 60
# Labs whose solutions may take longer on a 2-core CPU: real gloo ranks, tiled kernels in Triton's interpreter.
SOLUTION_BUDGET_OVERRIDES_S = {"lab07-triton": 90, "lab10-distributed": 90}


def solution_budget_s(lab: str) -> int:
    """Seconds the lab's solution notebook may take under papermill with default parameters."""
    return SOLUTION_BUDGET_OVERRIDES_S.get(lab, SOLUTION_BUDGET_S)

# Test cells whose reference runs give the judge nothing to compare, and why: their verdict is the learner
# process's own. The quality run fails a lab with any other such cell (coursetools/mutants.py measures it), and
# THREATS.md's list of what is still trusted is checked against this table (tests/test_lab_quality.py).
# Branches of a solution's answer functions that no hidden test reaches, each with why that is acceptable (the
# quality table fails a lab with any other; coursetools/branches.py counts them). Keyed by lab, then by the
# branch as the table prints it.
UNREACHED_KNOWN: dict[str, dict[str, str]] = {
    "lab10-distributed": {
        "*": "the answers run in ranks, processes of their own the count does not see; every rank test brings "
             "its values back to the judge (run_ranks is observed)",
    },
    "lab03-autograd": {
        "`backward` line 46: if false": "a node returning None for an input that needs a gradient: no node of the "
                                        "built-in ops the task covers does (custom Functions, which can, are not "
                                        "callable as nodes); the branch is defensive",
    },
    "lab13-streams": {
        "`find_races` line 64: if false": "the last of a chain that names every kind of op: no op has another kind",
    },
    "lab11-modules": {
        "`checkpoint_storages` line 31: if false": "a persistent id that is not a storage: torch.save writes none; "
                                                   "the branch is defensive",
        **{f"`seeded_worker_init` line {n}: if {side}": "runs in the DataLoader's worker processes, which the count "
                                                         "does not see (the test checks what the workers drew)"
           for n, side in ((6, "false"), (12, "true"), (12, "false"), (14, "true"), (14, "false"))},
    },
}

UNJUDGED_KNOWN: dict[str, dict[str, str]] = {}

SKIP_MARK = "SKIPPED (needs CUDA):"  # printed by labkit.skip_unless_cuda
# stderr text nbgrader forgives in a test cell (nbgrader_config.py sets IgnorePattern to the same; a test checks)
IGNORE_STDERR = r"(?m)(?:\w*Warning:|\d+%\||^\[?[WI]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ )"


SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")  # an id that can name a file or folder as it is


def file_name(student_id: str) -> str:
    """The file or folder name for a learner's pages, zips and runs: the id itself where it is a plain name,
    else a digest of it (an id of 300 characters, with `/`, `..` or control characters, stays in its folder and
    fits a file name)."""
    if SAFE_ID.fullmatch(student_id) and ".." not in student_id:
        return student_id
    return "id-" + hashlib.sha256(student_id.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def labs() -> list[str]:
    """Lab ids, from the folders of solutions/ (each holds <lab>/<lab>.ipynb)."""
    return sorted(p.parent.name for p in SOLUTIONS.glob("*/*.ipynb")
                  if p.stem == p.parent.name)


def course_notebooks() -> list[Path]:
    return sorted(COURSE.glob("week*.ipynb"))


def week_notebooks(labs: list[str]) -> list[Path]:
    """The walkthroughs of these labs' weeks (lab07-x -> course/week07-*.ipynb)."""
    numbers = {lab.split("-", 1)[0].removeprefix("lab") for lab in labs}
    return [p for p in course_notebooks() if p.stem.split("-", 1)[0].removeprefix("week") in numbers]


def solution_notebook(lab: str) -> Path:
    return SOLUTIONS / lab / f"{lab}.ipynb"


def student_notebook(lab: str) -> Path:
    return LABS / lab / f"{lab}.ipynb"


def jobs() -> int:
    """Parallel jobs: JOBS from the environment, else the number of cores."""
    return max(1, int(os.environ.get("JOBS") or os.cpu_count() or 1))


def run_parameters() -> dict:
    """Notebook parameters for this run (`make test DEVICE=cuda` sets COURSE_DEVICE)."""
    device = os.environ.get("COURSE_DEVICE", "").strip()
    return {"DEVICE": device} if device else {}
