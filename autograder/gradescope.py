"""Gradescope: the course's own grading, run by Gradescope's autograder on each submission.

`make gradescope-bundle LAB=<lab>` writes `build/gradescope/<lab>.zip`, the file Gradescope's
"Configure Autograder" page takes. Gradescope's autograder specification
(https://gradescope-autograders.readthedocs.io/en/latest/specs/) unpacks that zip into
`/autograder/source`, runs `setup.sh` from there once while it builds the image, and copies
`run_autograder` to `/autograder/run_autograder`, which it runs for each submission. So the zip holds, at
its root:

- this repository's tracked files as they are (`git ls-files`): the Makefile, the grader, the solutions
  and hidden tests. Gradescope keeps it on the autograder, away from learners;
- `setup.sh`: Python 3.11, bubblewrap, g++/ninja, then `make setup` in `/autograder/source`, torch from
  PyTorch's CPU index (PyPI's Linux wheel is the CUDA build, gigabytes a grader does not use);
- `run_autograder`: `python -m autograder gradescope --lab <lab>`;
- `build/diagnosis/<lab>.json`, the lab's diagnosis table (`diagnose.py`), when the quality run built one
  for this grader and lab: a failed test's message then names the known misconception it matches.

Per submission, `run()` reads Gradescope's layout (`/autograder/submission/<lab>.ipynb`,
`/autograder/submission_metadata.json`), grades the notebook with `make grade`'s pipeline in the sandbox,
and writes `/autograder/results/results.json` (`export.gradescope_results`): every test with its score and
the judge's words for a failure, the visible tests shown at once, hidden ones `after_published`. Lateness
is left to Gradescope. Whatever happens, a results.json is written: an upload that is a link, a folder or
not a notebook gets a message and no points; where the container cannot start a sandbox (user namespaces
blocked) nothing is graded and results.json says the autograder is misconfigured, with no scores, so no
learner is given a zero that is the grader's fault. A course that accepts Gradescope's per-submission
container as the only boundary builds the bundle with `INSECURE=1` (`--trust-container`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import traceback
from pathlib import Path

from autograder import collect, diagnose, export, sandbox, settings

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once while building the autograder image (Ubuntu, as root), in /autograder/source.
set -euo pipefail
apt-get update -qq
apt-get install -y -qq python3.11 python3.11-venv make bubblewrap g++ ninja-build binutils git
cd /autograder/source
COURSE_TORCH_INDEX=https://download.pytorch.org/whl/cpu make setup PYTHON3=python3.11
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission.
set -euo pipefail
cd /autograder/source
exec .venv/bin/python -m autograder gradescope --lab {lab}{trust}
"""


