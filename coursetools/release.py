"""Student notebooks: `labs/<lab>/` is generated from `solutions/<lab>/` by nbgrader."""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder import notebooks as nbs
from autograder import settings
from autograder.grade import prepare_course


def generate(lab: str) -> Path:
    """Run nbgrader generate_assignment in a scratch course; return the release folder."""
    return prepare_course(lab, settings.SCRATCH / "release" / lab).parent


def release(lab: str) -> None:
    fresh = generate(lab)
    dest = settings.LABS / lab
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(fresh, dest)


def out_of_sync(lab: str, fresh_notebook: Path) -> str:
    """'' when labs/<lab>/<lab>.ipynb equals `fresh_notebook`, else what differs."""
    committed = settings.student_notebook(lab)
    if not committed.exists():
        return f"{committed.relative_to(settings.ROOT)} is missing; run `make release`"
    a, b = nbs.read(committed), nbs.read(fresh_notebook)
    if a == b:
        return ""
    if len(a.cells) != len(b.cells):
        return f"{len(a.cells)} cells committed, {len(b.cells)} generated; run `make release` and commit labs/"
    for i, (x, y) in enumerate(zip(a.cells, b.cells)):
        if x != y:
            return (f"cell {i} ({nbs.grade_id(y) or y.cell_type}) differs from a fresh generation; "
                    "run `make release` and commit labs/")
    return "notebook metadata differs from a fresh generation; run `make release` and commit labs/"


def main(labs: list[str]) -> int:
    for lab in labs:
        release(lab)
        print(f"released {lab} -> {settings.student_notebook(lab).relative_to(settings.ROOT)}")
    return 0
