"""The grading sandbox: each limit is proven by code that breaks it."""

from __future__ import annotations

import sys

import pytest

from autograder import grade, sandbox, settings

pytestmark = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap missing (make sandbox-deps)")


def run(tmp_path, code, **limits):
    return sandbox.run([sys.executable, "-c", code], tmp_path, sandbox.Limits(**limits))


def test_runs_unprivileged_without_network_or_the_course_files(tmp_path):
    code = ("import os, urllib.request\n"
            f"print(os.getuid(), os.path.exists({str(settings.SOLUTIONS)!r}), os.path.exists('/work/handin'))\n"
            f"print(os.path.exists({str(settings.ROOT / 'nbgrader_config.py')!r}))\n"
            "try:\n    urllib.request.urlopen('http://127.0.0.1:9', timeout=2)\nexcept OSError as e:\n"
            "    print('no network', type(e).__name__)\n"
            "import labkit; print(labkit.__file__)\n")
    r = run(tmp_path, code)
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr.decode()
    uid, sees_solutions, handin = out.splitlines()[0].split()
    assert int(uid) != 0 and sees_solutions == "False" and handin == "True"
    assert out.splitlines()[1] == "False", "the sandbox must not see the course's nbgrader config"
    assert "no network" in out and "/opt/course/labkit" in out


def test_venv_and_system_are_read_only(tmp_path):
    r = run(tmp_path, f"open({str(sys.prefix + '/x')!r}, 'w')")
    assert r.returncode != 0 and b"Read-only file system" in r.stderr


def test_memory_limit_kills_a_hog(tmp_path):
    r = run(tmp_path, "x = bytearray(2 << 30)\nprint('survived')", memory_bytes=512 << 20)
    assert r.returncode != 0 and b"survived" not in r.stdout
    assert r.killed == "memory" or b"MemoryError" in r.stderr


def test_process_limit_stops_a_fork_bomb(tmp_path):
    code = ("import os, time\nn = 0\ntry:\n    for _ in range(1000):\n        if os.fork() == 0:\n"
            "            time.sleep(3); os._exit(0)\n        n += 1\nexcept OSError:\n    print('stopped at', n)\n")
    r = run(tmp_path, code, processes=40)
    assert b"stopped at" in r.stdout, r.stdout + r.stderr
    assert int(r.stdout.split()[-1]) < 40


def test_file_size_limit(tmp_path):
    r = run(tmp_path, "open('big', 'wb').write(b'x' * (8 << 20))", file_bytes=1 << 20)
    assert r.returncode != 0 and b"File too large" in r.stderr


def test_cpu_time_limit(tmp_path):
    r = run(tmp_path, "while True:\n    pass", cpu_seconds=1, wall_seconds=30)
    assert r.returncode != 0 and r.seconds < 20


def test_wall_clock_timeout_kills_the_group(tmp_path):
    r = run(tmp_path, "import os, time\nos.fork()\ntime.sleep(60)", wall_seconds=2)
    assert r.killed == "timeout" and r.seconds < 15


def test_grader_refuses_without_bubblewrap(monkeypatch, capsys, tmp_path):
    (tmp_path / "stu").mkdir()
    (tmp_path / "stu" / "lab01-strides.ipynb").write_text("{}")
    monkeypatch.setattr(sandbox, "available", lambda: False)
    assert grade.grade_command("lab01-strides", tmp_path, tmp_path / "out") == 2
    assert "apt-get install bubblewrap" in capsys.readouterr().err
