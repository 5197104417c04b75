"""The learners' tree: complete, answer-free, and its `make lab` / `make validate` work."""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from autograder import notebooks as nbs
from autograder import settings
from coursetools.student_dist import build, leaks

VENV = str(Path(sys.executable).parent.parent)
LAB = "lab01-strides"


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    return build(tmp_path_factory.mktemp("dist") / "student")


def test_tree_has_what_learners_need(dist):
    for rel in ("README.md", "Makefile", "requirements.txt", "environment.yml", "nbgrader_config.py",
                "labkit/__init__.py", "tools/venv.py"):
        assert (dist / rel).is_file(), f"{rel} missing from the learners' tree"
    for lab in settings.labs():
        assert (dist / "labs" / lab / f"{lab}.ipynb").is_file()
    for path in settings.course_notebooks():
        assert (dist / "course" / path.name).is_file()
    assert not (dist / "solutions").exists() and not (dist / "autograder").exists()
    # Validate forgives the same harmless stderr as the grader
    assert settings.IGNORE_STDERR in (dist / "nbgrader_config.py").read_text()


def test_tree_holds_no_answers_hidden_tests_or_paths_to_them(dist):
    found = leaks(dist)
    assert not found, "\n".join(found)


def test_leak_check_would_catch_a_solution(dist, tmp_path):
    # The check itself must work: plant the instructor notebook and expect it found.
    planted = tmp_path / "planted"
    import shutil
    shutil.copytree(dist, planted)
    shutil.copy(settings.solution_notebook(LAB), planted / "labs" / LAB / "copy.ipynb")
    found = " ".join(leaks(planted))
    assert "BEGIN SOLUTION" in found and "solution code" in found and "hidden test" in found
    # and a whole answer pasted into shipped support code
    nb = nbs.read(settings.solution_notebook(LAB))
    answer = next(c.source for c in nb.cells if nbs.is_solution(c) and "as_strided" in c.source)
    (planted / "labkit" / "helpers.py").write_text(nbs.strip_solution_markers(answer))
    assert "holds a whole solution" in " ".join(leaks(planted))


def validate(dist, notebook: Path):
    return subprocess.run(["make", "-s", "validate", f"VENV={VENV}", f"LAB={notebook.parent.name}"],
                          cwd=dist, capture_output=True, text=True, env={**os.environ, "COURSE_REUSE_VENV": "1"})


def test_make_validate_fails_an_untouched_lab_and_names_the_tests(dist):
    proc = validate(dist, dist / "labs" / LAB / f"{LAB}.ipynb")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "FAILED" in out and "NotImplementedError" in out, out


