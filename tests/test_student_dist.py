"""The learners' tree: complete, answer-free, and its `make lab` / `make validate` work."""

from __future__ import annotations

import os
import re
import selectors
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
