"""The grading sandbox: each limit is proven by code that breaks it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import grade, sandbox, settings

pytestmark = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap missing (make sandbox-deps)")


def run(tmp_path, code, **limits):
    return sandbox.run([sys.executable, "-c", code], sandbox.Limits(**limits))


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


def test_a_gigabyte_of_output_costs_the_grader_almost_nothing(tmp_path):
    """stderr keeps its head and tail, stdout (the result channel) is cut at its cap: the grader's own
    memory grows by a few MB whatever a hand-in prints."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = ("import os\nchunk = b'x' * (1 << 20)\nfor _ in range(1024):\n    os.write(2, chunk)\n"
            "for _ in range(1024):\n    os.write(1, chunk)\n")
    r = run(tmp_path, code, output_bytes=8 << 20, stderr_bytes=20_000)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert r.killed == "output" and r.stdout == b""
    assert len(r.stderr) < 25_000 and b"bytes of stderr not kept" in r.stderr
    assert grown_mb < 64, f"the grader grew by {grown_mb:.0f} MB reading 1 GiB of stderr"
    print(f"grader memory grew by {grown_mb:.1f} MB while a run printed 1 GiB to stderr")


def test_nothing_the_run_writes_reaches_the_host(tmp_path):
    """The hand-in's folder and /tmp are size-limited tmpfs that die with the sandbox."""
    marker = f"litter-{tmp_path.name}"
    code = (f"import os\nfor p in ('{marker}', '/tmp/{marker}', '/dev/shm/{marker}'):\n    open(p, 'w').write('x')\n"
            "for _ in range(2000):\n    os.mkdir('d'); os.chdir('d')\nprint('wrote')\n"
            "open('/tmp/big', 'wb').write(b'x' * (64 << 20))\n")
    r = run(tmp_path, code, disk_bytes=16 << 20)
    assert b"wrote" in r.stdout and b"No space left" in r.stderr, r.stderr[-500:]
    assert not [p for p in ("/tmp", "/dev/shm", str(settings.ROOT)) if (Path(p) / marker).exists()]


def test_a_venv_reached_through_a_link_runs_in_the_sandbox(tmp_path):
    """VENV= a symbolic link to the venv (one venv shared by checkouts): the sandbox binds both paths."""
    link = tmp_path / "venv-link"
    link.symlink_to(Path(sys.prefix).resolve())
    proc = subprocess.run([str(link / "bin" / "python"), "-c",
                           "import sys; from autograder import sandbox; r = sandbox.run([sys.executable, '-c', "
                           "'import torch, labkit; print(42)']); print(r.stdout.decode().strip(), r.stderr[-300:])"],
                          cwd=settings.ROOT, capture_output=True, text=True, env={**os.environ,
                                                                                   "PYTHONPATH": str(settings.ROOT)})
    assert proc.stdout.startswith("42"), proc.stdout + proc.stderr


def test_grader_refuses_without_bubblewrap(monkeypatch, capsys, tmp_path):
    (tmp_path / "stu").mkdir()
    (tmp_path / "stu" / "lab01-strides.ipynb").write_text("{}")
    monkeypatch.setattr(sandbox, "available", lambda: False)
    assert grade.grade_command("lab01-strides", tmp_path, tmp_path / "out") == 2
    assert "apt-get install bubblewrap" in capsys.readouterr().err
