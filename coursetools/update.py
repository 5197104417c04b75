"""`make update` in the learners' tree: the course's new weeks and errata arrive, and the learner's
work stays. Shipped as tools/update.py; standard library only (it runs before any environment).

The model is nbgitpuller's: a file the learner never changed takes the new release's version, a
file they deleted comes back, and a file they changed stays theirs. Lab notebooks are merged cell by
cell instead, since a learner changes every one of them:

- an answer cell (nbgrader `solution`) keeps the learner's source and outputs; if the release also
  changed that cell's starter code, the learner's stays and the summary says so;
- every other cell with a grade_id (instructions, tests, the parameters) is the release's: that is
  where errata go;
- cells the learner added (no grade_id) stay, after the graded cell they followed.

What it replaces is saved first under `.update-backups/<time>/`. Then git's HEAD and index move to
the release (`git reset --mixed`), the working tree untouched, so `git status` shows exactly the
learner's own changes against the new release, and the next update starts from there.

    python3 tools/update.py             # fetch origin, merge its branch into this checkout
    python3 tools/update.py --ref REF   # merge a ref already fetched (no fetch)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path, PurePosixPath

BACKUPS = ".update-backups"


def git(root: Path, *args: str, binary: bool = False):
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, check=True)
    return out.stdout if binary else out.stdout.decode().strip()


def tree(root: Path, ref: str) -> dict[str, str]:
    """path -> blob id of every file in `ref`."""
    rows = git(root, "ls-tree", "-r", ref).splitlines()
    return {line.split("\t", 1)[1]: line.split()[2] for line in rows if line.split()[1] == "blob"}


def is_lab_notebook(path: str) -> bool:
    p = PurePosixPath(path)
    return len(p.parts) == 3 and p.parts[0] == "labs" and p.suffix == ".ipynb" and p.stem == p.parts[1]


def _grade_id(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _is_answer(cell: dict) -> bool:
    return bool(cell.get("metadata", {}).get("nbgrader", {}).get("solution"))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def merge_notebook(mine: dict, release: dict, base: dict | None) -> tuple[dict, list[str]]:
    """The release's notebook with the learner's answers and own cells in it; notes for the summary."""
    notes = []
    my_cells = {g: c for c in mine.get("cells", []) if (g := _grade_id(c))}
    base_cells = {g: c for c in (base or {}).get("cells", []) if (g := _grade_id(c))}
    added: dict[str | None, list[dict]] = {}  # grade_id of the graded cell before -> the learner's cells after it
    anchor = None
    for cell in mine.get("cells", []):
        if _grade_id(cell):
            anchor = _grade_id(cell)
        else:
            added.setdefault(anchor, []).append(cell)
    cells = list(added.pop(None, []))
    for cell in release.get("cells", []):
        g = _grade_id(cell)
        if g and _is_answer(cell) and g in my_cells:
            if g in base_cells and _source(base_cells[g]) != _source(cell) \
                    and _source(my_cells[g]) != _source(base_cells[g]):
                notes.append(f"the release changed the starter code of answer cell {g!r}; yours is kept "
                             f"(the release's is in the backup's .release copy)")
            cells.append(my_cells[g])
        else:
            cells.append(cell)
        cells.extend(added.pop(g, []) if g else [])
    for orphans in added.values():  # the graded cell they followed is gone from the release
        cells.extend(orphans)
    merged = dict(release)
    merged["cells"] = cells
    lost = [g for g in my_cells if _is_answer(my_cells[g]) and g not in {_grade_id(c) for c in cells}]
    if lost:
        merged["cells"] = cells + [my_cells[g] for g in lost]
        notes.append(f"answer cells the release no longer has were kept at the end: {lost}")
    return merged, notes


def update(root: Path, ref: str | None = None) -> list[str]:
    """Merge the release at `ref` (default: fetch origin and take the current branch's upstream) into the
    checkout at `root`. Returns the summary lines."""
    if ref is None:
        git(root, "fetch", "--quiet", "origin")
        try:
            ref = git(root, "rev-parse", "--abbrev-ref", "@{upstream}")
        except subprocess.CalledProcessError:
            ref = "origin/" + git(root, "rev-parse", "--abbrev-ref", "HEAD")
    new, old = tree(root, ref), tree(root, "HEAD")
    backup = root / BACKUPS / time.strftime("%Y%m%d-%H%M%S")
    summary = []

    def save(path: str, data: bytes, suffix: str = "") -> None:
        dest = backup / (path + suffix)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)

    for path, blob in sorted(new.items()):
        here = root / path
        mine = here.read_bytes() if here.is_file() else None
        release = git(root, "cat-file", "blob", blob, binary=True)
        base = git(root, "cat-file", "blob", old[path], binary=True) if path in old else None
        if mine == release:
            continue
        if blob == old.get(path):  # the release did not change it: the learner's version stays
            if mine is None:
                here.parent.mkdir(parents=True, exist_ok=True)
                here.write_bytes(release)
                summary.append(f"restored {path} (it had been deleted)")
            continue
        if mine is None or mine == base:
            here.parent.mkdir(parents=True, exist_ok=True)
            here.write_bytes(release)
            summary.append(f"{'new' if path not in old else 'updated'}: {path}")
            continue
        save(path, mine)
        save(path, release, ".release")
        if is_lab_notebook(path):
            try:
                merged, notes = merge_notebook(json.loads(mine), json.loads(release),
                                               json.loads(base) if base else None)
            except (ValueError, AttributeError, TypeError):
                summary.append(f"kept your {path}: it is not a readable notebook (the release's is in {backup})")
                continue
            here.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n")
            summary.append(f"merged {path}: your answers kept, the release's instructions and tests taken")
            summary += [f"  {n}" for n in notes]
        else:
            summary.append(f"kept your changed {path} (the release's version is in {backup})")
    for path in sorted(set(old) - set(new)):
        here = root / path
        if here.is_file() and here.read_bytes() == git(root, "cat-file", "blob", old[path], binary=True):
            here.unlink()
            summary.append(f"removed {path} (the release dropped it)")
    git(root, "reset", "--quiet", "--mixed", ref)
    ignore = root / ".gitignore"
    if ignore.is_file() and BACKUPS not in ignore.read_text():
        ignore.write_text(ignore.read_text().rstrip("\n") + f"\n{BACKUPS}/\n")
    return summary or ["already up to date"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ref", help="merge this ref, already fetched (default: fetch origin, take the upstream)")
    p.add_argument("--root", type=Path, default=Path.cwd())
    a = p.parse_args(argv)
    try:
        summary = update(a.root, a.ref)
    except subprocess.CalledProcessError as e:
        print(f"update failed: git {' '.join(e.cmd[1:])}: {e.stderr.decode().strip()}", file=sys.stderr)
        return 1
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
