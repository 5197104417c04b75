"""The environment files every install path reads, all made from requirements.lock (no second resolution).

    python -m coursetools.envfiles           # rewrite requirements-conda.txt after `make lock`
    python -m coursetools.envfiles --check   # exit 1 when it is stale

Four paths install the course: `make lab`/`make test` (coursetools/venv.py: torch from requirements.txt's
pin, then the lock with `--require-hashes --no-deps`), the container image (docker/Dockerfile: the same two
steps), conda (environment.yml) and Binder (binder/environment.yml in the learners' tree). conda and
repo2docker run pip once, on the pip section of the environment file, so pip's hash-checking mode cannot be
used there: it refuses a requirement without hashes (torch, whose wheel depends on the machine and comes from
PyTorch's index) and a local folder (the course package itself). Those two take `requirements-conda.txt`:
every pin of the lock, without hashes, and torch's pin.

The learners' tree holds fewer packages: the instructors' tools (INSTRUCTOR_ONLY: the test runner, the
linter, dask for distributed grading, the browser driver) and whatever only they pull in are left out. That
set is read from the lock's own `# via` lines (pip-compile's record of who requires what), so the learners'
lock is a subset of the instructors' lock with the same versions and hashes, closed under dependencies.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements.txt"
LOCK = ROOT / "requirements.lock"
CONDA_PINS = ROOT / "requirements-conda.txt"
LOCK_HEADER = "# requirements.txt sha256: "  # coursetools/venv.py reads this first line
# Only instructors run these: pytest, pytest-xdist and ruff (make test, make lint), dask/distributed
# (make grade --executor dask), playwright (the browser test). Learners' notebooks and labkit import none
# of them (a test checks).
INSTRUCTOR_ONLY = frozenset({"pytest", "pytest-xdist", "ruff", "dask", "distributed", "playwright"})
# PyTorch's index of CPU wheels: what a hub, Binder and the image install (PyPI's Linux torch is CUDA's).
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def canonical(name: str) -> str:
    """PEP 503's normalized name."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Entry:
    """One package of the lock: its requirement line (name, extras, version, marker), its hash lines and who
    requires it (`-r requirements.txt` for a direct requirement)."""

    name: str
    line: str
    lines: list[str] = field(default_factory=list)
    via: set[str] = field(default_factory=set)

    @property
    def pin(self) -> str:
        """`name[extras]==version ; marker`, without hashes."""
        return self.line.rstrip(" \\").strip()


REQ_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==")


def parse_lock(text: str) -> tuple[list[str], list[Entry]]:
    """The lock's header comment lines and its entries, in order."""
    header: list[str] = []
    entries: list[Entry] = []
    in_via = False
    for line in text.splitlines():
        m = REQ_LINE.match(line)
        if m:
            entries.append(Entry(canonical(m.group(1)), line, [line]))
            in_via = False
            continue
        if not entries:
            header.append(line)
            continue
        if not line.startswith(" "):  # a blank line or a top-level comment ends the entry
            in_via = False
            continue
        entry = entries[-1]
        entry.lines.append(line)
        body = line.strip()
        if body.startswith("# via"):
            rest = body[len("# via"):].strip()
            in_via = not rest
            if rest:
                entry.via.add(rest if rest.startswith("-r") else canonical(rest))
        elif in_via and body.startswith("#   "):
            rest = body[4:].strip()
            entry.via.add(rest if rest.startswith("-r") else canonical(rest.split("[")[0]))
    return header, entries


def learner_entries(entries: list[Entry], instructor_only=INSTRUCTOR_ONLY) -> list[Entry]:
    """The entries a learner needs: direct requirements other than the instructors' tools, and everything one
    of those (or torch, which the lock leaves out) requires, following the `# via` lines to a fixed point."""
    keep = {e.name for e in entries if any(v.startswith("-r") for v in e.via) and e.name not in instructor_only}
    keep.add("torch")
    changed = True
    while changed:
        changed = False
        for e in entries:
            if e.name not in keep and e.via & keep:
                keep.add(e.name)
                changed = True
    return [e for e in entries if e.name in keep]


def learner_requirements(text: str, instructor_only=INSTRUCTOR_ONLY) -> str:
    """requirements.txt without the instructors' tools (and the comment lines just above each of them)."""
    out: list[str] = []
    pending: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            pending.append(line)
            continue
        m = REQ_LINE.match(stripped)
        if m and canonical(m.group(1)) in instructor_only:
            pending = [p for p in pending if not p.strip()]  # the comments described the dropped tool
            continue
        out += pending + [line]
        pending = []
    return "\n".join(out + [p for p in pending if p.strip()]) + "\n"


def lock_for(requirements_text: str, header_note: str, entries: list[Entry]) -> str:
    """A lock in coursetools/venv.py's format: its first line names the requirements it belongs to."""
    head = [LOCK_HEADER + hashlib.sha256(requirements_text.encode()).hexdigest(), header_note]
    body = []
    for e in entries:
        body += e.lines
    return "\n".join(head + [""] + body) + "\n"


def learner_lock(lock_text: str, learner_requirements_text: str) -> str:
    _, entries = parse_lock(lock_text)
    note = ("# The learners' part of the course's requirements.lock (same versions and hashes): every package but"
            " torch and the instructors' tools.")
    return lock_for(learner_requirements_text, note, learner_entries(entries))


def torch_pin(requirements_text: str) -> str:
    for line in requirements_text.splitlines():
        if re.match(r"^\s*torch\s*==", line):
            return line.split("#", 1)[0].strip()
    raise ValueError("requirements.txt pins no torch")


def conda_pins(lock_text: str, requirements_text: str) -> str:
    """requirements-conda.txt: torch's pin and every pin of the lock, without hashes (see the module's doc)."""
    _, entries = parse_lock(lock_text)
    head = [
        "# Made from requirements.lock by `python -m coursetools.envfiles`; do not edit.",
        "# conda and Binder read it through environment.yml's pip section: one pip call that also installs the",
        "# course itself (a folder) and torch from PyTorch's index, which pip's --require-hashes mode refuses, so",
        "# the pins come without hashes. The lock was resolved on Linux: on macOS/Windows pip adds the few",
        "# platform-only packages it lacks (appnope, colorama, pywin32, ...) at their latest versions.",
        torch_pin(requirements_text),
    ]
    return "\n".join(head + [e.pin for e in entries]) + "\n"


def learner_files(root: Path = ROOT) -> dict[str, str]:
    """The environment files of the learners' tree, by path relative to it."""
    req = learner_requirements((root / "requirements.txt").read_text())
    lock = learner_lock((root / "requirements.lock").read_text(), req)
    return {"requirements.txt": req, "requirements.lock": lock, "requirements-conda.txt": conda_pins(lock, req)}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="exit 1 if requirements-conda.txt is stale")
    a = p.parse_args()
    want = conda_pins(LOCK.read_text(), REQUIREMENTS.read_text())
    if a.check:
        if not CONDA_PINS.is_file() or CONDA_PINS.read_text() != want:
            print(f"{CONDA_PINS.name} does not match requirements.lock: run python -m coursetools.envfiles")
            return 1
        return 0
    CONDA_PINS.write_text(want)
    print(f"wrote {CONDA_PINS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
