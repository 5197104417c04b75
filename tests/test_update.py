"""The learners' `make update` (coursetools/update.py, shipped as tools/update.py), case by case.

Each test builds a scratch pair of repositories: the course's (an instructor's clone pushing to a bare
origin) and a learner's clone of it holding the learners' Makefile and tools/update.py, and runs
`make update` there as a learner would.

The cases follow nbgitpuller, the tool JupyterHub courses use for the same job:
- its documentation, "Automatic Merging Behavior" (jupyterhub/nbgitpuller docs/topic/automatic-merging.md,
  https://nbgitpuller.readthedocs.io/en/latest/topic/automatic-merging.html), cases 1 to 6;
- its source, jupyterhub/nbgitpuller nbgitpuller/pull.py (`GitPuller.update`: fetch, rename the learner's
  untracked files that the release adds, `git checkout --` deleted files, commit the learner's changes,
  `git merge -Xours`).
Where this course goes further than nbgitpuller (staged versions, notebooks compared on their sources,
backups of what is replaced), the test says so.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from coursetools import update as upd

TOOLS = Path(upd.__file__)
TEMPLATE_MAKEFILE = Path(__file__).parent.parent / "coursetools" / "student_template" / "Makefile"
IDENTITY = ["-c", "user.name=someone", "-c", "user.email=someone@example.org"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def notebook(*sources: str, outputs: bool = False, cell_type: str = "code") -> str:
    """A notebook of code cells with these sources; `outputs`: as if run (outputs, counts, metadata)."""
    nb = nbformat.v4.new_notebook()
    for i, src in enumerate(sources, 1):
        cell = nbformat.v4.new_code_cell(src) if cell_type == "code" else nbformat.v4.new_markdown_cell(src)
        cell["id"] = f"cell-{i}"
        if outputs and cell_type == "code":
            cell["execution_count"] = i
            cell["outputs"] = [nbformat.v4.new_output("stream", name="stdout", text=f"ran cell {i}\n")]
            cell["metadata"]["execution"] = {"iopub.status.idle": "2025-01-01T00:00:00Z"}
        nb["cells"].append(cell)
    if outputs:
        nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(nb) + "\n"


def lab(answer: str, instructions: str = "Fill in `strides`.", test: str = "assert strides((2, 3)) == (3, 1)",
        outputs: bool = False) -> str:
    """A lab notebook as `make student-dist` writes one: nbgrader cells with grade_ids."""
    nb = nbformat.v4.new_notebook()
    cells = [nbformat.v4.new_markdown_cell(instructions), nbformat.v4.new_code_cell(answer),
             nbformat.v4.new_code_cell(test)]
    for i, (cell, gid, extra) in enumerate(zip(cells, ("intro", "strides", "test_strides"),
                                                ({}, {"solution": True}, {"grade": True, "points": 1}))):
        cell["id"] = f"cell-{i}"
        cell["metadata"]["nbgrader"] = {"grade_id": gid, "locked": gid != "strides", "schema_version": 3,
                                        "solution": False, "grade": False, "task": False, **extra}
        if outputs and cell["cell_type"] == "code":
            cell["execution_count"] = i
            cell["outputs"] = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]
    nb["cells"] = cells
    return nbformat.writes(nb) + "\n"


def sources_of(path: Path) -> list[str]:
    return [c["source"] for c in nbformat.reads(path.read_text(), as_version=4)["cells"]]


LAB = "labs/lab01-strides/lab01-strides.ipynb"
WALK = "course/week01-strides.ipynb"
STARTER = "def strides(shape):\n    # YOUR CODE HERE\n    raise NotImplementedError()"


class Course:
    """The course's repository (what the instructor pushes) and one learner's clone of it."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.origin, self.release, self.learner = tmp / "origin.git", tmp / "release", tmp / "learner"
        git(tmp, "init", "-q", "--bare", "-b", "main", str(self.origin))
        git(tmp, "init", "-q", "-b", "main", str(self.release))
        git(self.release, "remote", "add", "origin", str(self.origin))
        (self.release / "tools").mkdir()
        shutil.copy(TOOLS, self.release / "tools" / "update.py")
        shutil.copy(TEMPLATE_MAKEFILE, self.release / "Makefile")
        (self.release / ".gitignore").write_text(".venv/\n__pycache__/\n.ipynb_checkpoints/\n.update-backups/\n")

    def publish(self, files: dict[str, str | None], message: str = "release") -> None:
        """The instructor's push: write (or, for None, delete) these files and push."""
        for rel, text in files.items():
            p = self.release / rel
            if text is None:
                p.unlink()
            else:
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(text)
        git(self.release, "add", "-A")
        git(self.release, "commit", "-qm", message)
        git(self.release, "push", "-q", "origin", "HEAD:main")

    def clone(self) -> Path:
        git(self.tmp, "clone", "-q", str(self.origin), str(self.learner))
        return self.learner

    def update(self, python: str = sys.executable) -> str:
        """`make update` in the learner's clone; its printed summary."""
        out = subprocess.run(["make", "-s", "update", f"PYTHON3={python}"], cwd=self.learner,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, (f"`make update` should succeed, but it exited {out.returncode}.\n"
                                     f"stdout:\n{out.stdout}\nstderr:\n{out.stderr}")
        return out.stdout

    def file(self, rel: str) -> Path:
        return self.learner / rel

    def backups(self, name: str) -> list[Path]:
        return sorted((self.learner / upd.BACKUPS).rglob(name))


@pytest.fixture
def course(tmp_path):
    return Course(tmp_path)


def test_case1_unchanged_files_take_the_release_and_new_files_arrive(course):
    """nbgitpuller docs, Automatic Merging Behavior, case 1: "The instructor changed a file that the student
    has not changed" -> the instructor's changes are pulled in; "also what happens when the instructor adds
    a new file / directory"."""
    course.publish({"README.md": "week 1\n", WALK: notebook("x = 1")})
    course.clone()
    course.publish({"README.md": "week 1 and 2\n", "course/week02-dispatcher.ipynb": notebook("y = 2")})
    out = course.update()
    assert course.file("README.md").read_text() == "week 1 and 2\n", (
        f"an unchanged README should take the release's text; it holds {course.file('README.md').read_text()!r}. "
        f"Summary:\n{out}")
    assert course.file("course/week02-dispatcher.ipynb").is_file(), f"the new week should arrive. Summary:\n{out}"
    assert git(course.learner, "status", "--porcelain") == "", (
        "after an update with no learner changes, `git status` should be clean (HEAD moved to the release)")
    again = course.update()
    assert again.strip() == "already up to date", f"a second update should have nothing to do; it printed:\n{again}"


def test_case2_different_lines_of_one_file_are_merged(course):
    """nbgitpuller docs, case 2: "Student & instructor changed different lines in same file" -> "the
    instructor's changes are merged in to the existing local file" (pull.py: `git merge -Xours`).
    This course also copies the learner's file to the backups first, since the update rewrites it."""
    lines = [f"line {i}\n" for i in range(1, 9)]
    course.publish({"labkit/notes.py": "".join(lines)})
    course.clone()
    mine = lines.copy()
    mine[0] = "line 1 # my comment\n"
    course.file("labkit/notes.py").write_text("".join(mine))
    theirs = lines.copy()
    theirs[7] = "line 8 # erratum\n"
    course.publish({"labkit/notes.py": "".join(theirs)})
    out = course.update()
    text = course.file("labkit/notes.py").read_text()
    assert "line 1 # my comment" in text and "line 8 # erratum" in text, (
        f"expected both the learner's line 1 and the release's line 8 in the file, got:\n{text}\n"
        f"(a file changed on both sides was probably kept whole instead of merged line by line). Summary:\n{out}")
    backup = course.backups("notes.py")
    assert backup and backup[0].read_text() == "".join(mine), (
        f"the learner's version should be copied to {upd.BACKUPS}/ before the merge rewrites it; found {backup}")
    assert str(backup[0].parent.parent.relative_to(course.learner)) in out, \
        f"the summary should name the backup folder:\n{out}"


def test_case3_same_lines_keep_the_learners(course):
    """nbgitpuller docs, case 3: "Student & instructor change same lines in same file" -> "we always keep the
    student's changes" (pull.py: `git merge -Xours`). The release's version is kept in the backups."""
    middle = "".join(f"# line {i}\n" for i in range(6))  # far enough apart for git to merge the ends separately
    course.publish({"labkit/config.py": f"DEVICE = 'cpu'\n{middle}SEED = 0\n"})
    course.clone()
    course.file("labkit/config.py").write_text(f"DEVICE = 'cuda'\n{middle}SEED = 0\n")
    course.publish({"labkit/config.py": f"DEVICE = 'mps'\n{middle}SEED = 1\n"})
    out = course.update()
    text = course.file("labkit/config.py").read_text()
    assert text == f"DEVICE = 'cuda'\n{middle}SEED = 1\n", (
        f"expected the learner's DEVICE line and the release's SEED line, got {text!r}. Summary:\n{out}")
    release = course.backups("config.py.release")
    assert release and "DEVICE = 'mps'" in release[0].read_text(), (
        f"the release's own version should be kept in {upd.BACKUPS}/ as config.py.release; found {release}")


@pytest.mark.parametrize("release_changes_it", [False, True], ids=["release-unchanged", "release-changed"])
def test_case4_a_deleted_file_comes_back(course, release_changes_it):
    """nbgitpuller docs, case 4: "Student deletes file locally, but instructor doesn't" -> "the file from the
    remote repo is pulled into the student's directory" (pull.py: `reset_deleted_files`)."""
    course.publish({WALK: notebook("x = 1"), "README.md": "r\n"})
    course.clone()
    course.file(WALK).unlink()
    course.publish({WALK: notebook("x = 2")} if release_changes_it else {"README.md": "r2\n"})
    out = course.update()
    assert course.file(WALK).is_file(), f"the deleted {WALK} should be restored; summary:\n{out}"
    assert sources_of(course.file(WALK)) == ["x = 2" if release_changes_it else "x = 1"], (
        f"the restored file should be the release's, got {sources_of(course.file(WALK))}")


def test_case5_learners_file_with_a_released_name_is_renamed_not_lost(course):
    """nbgitpuller docs, case 5: "Student creates file manually, but instructor adds file with same name" ->
    the student's file is renamed (nbgitpuller: `Untitled141_<timestamp>.ipynb`; here
    `Untitled141.mine-<time>.ipynb`) and the instructor's takes the name (pull.py: `rename_local_untracked`)."""
    course.publish({"README.md": "r\n"})
    course.clone()
    course.file("course/Untitled141.ipynb").parent.mkdir(parents=True, exist_ok=True)
    course.file("course/Untitled141.ipynb").write_text(notebook("my own experiment"))
    course.publish({"course/Untitled141.ipynb": notebook("the instructor's notebook")})
    out = course.update()
    assert sources_of(course.file("course/Untitled141.ipynb")) == ["the instructor's notebook"], (
        f"the release's file should take the name; it holds {sources_of(course.file('course/Untitled141.ipynb'))}")
    renamed = sorted(course.file("course").glob("Untitled141.mine-*.ipynb"))
    assert len(renamed) == 1 and sources_of(renamed[0]) == ["my own experiment"], (
        f"the learner's file should be renamed beside it as Untitled141.mine-<time>.ipynb; found {renamed} "
        f"(it was probably kept in place or overwritten). Summary:\n{out}")
    assert renamed[0].name in out, f"the summary should name the renamed file:\n{out}"


def test_case6_learners_commits_are_kept_on_a_branch(course):
    """nbgitpuller docs, case 6: "student performs a git commit" -> nbgitpuller backs up the whole copy
    (`<repo_name>_backup_<YYYYMMDDHHMMSS>`). Here the commits are kept on a branch `my-work-<time>` that the
    summary names, and their work stays in the files: a committed lab answer is not replaced by the blank
    release, and a committed walkthrough edit is not lost."""
    course.publish({LAB: lab(STARTER), WALK: notebook("x = 1", "y = 2")})
    course.clone()
    course.file(LAB).write_text(lab("def strides(shape):\n    return (shape[1], 1)"))
    course.file(WALK).write_text(notebook("x = 1  # I get it now", "y = 2"))
    git(course.learner, "commit", "-qam", "my answers")
    mine = git(course.learner, "rev-parse", "HEAD").strip()
    course.publish({LAB: lab(STARTER, instructions="Fill in `strides` (corrected)."),
                    WALK: notebook("x = 1", "y = 3")})
    out = course.update()
    branches = git(course.learner, "branch", "--list", "my-work-*", "--format=%(refname:short) %(objectname)")
    assert branches.count("my-work-") == 1 and mine in branches, (
        f"the learner's commit {mine[:8]} should be kept on a my-work-<time> branch; branches: {branches!r} "
        f"(the update probably moved the branch to the release and left the commit to the reflog)")
    branch = branches.split()[0]
    assert branch in out, f"the summary should print the branch name {branch}:\n{out}"
    answer = sources_of(course.file(LAB))[1]
    assert "return (shape[1], 1)" in answer, (
        f"the learner's committed answer should stay in the lab, got {answer!r}: the commit was probably taken "
        f"as the base, so the lab looked unchanged and the blank release replaced it. Summary:\n{out}")
    assert sources_of(course.file(LAB))[0].endswith("(corrected)."), "the lab's corrected instructions arrive"
    assert sources_of(course.file(WALK))[0] == "x = 1  # I get it now", (
        f"the learner's committed walkthrough edit should stay, got {sources_of(course.file(WALK))}")
    again = course.update()
    assert again.strip() == "already up to date", f"a second update should have nothing to do:\n{again}"
    assert git(course.learner, "branch", "--list", "my-work-*").count("my-work-") == 1, "no second branch"


def test_staged_and_unstaged_versions_both_survive(course):
    """Beyond nbgitpuller (pull.py commits with `git commit -am`, which keeps only the working version): a
    file `git add`ed and then edited again has two versions of the learner's; the update resets the index,
    so the staged one is copied to the backups as <name>.staged and the summary says where."""
    course.publish({"labkit/scratch.py": "a = 1\n", "README.md": "r\n"})
    course.clone()
    course.file("labkit/scratch.py").write_text("a = 2  # staged\n")
    git(course.learner, "add", "labkit/scratch.py")
    course.file("labkit/scratch.py").write_text("a = 3  # working\n")
    course.publish({"README.md": "r2\n"})
    out = course.update()
    assert course.file("labkit/scratch.py").read_text() == "a = 3  # working\n", "the working version stays"
    staged = course.backups("scratch.py.staged")
    assert staged and staged[0].read_text() == "a = 2  # staged\n", (
        f"the staged version should be copied to {upd.BACKUPS}/…/labkit/scratch.py.staged before the index is "
        f"reset; found {staged}. Summary:\n{out}")
    assert "scratch.py.staged" in out, f"the summary should say where the staged version went:\n{out}"


@pytest.mark.parametrize("bare", [False, True], ids=["venv-python", "bare-python"])
def test_walkthrough_only_run_takes_the_errata(course, bare):
    """Notebooks compare on their sources: a walkthrough the learner only ran (outputs, execution counts,
    metadata) counts as unchanged, so it takes the release's errata (nbgitpuller docs case 1; nbgitpuller
    itself compares bytes, so there a run notebook counts as changed and keeps its errors). Its outputs are
    dropped, the summary says so, and the run copy is in the backups. `bare-python`: a python3 without the
    course's packages (`-S` hides the venv's), as `make update` runs before any environment exists."""
    course.publish({WALK: notebook("x = 1", "print(x)")})
    course.clone()
    ran = notebook("x = 1", "print(x)", outputs=True)
    course.file(WALK).write_text(ran)
    course.publish({WALK: notebook("x = 1", "print(x)  # erratum")})
    out = course.update(f"{sys.executable} -S" if bare else sys.executable)
    assert sources_of(course.file(WALK)) == ["x = 1", "print(x)  # erratum"], (
        f"a walkthrough the learner only ran should take the release, got {sources_of(course.file(WALK))}: "
        f"outputs were probably counted as a change. Summary:\n{out}")
    assert "outputs" in out and WALK in out, f"the summary should say the outputs were dropped:\n{out}"
    backup = course.backups("week01-strides.ipynb")
    assert backup and backup[0].read_text() == ran, (
        f"the run copy should be saved in {upd.BACKUPS}/ before it is replaced; found {backup}")


def test_walkthrough_with_edited_sources_is_kept_and_the_release_put_beside_it(course):
    """A walkthrough whose cells the learner edited is theirs (nbgitpuller docs case 3: "we always keep the
    student's changes"); the release goes beside it as week01-strides.release-<time>.ipynb, named in the
    summary. Outputs alone do not make a notebook the learner's (see the test above)."""
    course.publish({WALK: notebook("x = 1", "print(x)")})
    course.clone()
    course.file(WALK).write_text(notebook("x = 1", "print(x, 'my note')", outputs=True))
    course.publish({WALK: notebook("x = 1", "print(x)  # erratum")})
    out = course.update()
    assert sources_of(course.file(WALK)) == ["x = 1", "print(x, 'my note')"], (
        f"the learner's edited walkthrough should stay, got {sources_of(course.file(WALK))}. Summary:\n{out}")
    beside = sorted(course.file("course").glob("week01-strides.release-*.ipynb"))
    assert len(beside) == 1 and sources_of(beside[0])[1] == "print(x)  # erratum", (
        f"the release should be put beside it as week01-strides.release-<time>.ipynb; found {beside} "
        f"(it probably went only to {upd.BACKUPS}/)")
    assert beside[0].name in out, f"the summary should name {beside[0].name}:\n{out}"
    assert course.update().strip() == "already up to date", "a second update should have nothing to do"


def test_lab_only_run_takes_the_release_and_an_edited_one_keeps_its_answer(course):
    """A lab notebook the learner only ran takes the whole release, starter code errata included; one whose
    answer they wrote keeps it while the instructions and tests take the release (the cell merge)."""
    course.publish({LAB: lab(STARTER), "labs/lab02-dispatch/lab02-dispatch.ipynb": lab(STARTER)})
    course.clone()
    course.file(LAB).write_text(lab(STARTER, outputs=True))
    other = "labs/lab02-dispatch/lab02-dispatch.ipynb"
    course.file(other).write_text(lab("def strides(shape):\n    return 'mine'", outputs=True))
    fixed = STARTER.replace("(shape)", "(shape: tuple)")
    course.publish({LAB: lab(fixed, test="assert strides((2,)) == (1,)"),
                    other: lab(fixed, test="assert strides((2,)) == (1,)")})
    out = course.update()
    assert sources_of(course.file(LAB))[1] == fixed, (
        f"a lab the learner only ran should take the corrected starter code, got {sources_of(course.file(LAB))[1]!r}"
        f": its outputs were probably counted as an answer. Summary:\n{out}")
    kept = sources_of(course.file(other))
    assert "return 'mine'" in kept[1] and kept[2] == "assert strides((2,)) == (1,)", (
        f"an answered lab should keep the answer and take the new test, got {kept}. Summary:\n{out}")
    assert course.backups("lab01-strides.ipynb"), "the run lab is copied to the backups before it is replaced"


def test_files_the_release_drops(course):
    """pull.py merges with `git merge`: a file the release deletes goes if the learner never changed it (here
    copied to the backups first), and stays if they did."""
    course.publish({"course/old.ipynb": notebook("a"), "course/mine.ipynb": notebook("b"), "README.md": "r\n"})
    course.clone()
    course.file("course/mine.ipynb").write_text(notebook("b  # my change"))
    course.publish({"course/old.ipynb": None, "course/mine.ipynb": None})
    out = course.update()
    assert not course.file("course/old.ipynb").exists(), f"an unchanged dropped file should go:\n{out}"
    assert course.backups("old.ipynb"), "and be copied to the backups first"
    assert sources_of(course.file("course/mine.ipynb")) == ["b  # my change"], f"a changed one should stay:\n{out}"


def test_summary_lines_name_every_backup(course):
    """The learner reads the summary, not the code: every line about a replaced file points to its copy, and
    the last line names the backup folder."""
    course.publish({WALK: notebook("x = 1"), "README.md": "r\n"})
    course.clone()
    course.file(WALK).write_text(notebook("x = 1", outputs=True))
    course.publish({WALK: notebook("x = 2"), "README.md": "r2\n"})
    out = course.update().strip().splitlines()
    folder = next(p for p in (course.learner / upd.BACKUPS).iterdir())
    assert out[-1].endswith(f"{upd.BACKUPS}/{folder.name}/"), f"the last line should name the backup folder: {out}"
    for name in ("README.md", WALK):
        assert (folder / name).is_file(), f"{name} was replaced, so a copy should be in {folder}"
    assert json.loads((folder / WALK).read_text())["cells"][0]["outputs"], "the copy is the run one"


def test_sources_ignore_outputs_and_read_old_notebooks():
    """What counts as the learner's edit: cell types and sources only. An nbformat 3 copy (worksheets,
    `input` instead of `source`) is upgraded with nbformat (its v3 -> v4 converter) and compares equal to
    the same cells in version 4; text that is not a notebook compares as changed."""
    from nbformat import v3

    old = v3.new_notebook(worksheets=[v3.new_worksheet(cells=[v3.new_code_cell(input="x = 1", prompt_number=4)])])
    assert upd.sources(v3.writes_json(old).encode()) == [("code", "x = 1")], (
        f"an nbformat 3 notebook should read as its cells; got {upd.sources(v3.writes_json(old).encode())}")
    assert upd.sources(notebook("x = 1", outputs=True).encode()) == upd.sources(notebook("x = 1").encode())
    assert not upd.learner_changed(WALK, notebook("x = 1", outputs=True).encode(), notebook("x = 1").encode())
    assert upd.learner_changed(WALK, notebook("x = 1", cell_type="markdown").encode(), notebook("x = 1").encode()), \
        "a code cell turned markdown is an edit"
    assert upd.learner_changed(WALK, b"<<<<<<< not json", notebook("x = 1").encode()), "unreadable counts as changed"
