"""`make update` in the learners' tree: the course's new weeks and errata arrive, and the learner's
work stays. Shipped as tools/update.py. It runs before any environment exists, so it needs only the
standard library (nbformat, where present, only to upgrade notebooks older than version 4).

The model is nbgitpuller's automatic merging (nbgitpuller docs, topic/automatic-merging.md, and
nbgitpuller/pull.py), case by case:

1. a file the learner never changed takes the release's version; new files arrive;
2. a text file both changed: the release's changes are merged in line by line (`git merge-file`);
3. where both changed the same lines, the learner's lines win (nbgitpuller merges with `-Xours`);
4. a file the learner deleted comes back;
5. a file the learner created that the release now adds: theirs is renamed beside it
   (`name.mine-<time>.ext`), the release's takes the name;
6. commits the learner made: nbgitpuller backs the whole folder up; here they are kept on a branch
   `my-work-<time>`, and their content stays in the working tree as the learner's changes.

Notebooks are compared on their cells' sources, never on outputs, execution counts or metadata: a
notebook the learner only ran counts as unchanged, so it takes the release (its outputs are dropped,
and said so). A walkthrough whose sources the learner edited stays theirs, the release's copy beside
it (`name.release-<time>.ipynb`). Lab notebooks are merged cell by cell instead, since a learner
changes every one of them:

- an answer cell (nbgrader `solution`) keeps the learner's source and outputs; if the release also
  changed that cell's starter code, the learner's stays and the summary says so;
- every other cell with a grade_id (instructions, tests, the parameters) is the release's: that is
  where errata go;
- cells the learner added (no grade_id) stay, after the graded cell they followed.

Nothing is lost: every file the update replaces, merges or removes is first copied to
`.update-backups/<time>/`, and so is a staged (`git add`ed) version that differs from the file on
disk. Then git's HEAD and index move to the release (`git reset --mixed`), the working tree
untouched, so `git status` shows exactly the learner's own changes against the new release, and the
next update starts from there.

    python3 tools/update.py             # fetch origin, merge its branch into this checkout
    python3 tools/update.py --ref REF   # merge a ref already fetched (no fetch)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path, PurePosixPath

BACKUPS = ".update-backups"
BRANCH = "my-work-"


def git(root: Path, *args: str, binary: bool = False):
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, check=True)
    return out.stdout if binary else out.stdout.decode().strip()


def rev(root: Path, *args: str) -> str | None:
    """A commit id, or None where git finds none (no upstream, unrelated histories)."""
    try:
        return git(root, *args) or None
    except subprocess.CalledProcessError:
        return None


def tree(root: Path, ref: str) -> dict[str, str]:
    """path -> blob id of every file in `ref`."""
    rows = git(root, "ls-tree", "-r", "-z", ref).split("\0")
    return {row.split("\t", 1)[1]: row.split()[2] for row in rows if row and row.split()[1] == "blob"}


def index(root: Path) -> dict[str, str]:
    """path -> blob id of every file staged in the index (stage 0)."""
    rows = git(root, "ls-files", "-s", "-z").split("\0")
    return {row.split("\t", 1)[1]: row.split()[1] for row in rows if row and row.split()[2] == "0"}


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


def read_notebook(data: bytes) -> dict | None:
    """The notebook in `data` as nbformat 4, or None if it is not one. Version 4 (every notebook the course
    ships) is plain JSON, which is all nbformat's own reader does for it; an older notebook is upgraded
    with nbformat where the Python running this has it. (Importing nbformat costs seconds, through
    jsonschema, and the learner's python3 usually lacks it, so it is not imported for version 4.)"""
    try:
        nb = json.loads(data)
    except ValueError:
        return None
    if not isinstance(nb, dict):
        return None
    if isinstance(nb.get("nbformat"), int) and nb["nbformat"] < 4:
        try:
            from nbformat import convert, reader
            return convert(reader.reads(data.decode()), 4)
        except Exception:  # no nbformat, or it cannot read this one either
            return None
    return nb


def sources(data: bytes) -> list[tuple[str, str]] | None:
    """What the learner can edit in a notebook: each cell's type and source. Outputs, execution counts
    and metadata (cell or notebook) are left out, so a notebook the learner only ran compares equal."""
    nb = read_notebook(data)
    if nb is None or not isinstance(nb.get("cells"), list):
        return None
    return [(c.get("cell_type", ""), _source(c)) for c in nb["cells"] if isinstance(c, dict)]


def learner_changed(path: str, mine: bytes, base: bytes) -> bool:
    if mine == base:
        return False
    if path.endswith(".ipynb"):
        theirs = sources(mine)
        return theirs is None or theirs != sources(base)
    return True


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


def merge_text(root: Path, mine: bytes, base: bytes, release: bytes) -> tuple[bytes, int] | None:
    """Three-way line merge, the learner's lines winning where both changed the same ones (nbgitpuller's
    `git merge -Xours`). Returns the merged bytes and how many such clashes there were, or None for
    files git will not merge line by line (binary)."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for name, data in (("mine", mine), ("base", base), ("release", release)):
            (Path(tmp) / name).write_bytes(data)
            files.append(str(Path(tmp) / name))
        plain = subprocess.run(["git", "merge-file", "-p", "-q", *files], cwd=root, capture_output=True)
        if not 0 <= plain.returncode < 128:
            return None
        ours = subprocess.run(["git", "merge-file", "-p", "-q", "--ours", *files], cwd=root, capture_output=True)
        if ours.returncode != 0:
            return None
        return ours.stdout, plain.returncode


def beside(path: str, tag: str) -> str:
    """`course/week01.ipynb`, `release-<time>` -> `course/week01.release-<time>.ipynb`."""
    p = PurePosixPath(path)
    return str(p.with_name(f"{p.stem}.{tag}{p.suffix}"))


def _fetch_and_pick(root: Path, ref: str | None) -> tuple[str, str | None]:
    """The release to merge, and the release this checkout last took (the upstream before fetching)."""
    before = rev(root, "rev-parse", "--verify", "-q", "@{upstream}^{commit}")
    if ref is None:
        git(root, "fetch", "--quiet", "origin")
        try:
            ref = git(root, "rev-parse", "--abbrev-ref", "@{upstream}")
        except subprocess.CalledProcessError:
            ref = "origin/" + git(root, "rev-parse", "--abbrev-ref", "HEAD")
    return ref, before


def update(root: Path, ref: str | None = None) -> list[str]:
    """Merge the release at `ref` (default: fetch origin and take the current branch's upstream) into the
    checkout at `root`. Returns the summary lines."""
    ref, before = _fetch_and_pick(root, ref)
    head = rev(root, "rev-parse", "--verify", "-q", "HEAD")
    if head is None:
        raise SystemExit("update: this checkout has no commit yet; clone the course's repository instead")
    # The learner's changes are measured from the last release they took, not from HEAD: a commit of
    # their own is still their work.
    base_commit = (before and rev(root, "merge-base", head, before)) or rev(root, "merge-base", head, ref) or head
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = root / BACKUPS / stamp
    backup_rel = f"{BACKUPS}/{stamp}/"
    new, old, committed = tree(root, ref), tree(root, base_commit), tree(root, head)
    summary: list[str] = []
    saved: list[str] = []

    def blob(sha: str) -> bytes:
        return git(root, "cat-file", "blob", sha, binary=True)

    def save(path: str, data: bytes, suffix: str = "") -> None:
        dest = backup / (path + suffix)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        saved.append(path + suffix)

    def write(path: str, data: bytes) -> None:
        here = root / path
        here.parent.mkdir(parents=True, exist_ok=True)
        here.write_bytes(data)

    # Case 6: the learner's own commits stay reachable, on a branch of their own.
    # (commits the course published, before or after a force-push, are not the learner's)
    if rev(root, "rev-list", "-n1", head, "--not", ref, *([before] if before else [])):
        branch = BRANCH + stamp
        n = 1
        while rev(root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}"):
            n += 1
            branch = f"{BRANCH}{stamp}-{n}"
        git(root, "branch", branch, head)
        summary.append(f"your commits are kept on branch {branch} (see them: git log {branch}); their changes "
                       f"stay in your files")

    # `git reset` below rewrites the index: a staged version that differs from the file on disk is copied.
    staged = index(root)
    for path, sha in sorted(staged.items()):
        here = root / path
        mine = here.read_bytes() if here.is_file() else None
        if sha not in (old.get(path), new.get(path), committed.get(path)):
            data = blob(sha)
            if data != mine:
                save(path, data, ".staged")
                summary.append(f"your staged version of {path} differs from the file: it is saved as "
                               f"{backup_rel}{path}.staged")

    for path, sha in sorted(new.items()):
        here = root / path
        mine = here.read_bytes() if here.is_file() else None
        release = blob(sha)
        if mine == release:
            continue
        if path not in old:
            if mine is not None:  # case 5: theirs moves aside, the release's takes the name
                mine_as = beside(path, "mine-" + stamp)
                save(path, mine)
                write(mine_as, mine)
                summary.append(f"the release adds {path}, which you had too: yours is now {mine_as}")
            else:
                summary.append(f"new: {path}")
            write(path, release)
            continue
        if mine is None:  # case 4
            write(path, release)
            summary.append(f"restored {path} (it had been deleted)")
            continue
        if sha == old[path]:  # the release did not change it: the learner's version stays
            continue
        base = blob(old[path])
        if not learner_changed(path, mine, base):  # case 1
            save(path, mine)
            write(path, release)
            if mine != base and path.endswith(".ipynb"):
                summary.append(f"updated {path}: you had run it but not edited it, so it takes the release and "
                               f"its outputs are dropped (your copy: {backup_rel}{path})")
            else:
                summary.append(f"updated: {path}")
            continue
        if is_lab_notebook(path):
            save(path, mine)
            save(path, release, ".release")
            try:
                merged, notes = merge_notebook(json.loads(mine), json.loads(release), json.loads(base))
            except (ValueError, AttributeError, TypeError):
                summary.append(f"kept your {path}: it is not a readable notebook (the release's is "
                               f"{backup_rel}{path}.release)")
                continue
            write(path, (json.dumps(merged, indent=1, ensure_ascii=False) + "\n").encode())
            summary.append(f"merged {path}: your answers kept, the release's instructions and tests taken "
                           f"(your copy: {backup_rel}{path})")
            summary += [f"  {n}" for n in notes]
        elif path.endswith(".ipynb"):
            release_as = beside(path, "release-" + stamp)
            write(release_as, release)
            summary.append(f"kept your {path} (you edited its cells); the new release is beside it: {release_as}")
        else:  # cases 2 and 3
            merged = merge_text(root, mine, base, release)
            save(path, mine)
            save(path, release, ".release")
            if merged is None:
                summary.append(f"kept your changed {path} (the release's version is {backup_rel}{path}.release)")
                continue
            write(path, merged[0])
            clash = (f"; where you both changed the same lines yours were kept ({merged[1]} place(s))"
                     if merged[1] else "")
            summary.append(f"merged {path}: the release's changes taken{clash} (your copy: {backup_rel}{path}, "
                           f"the release's: {backup_rel}{path}.release)")
    for path in sorted(set(old) - set(new)):
        here = root / path
        if not here.is_file():
            continue
        mine = here.read_bytes()
        if learner_changed(path, mine, blob(old[path])):
            summary.append(f"kept your {path}, which the release no longer has")
        else:
            save(path, mine)
            here.unlink()
            summary.append(f"removed {path} (the release dropped it; your copy: {backup_rel}{path})")
    git(root, "reset", "--quiet", "--mixed", ref)
    ignore = root / ".gitignore"
    if ignore.is_file() and BACKUPS not in ignore.read_text():
        ignore.write_text(ignore.read_text().rstrip("\n") + f"\n{BACKUPS}/\n")
    if saved:
        summary.append(f"copies of everything this update replaced or removed: {backup_rel}")
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
