"""Gradescope: the course's own grading, run by Gradescope's autograder on each submission.

`make gradescope-bundle LAB=<lab>` writes `build/gradescope/<lab>.zip`, the file Gradescope's
"Configure Autograder" page takes:

- `setup.sh` (run once when Gradescope builds its image): Python 3.11, bubblewrap, g++/ninja, then
  `make setup` in the course's source;
- `run_autograder` (run per submission): `python -m autograder gradescope --lab <lab>`;
- `source/`: this repository at HEAD (`git archive`): Gradescope keeps it on the autograder, away
  from learners, and the hidden tests need it.

Per submission, `run()` reads Gradescope's layout (`/autograder/submission/<lab>.ipynb`,
`/autograder/submission_metadata.json`), grades the notebook with `make grade`'s pipeline (in the
sandbox where the container allows user namespaces, else in Gradescope's own per-submission
container), and writes `/autograder/results/results.json` (`export.gradescope_results`): every test
with its score, the visible ones shown at once, hidden ones `after_published`. Lateness is left to
Gradescope (no late penalty here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from autograder import collect, export, sandbox, settings

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once while building the autograder image (Ubuntu, as root).
set -euo pipefail
apt-get update -qq
apt-get install -y -qq python3.11 python3.11-venv make bubblewrap g++ ninja-build binutils git
cd /autograder/source
make setup PYTHON3=python3.11
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission.
set -euo pipefail
cd /autograder/source
exec .venv/bin/python -m autograder gradescope --lab {lab}
"""


def bundle(lab: str, dest: Path | None = None) -> Path:
    """The zip Gradescope's autograder configuration takes, for `lab`."""
    dest = dest or settings.BUILD / "gradescope" / f"{lab}.zip"
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        archive = root / "source.tar"
        subprocess.run(["git", "archive", "--format=tar", "--prefix=source/", "-o", str(archive), "HEAD"],
                       cwd=settings.ROOT, check=True)
        shutil.unpack_archive(archive, root)
        archive.unlink()
        (root / "setup.sh").write_text(SETUP_SH)
        (root / "run_autograder").write_text(RUN_AUTOGRADER.format(lab=lab))
        for name in ("setup.sh", "run_autograder"):
            (root / name).chmod(0o755)
        made = shutil.make_archive(str(dest.with_suffix("")), "zip", root)
    return Path(made)


def _student_id(meta_path: Path) -> str:
    try:
        users = json.loads(meta_path.read_text()).get("users") or [{}]
        raw = str(users[0].get("sid") or users[0].get("email") or "")
    except (OSError, ValueError, AttributeError):
        raw = ""
    return raw if collect.SAFE_ID.fullmatch(raw) else "student"


def run(lab: str, root: Path = Path("/autograder")) -> int:
    """Grade the submission in Gradescope's layout under `root`; write results/results.json."""
    from autograder.grade import grade_command

    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    notebooks = sorted((root / "submission").glob("*.ipynb"))
    chosen = next((p for p in notebooks if p.name == f"{lab}.ipynb"), notebooks[0] if len(notebooks) == 1 else None)
    if chosen is None:
        results.write_text(json.dumps({"score": 0.0, "output": f"Upload one notebook, {lab}.ipynb "
                                       f"(found {[p.name for p in notebooks]}).", "tests": []}))
        return 0
    sid = _student_id(root / "submission_metadata.json")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "class" / sid).mkdir(parents=True)
        shutil.copy(chosen, work / "class" / sid / f"{lab}.ipynb")
        (work / "class" / "students.csv").write_text(f"id,first_name,last_name,email\n{sid},,,\n")
        (work / "grading.toml").write_text("# Gradescope handles lateness\n")
        os.environ["COURSE_GRADING_TOML"] = str(work / "grading.toml")
        rc = grade_command(lab, work / "class", work / "out", insecure=not sandbox.available(), jobs=1,
                           course=work / "course")
        if rc != 0:
            results.write_text(json.dumps({"score": 0.0, "output": f"the grader stopped (exit {rc}); your "
                                           "instructor has the log", "tests": []}))
            return 0
        learner = next(x for x in export.read_grades(lab, work / "out", work / "course") if x.student_id == sid)
        data = export.gradescope_results(lab, learner)
    results.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{sid}: {data['score']:g} points; wrote {results}")
    return 0
