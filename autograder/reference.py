"""Stage "reference": what the reference solution does on the tests, recorded once per lab.

The judge compares every hand-in with these observations. They come from running
the instructor's source notebook (answers included) through the same sandbox and
runner as a hand-in, twice: what the two runs agree on must be matched exactly,
what differs between them (timings, addresses) only in kind. The result is cached
under build/reference/<lab>/<key>.json, the key being a hash of everything that
decides it (the source notebook and its data files, the parameters, the grader's
code, labkit), so a changed lab or grader never reuses a stale reference.

It is also the grader's check of itself: if the reference solution does not pass
every test in the sandbox (a venv the sandbox cannot see, a missing package, a
broken lab), grading stops with that diagnosis before any learner is graded.
"""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from nbformat import NotebookNode

from autograder import judge, settings
from autograder.status import Status

CACHE = settings.BUILD / "reference"


class SelfCheckFailed(RuntimeError):
    """The reference solution does not pass in the grading sandbox: nothing can be graded."""


@dataclass
class Reference:
    lab: str
    key: str
    cells: dict[str, dict] = field(default_factory=dict)  # test label -> {"obs", "cut", "stable", "hidden"}
    seconds: float = 0.0

    def unjudged(self) -> list[str]:
        """Test cells the judge has nothing to compare for (the verdict is the test cell's own)."""
        return sorted(k for k, c in self.cells.items() if not judge.judged(c))


def grader_files() -> list[Path]:
    """Every file whose change can change a grade: the grader's code, labkit, nbgrader's config, the policy."""
    files = sorted((settings.ROOT / "autograder").glob("*.py")) + sorted(settings.LABKIT.rglob("*.py"))
    return files + [settings.NBGRADER_CONFIG, settings.ROOT / "grading.toml", settings.ROOT / "requirements.txt"]


def code_hash() -> str:
    h = hashlib.sha256()
    for f in grader_files():
        if f.exists():
            h.update(str(f.relative_to(settings.ROOT)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def key_for(source_path: Path, sandboxed: bool) -> str:
    h = hashlib.sha256(code_hash().encode())
    for f in sorted(source_path.parent.iterdir()):
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    h.update(b"sandboxed" if sandboxed else b"insecure")
    h.update(b"warm" if sandboxed and settings.WARM_SANDBOX else b"cold")
    return h.hexdigest()


def cached(lab: str, source_path: Path, sandboxed: bool, cache: Path = CACHE) -> bool:
    return (cache / lab / f"{key_for(source_path, sandboxed)}.json").exists()


def build(lab: str, source_path: Path, release: NotebookNode, *, sandboxed: bool, files: Path | None,
          threads: int = 1, jobs: int = 1, cache: Path = CACHE, warm: dict | None = None,
          **run_options) -> Reference:
    """The lab's reference observations, from the cache or from two sandboxed runs of the source (in the
    warm sandboxes `warm` holds per slot, as the hand-ins will run, where given)."""
    warm = warm or {}
    from autograder import notebooks as nbs
    from autograder.run import run_handin

    key = key_for(source_path, sandboxed)
    stored = cache / lab / f"{key}.json"
    if stored.exists():
        data = json.loads(stored.read_text())
        return Reference(lab, key, data["cells"], data["seconds"])
    source = nbs.read(source_path)

    def once(slot: int):
        return run_handin(source, release, source, sandboxed=sandboxed, slot=slot, threads=threads, files=files,
                          warm=warm.get(slot), **run_options)
    # Two slots at once where there are two; else both runs in slot 0, one after the other.
    with ThreadPoolExecutor(max_workers=max(1, min(2, jobs))) as pool:
        a, b = pool.map(once, [0, 1] if jobs > 1 else [0, 0])
    self_check(lab, a)
    self_check(lab, b)
    ref = Reference(lab, key, seconds=round(max(a.seconds, b.seconds), 2))
    for n, cell in enumerate(a.cells):
        if cell["kind"] != "test":
            continue
        ra, rb = a.records[n], b.records[n]
        ref.cells[cell["label"]] = {**judge.reference_cell(ra["obs"], rb["obs"], ra["obs_cut"], rb["obs_cut"]),
                                    "hidden": cell["hidden"]}
    stored.parent.mkdir(parents=True, exist_ok=True)
    tmp = stored.with_suffix(".tmp")
    tmp.write_text(json.dumps({"cells": ref.cells, "seconds": ref.seconds}))
    tmp.replace(stored)
    return ref


def self_check(lab: str, run) -> None:
    """Stop with a diagnosis when the reference solution does not pass every test in the sandbox."""
    failed = []
    for n, cell in enumerate(run.cells):
        rec = run.records.get(n)
        if rec is None:
            failed.append(f"{cell['label']}: did not run")
        elif rec["error"] is not None and cell["kind"] != "answer":
            failed.append(f"{cell['label']}: {rec['error'].get('ename')}: {str(rec['error'].get('evalue'))[:300]}")
    if run.status == Status.GRADED and not failed:
        return
    hint = ""
    if run.seconds < 2 or "No module named" in "".join(failed) or "not run" in "".join(failed[:1]):
        hint = ("\n  likely cause: the sandbox cannot start Python or import the course's packages (is the venv "
                "reached through a symbolic link or a folder the sandbox does not bind? is a package missing?)")
    log = run.log[-1500:] if run.log else ""
    raise SelfCheckFailed(
        f"{lab}: the reference solution does not pass in the grading sandbox (status: {run.status}, "
        f"{run.seconds:.2f} s), so no hand-in was graded.\n  " + "\n  ".join(failed[:8]) + hint
        + (f"\n  the run's stderr ends with:\n{log}" if log else ""))