def test_make_validate_passes_a_completed_lab(dist):
    path = dist / "labs" / LAB / f"{LAB}.ipynb"
    nbs.write(nbs.fill_solutions(nbs.read(path), nbs.read(settings.solution_notebook(LAB))), path)
    proc = validate(dist, path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success! Your notebook passes all the tests." in proc.stdout


def test_make_validate_names_a_known_mistake(lab01_diagnosis, tmp_path):
    """A learner whose answer makes a visible check fail the way a catalogue mutant does reads that mistake in
    Validate's output: the released lab carries known-mistakes.json (student_dist.write_known_mistakes) and
    labkit.testing.fail adds its words to the failure. A right answer's run names none."""
    from coursetools.demo import apply_mutant
    from coursetools.mutants import load_mutants

    dist = build(tmp_path / "student")
    table = json.loads((dist / "labs" / LAB / "known-mistakes.json").read_text())
    assert table, "lab 1's mutants fail visible checks with known messages"
    mutant = next(m for m in load_mutants(LAB) if m.name == "broadcast_view_builtin")
    path = dist / "labs" / LAB / f"{LAB}.ipynb"
    nbs.write(apply_mutant(nbs.read(path), nbs.read(settings.solution_notebook(LAB)), mutant), path)
    proc = validate(dist, path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "broadcast_view(t, (3, 4))" in out, out[-3000:]
    assert "..." not in out.split("this looks like a known mistake")[1].split("[ValidateApp")[0], \
        "the words are wrapped so that Validate, which cuts long lines, shows them whole"
    assert "this looks like a known mistake: `broadcast_view`: " + mutant.description.rstrip(".") in \
        re.sub(r"\s+", " ", out), out[-3000:]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_until_up(path: str, port: int, seconds: float = 30) -> str:
    """GET path from the local server, retrying while it finishes binding."""
    deadline = time.time() + seconds
    while True:
        for host in ("127.0.0.1", "[::1]"):
            try:
                return urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=10).read().decode()
            except OSError as exc:
                error = exc
        if time.time() > deadline:
            raise AssertionError(f"JupyterLab printed its URL but does not answer on port {port}: {error}")
        time.sleep(0.5)


def start_lab(cwd: Path):
    """`make lab` in `cwd`; return once the server answers, with the lines it printed."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env["COURSE_REUSE_VENV"] = "1"
    proc = subprocess.Popen(["make", "-s", "lab", f"VENV={VENV}", f"PORT={port}"], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    lines = []
    try:
        deadline = time.time() + 90
        ready = selectors.DefaultSelector()
        ready.register(proc.stdout, selectors.EVENT_READ)
        while time.time() < deadline:
            if not ready.select(timeout=1):  # never block past the deadline on a silent server
                if proc.poll() is not None:
                    break
                continue
            line = proc.stdout.readline()
            lines.append(line)
            # make lab opens on the landing page: http://127.0.0.1:<port>/lab/tree/course/START-HERE.ipynb?token=...
            url = re.search(rf"(?:127\.0\.0\.1|localhost):{port}/lab\S*\?token=(\w+)", line)
            if url:
                assert "START-HERE.ipynb" in line, f"make lab does not open the landing page: {line}"
                return "".join(lines), get_until_up(f"/api/contents/labs?token={url.group(1)}", port)
            if proc.poll() is not None:
                break
        pytest.fail("make lab did not print a URL within 90 s:\n" + "".join(lines))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def test_make_lab_starts_jupyterlab_in_the_learners_tree(dist):
    log, api = start_lab(dist)
    assert LAB in api, f"the server does not list labs/{LAB}: {api[:300]}"


def test_make_lab_starts_jupyterlab_in_the_course_repo():
    log, api = start_lab(settings.ROOT)
    assert LAB in api
    if os.geteuid() == 0:
        assert "--allow-root" in log or "allow-root" in (settings.ROOT / "Makefile").read_text()


def test_lab_folders_hold_only_their_notebooks():
    """Everything in solutions/<lab>/ is released to learners and bound into every hand-in's sandbox as the
    lab's data files: a file a solution run saved there (lab 14's reference TRACE.md once) is an answer
    handed out. No lab ships data files today; one that does lists them here."""
    data_files: set[str] = set()
    for root in (settings.SOLUTIONS, settings.LABS):
        extra = sorted(str(p.relative_to(settings.ROOT)) for p in root.glob("*/*")
                       if p.is_file() and p.suffix != ".ipynb" and p.name not in data_files)
        assert not extra, f"files beside the lab notebooks: {extra}"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=course", "-c", "user.email=course@example.org", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


def _publish(stage: Path, release: Path, message: str) -> None:
    """The instructor's push: the learners' repository's files become `stage`'s."""
    for p in release.iterdir():
        if p.name != ".git":
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    shutil.copytree(stage, release, dirs_exist_ok=True)
    _git(release, "add", "-A")
    _git(release, "commit", "-qm", message)
    _git(release, "push", "-q", "origin", "HEAD:main")


def _edit_cell(path: Path, grade_id: str, edit) -> None:
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)
    cell["source"] = edit("".join(cell["source"]))
    path.write_text(json.dumps(nb, indent=1))


def _edit_first_code_cell(path: Path, edit) -> None:
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["source"] = edit("".join(cell["source"]))
    path.write_text(json.dumps(nb, indent=1))


def _cells(path: Path) -> list[tuple[str | None, str]]:
    return [(c["metadata"].get("nbgrader", {}).get("grade_id"), "".join(c["source"]))
            for c in json.loads(path.read_text())["cells"]]


def test_staged_release_and_make_update_keep_the_learners_work(tmp_path):
    """WEEKS=1-2, then WEEKS=1-3 with errata in lab 1 and weeks 1 and 2: the learner's update brings week 3
    and the errata, keeps their answer and their own cell, keeps a walkthrough whose cells they edited (the
    release's copy goes beside it), and moves git on so that `git status` shows only their own changes."""
    from coursetools.student_dist import build, parse_weeks

    assert parse_weeks("1-3,7") == {1, 2, 3, 7} and parse_weeks("") is None
    with pytest.raises(ValueError):
        parse_weeks("3-1")
    origin, release, learner = tmp_path / "origin.git", tmp_path / "release", tmp_path / "learner"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    _git(tmp_path, "init", "-q", "-b", "main", str(release))
    _git(release, "remote", "add", "origin", str(origin))
    stage1 = build(tmp_path / "stage1", parse_weeks("1-2"))
    assert sorted(p.name for p in (stage1 / "labs").iterdir()) == ["lab01-strides", "lab02-dispatcher"]
    assert "(not released yet)" in (stage1 / "course" / "START-HERE.ipynb").read_text()
    assert "week03" not in (stage1 / "README.md").read_text()
    _publish(stage1, release, "weeks 1-2")
    _git(tmp_path, "clone", "-q", str(origin), str(learner))

    # the learner answers a cell, adds a scratch cell after it, and changes a walkthrough
    lab = learner / "labs" / LAB / f"{LAB}.ipynb"
    _edit_cell(lab, "contiguous_strides", lambda s: s.replace("raise NotImplementedError()", "return ('mine',)"))
    nb = json.loads(lab.read_text())
    at = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id")
              == "contiguous_strides")
    nb["cells"].insert(at + 1, {"cell_type": "code", "metadata": {}, "source": "my_scratch = 1", "outputs": [],
                                "execution_count": None})
    lab.write_text(json.dumps(nb, indent=1))
    week1 = learner / "course" / "week01-strides.ipynb"
    _edit_first_code_cell(week1, lambda s: s + "\n# learner_note")

    # the instructor releases week 3, with an erratum in lab 1's instructions and tests and in week 2
    stage2 = build(tmp_path / "stage2", parse_weeks("1-3"))
    intro_id = next(g for g, s in _cells(stage2 / "labs" / LAB / f"{LAB}.ipynb") if g and s.startswith("# "))
    _edit_cell(stage2 / "labs" / LAB / f"{LAB}.ipynb", intro_id, lambda s: s + "\n\nERRATUM: corrected.")
    _edit_cell(stage2 / "labs" / LAB / f"{LAB}.ipynb", "test_contiguous_strides", lambda s: s + "\n# fixed test")
    week2 = stage2 / "course" / "week02-dispatcher.ipynb"
    week2.write_text(week2.read_text().replace("torch.add", "torch.add ", 1))
    new_week1 = stage2 / "course" / "week01-strides.ipynb"  # changed by the learner too: theirs stays
    _edit_first_code_cell(new_week1, lambda s: "# erratum\n" + s)
    _publish(stage2, release, "week 3, lab 1 erratum")

    out = subprocess.run([sys.executable, "tools/update.py"], cwd=learner, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (learner / "labs" / "lab03-autograd" / "lab03-autograd.ipynb").is_file(), out.stdout
    cells = _cells(lab)
    ids = [g for g, _ in cells]
    answer = dict((g, s) for g, s in cells if g)["contiguous_strides"]
    assert "return ('mine',)" in answer, "the learner's answer is kept"
    assert cells[ids.index("contiguous_strides") + 1] == (None, "my_scratch = 1"), "their own cell stays in place"
    assert dict((g, s) for g, s in cells if g)[intro_id].endswith("ERRATUM: corrected.")
    assert dict((g, s) for g, s in cells if g)["test_contiguous_strides"].endswith("# fixed test")
    assert "torch.add " in (learner / "course" / "week02-dispatcher.ipynb").read_text(), "an untouched file updates"
    assert "# learner_note" in week1.read_text() and "erratum" not in week1.read_text(), "their change stays"
    beside = list((learner / "course").glob("week01-strides.release-*.ipynb"))
    assert len(beside) == 1 and "# erratum" in beside[0].read_text(), out.stdout
    status = _git(learner, "status", "--porcelain").split("\n")
    assert sorted(s[3:] for s in status if s and not s.startswith("??")) == \
        ["course/week01-strides.ipynb", f"labs/{LAB}/{LAB}.ipynb"], status
    again = subprocess.run([sys.executable, "tools/update.py"], cwd=learner, capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout.strip() == "already up to date", again.stdout + again.stderr