def bundle(lab: str, dest: Path | None = None, trust_container: bool = False) -> Path:
    """The zip Gradescope's autograder configuration takes, for `lab`: the repository at the zip's root, with
    setup.sh and run_autograder beside its Makefile."""
    dest = dest or settings.BUILD / "gradescope" / f"{lab}.zip"
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "zip"
        root.mkdir()
        # the tracked files as they are now (what `git ls-files` lists; read-only: no index lock, no identity)
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=settings.ROOT, check=True, capture_output=True)
        for rel in filter(None, listed.stdout.decode("utf-8", "surrogateescape").split("\0")):
            src, dst = settings.ROOT / rel, root / rel
            if not os.path.lexists(src):
                continue  # deleted in the working tree
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)
        # the lab's diagnosis table (diagnose.py), when the quality run built one for this very grader and lab:
        # the failed tests' feedback on Gradescope then names a known misconception as `make grade`'s does
        if diagnose.load(lab) is not None:
            table = diagnose.TABLES / f"{lab}.json"
            (root / table.relative_to(settings.ROOT)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(table, root / table.relative_to(settings.ROOT))
        for name in ("setup.sh", "run_autograder"):
            if (root / name).exists():
                raise FileExistsError(f"the repository has its own {name}: Gradescope's would overwrite it")
        (root / "setup.sh").write_text(SETUP_SH)
        (root / "run_autograder").write_text(RUN_AUTOGRADER.format(
            lab=lab, trust=" --trust-container" if trust_container else ""))
        for name in ("setup.sh", "run_autograder"):
            (root / name).chmod(0o755)
        dest.unlink(missing_ok=True)
        made = shutil.make_archive(str(dest.with_suffix("")), "zip", root)
    return Path(made)


def _student_id(meta_path: Path) -> str:
    try:
        users = json.loads(meta_path.read_text()).get("users") or [{}]
        raw = str(users[0].get("sid") or users[0].get("email") or "")
    except (OSError, ValueError, AttributeError):
        raw = ""
    return raw if collect.SAFE_ID.fullmatch(raw) else "student"


def _write(results: Path, data: dict) -> None:
    problems = export.check_gradescope_results(data)
    if problems:
        raise ValueError(f"results.json would break Gradescope's format: {problems}")
    results.write_text(json.dumps(data, indent=1) + "\n")


def _not_graded(results: Path, why: str) -> None:
    """A results.json with the reason and no score at all: Gradescope shows the message, and the instructor
    regrades once it is fixed. Scores of 0 would read as the learner's."""
    _write(results, {"output": why, "tests": [], "visibility": "visible"})


def run(lab: str, root: Path = Path("/autograder"), trust_container: bool = False) -> int:
    """Grade the submission in Gradescope's layout under `root`; always write results/results.json."""
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _run(lab, root, results, trust_container)
    except Exception:  # noqa: BLE001 - whatever broke, Gradescope gets a results.json that says so
        traceback.print_exc()
        _not_graded(results, "The autograder failed on this submission (not your answer's doing); your "
                    "instructor has the log and will regrade it.")
        return 0


def _run(lab: str, root: Path, results: Path, trust_container: bool) -> int:
    from autograder.feedback import current_grades
    from autograder.grade import grade_command
    from autograder.report import failure_messages

    why = sandbox.why_it_cannot_start()
    if why and not trust_container:
        _not_graded(results, f"The autograder is misconfigured, so nothing was graded: {why}. Your instructor "
                    "will regrade this submission.")
        return 0
    folder = root / "submission"
    entries = sorted(folder.iterdir()) if folder.is_dir() else []
    wanted = folder / f"{lab}.ipynb"
    notebooks = [p for p in entries if p.suffix == ".ipynb"]
    chosen = wanted if wanted in notebooks else (notebooks[0] if len(notebooks) == 1 else None)
    if chosen is None:
        found = ", ".join(p.name for p in entries[:10]) or "nothing"
        _not_graded(results, f"Upload one notebook, {lab}.ipynb (found: {found}).")
        return 0
    if chosen.is_symlink() or not chosen.is_file():
        _not_graded(results, f"{chosen.name} is not a plain file (a link or a folder): upload the notebook itself.")
        return 0
    sid = _student_id(root / "submission_metadata.json")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "class" / sid).mkdir(parents=True)
        shutil.copyfile(chosen, work / "class" / sid / f"{lab}.ipynb", follow_symlinks=False)
        (work / "class" / "students.csv").write_text(f"id,first_name,last_name,email\n{sid},,,\n")
        (work / "grading.toml").write_text("# Gradescope handles lateness\n")
        os.environ["COURSE_GRADING_TOML"] = str(work / "grading.toml")
        rc = grade_command(lab, work / "class", work / "out", insecure=bool(why), jobs=1, course=work / "course")
        if rc != 0:
            _not_graded(results, f"The grader stopped (exit {rc}), so nothing was graded; your instructor has "
                        "the log and will regrade this submission.")
            return 0
        learner = next(x for x in export.read_grades(lab, work / "out", work / "course") if x.student_id == sid)
        grade = next(g for g in current_grades(lab, work / "out", work / "course") if g.student_id == sid)
        data = export.gradescope_results(lab, learner, failure_messages(lab, work / "course", grade))
    _write(results, data)
    print(f"{sid}: {data['score']:g} points; wrote {results}")
    return 0
