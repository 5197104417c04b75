"""The warm sandbox (sandbox.WarmSandbox): hand-ins run as fresh children of one sandbox that has imported
torch once. Each property a cold sandbox has per hand-in is proven here again, by a hand-in that tries to
break it for the hand-in after it."""

from __future__ import annotations

import json

import pytest

from autograder import sandbox
from autograder.run import warm_sandbox

pytestmark = pytest.mark.skipif(not sandbox.available(), reason="bubblewrap missing (make sandbox-deps)")


def job(*sources: str, timeout: int = 60) -> bytes:
    cells = [{"kind": "trusted", "label": f"c{i}", "source": s, "hidden": False} for i, s in enumerate(sources)]
    return json.dumps({"schema": 2, "nonce": "n", "cell_timeout": timeout, "output_limit": 100_000, "seed": 0,
                       "interface": [], "max_observations": 100, "cells": cells}).encode()


def printed(result: sandbox.Result) -> str:
    """What the cells printed to stdout, from the runner's records."""
    text = []
    for line in result.stdout.decode().splitlines():
        rec = json.loads(line)
        for o in rec.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stdout":
                text.append(o["text"])
        if rec.get("error"):
            text.append(f"ERROR {rec['error']['ename']}: {rec['error']['evalue']}\n")
    return "".join(text)


@pytest.fixture
def warm():
    w = warm_sandbox(notebook_timeout=60)
    yield w
    w.close()


def test_runs_in_a_fresh_child_with_torch_already_imported(warm):
    first = warm.run(job("import sys, os\nprint('torch' in sys.modules, os.getcwd(), os.listdir('.'))"))
    assert first.returncode == 0 and not first.killed, first.stderr.decode()[-2000:]
    assert printed(first).split()[0:2] == ["True", "/work/handin"]
    second = warm.run(job("import torch\nprint(int(torch.arange(4).sum()))"))
    assert printed(second).strip() == "6" and warm.starts == 1
    assert warm.parent_dumpable == 0, "the warm parent must not be dumpable (its memory holds no job, but "\
        "a traced parent could reach every later hand-in)"


def test_a_handin_leaves_nothing_for_the_next(warm):
    plant = r"""
import ctypes, os, subprocess, sys, time
for d in ('/tmp', '/work/handin', '/dev/shm'):
    open(os.path.join(d, 'planted'), 'w').write('x')
# a System V shared-memory segment outlives the process that made it
print('shm', ctypes.CDLL(None).shmget(4242, 4096, 0o1000 | 0o666) >= 0)  # IPC_CREAT
# a daemon that outlives the hand-in and then tries to reach the next one
code = ("import os, time\ntime.sleep(1.5)\nopen('/tmp/late', 'w').write('x')\n"
        "for p in os.listdir('/proc'):\n"
        "    try: os.write(os.open(f'/proc/{p}/fd/1', os.O_WRONLY), b'{\"forged\": 1}\\n')\n"
        "    except OSError: pass\n")
subprocess.Popen([sys.executable, '-c', code], start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print('planted')
"""
    first = warm.run(job(plant))
    assert printed(first).split() == ["shm", "True", "planted"], printed(first) + first.stderr.decode()[-2000:]
    look = r"""
import ctypes, os, time
time.sleep(2.5)
print(sorted(os.listdir('/tmp')), os.listdir('/work/handin'), os.listdir('/dev/shm'))
print(len([p for p in os.listdir('/proc') if p.isdigit()]))
print('shm', ctypes.CDLL(None).shmget(4242, 0, 0) >= 0)
"""
    second = warm.run(job(look))
    lines = printed(second).splitlines()
    assert "planted" not in lines[0] and "late" not in lines[0], lines
    assert int(lines[1]) <= 3, "only init, the warm parent and this child may be alive"
    assert lines[2] == "shm False", "the last hand-in's shared-memory segment is visible to the next"
    assert b"forged" not in second.stdout and warm.starts == 1


def test_the_warm_parent_cannot_be_read_traced_or_unmounted(warm):
    probe = r"""
import ctypes, os
parent = os.getppid()
for what in ('mem', 'environ', 'fd/0'):
    try:
        open(f'/proc/{parent}/{what}', 'rb').read(1)
        print(what, 'READABLE')
    except OSError as e:
        print(what, 'denied')
for what in ('root/tmp', 'cwd'):  # the parent's own mounts, reached through /proc
    try:
        os.listdir(f'/proc/{parent}/{what}')
        print(what, 'READABLE')
    except OSError as e:
        print(what, 'denied')
libc = ctypes.CDLL(None, use_errno=True)
print('ptrace', 'ALLOWED' if libc.ptrace(16, parent, 0, 0) == 0 else 'denied')  # PTRACE_ATTACH
print('umount', 'ALLOWED' if libc.umount2(b'/tmp', 2) == 0 else 'denied')
"""
    out = printed(warm.run(job(probe)))
    assert "READABLE" not in out and "ALLOWED" not in out and out.count("denied") == 7, out


def test_killing_the_warm_parent_costs_only_that_run(warm):
    first = warm.run(job("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time; time.sleep(1)"))
    assert first.killed or first.returncode != 0
    second = warm.run(job("print('fine')"))
    assert printed(second).strip() == "fine" and warm.starts == 2


def test_limits_hold_per_child_and_the_next_run_is_unharmed():
    with warm_sandbox(notebook_timeout=120, memory_bytes=768 << 20) as w:
        hog = w.run(job("x = bytearray(2 << 30)\nx[::4096] = b'x' * len(x[::4096])\nprint('survived')"))
        assert hog.killed == "memory" or "MemoryError" in printed(hog), (hog.killed, printed(hog))
        assert printed(w.run(job("print('fine')"))).strip() == "fine"
    with warm_sandbox(notebook_timeout=4) as w:
        slow = w.run(job("import time\ntime.sleep(30)"))
        assert slow.killed == "timeout"
        assert printed(w.run(job("print('fine')"))).strip() == "fine"


def test_a_gigabyte_of_output_costs_the_grader_little_and_the_next_run_nothing():
    import resource

    with warm_sandbox(notebook_timeout=60) as w:
        w.limits = sandbox.Limits(wall_seconds=60, output_bytes=8 << 20, stderr_bytes=20_000)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        # 1 GiB to stderr, then to every descriptor that might be the result channel
        flood = w.run(job("import os\nchunk = b'x' * (1 << 20)\nfor _ in range(1024):\n    os.write(2, chunk)\n"
                          "for _ in range(1024):\n    for fd in range(3, 12):\n        try:\n"
                          "            os.write(fd, chunk)\n        except OSError:\n            pass\n"))
        grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        assert flood.killed == "output" and flood.stdout == b""
        assert len(flood.stderr) < 25_000 and b"bytes of stderr not kept" in flood.stderr
        assert grown_mb < 64, f"the grader grew by {grown_mb:.0f} MB reading 1 GiB of stderr"
        assert printed(w.run(job("print('fine')"))).strip() == "fine"


def test_a_killed_grader_leaves_no_warm_sandbox_behind(tmp_path):
    """The sandbox watches the grader's end of its socket: killed grader, killed hand-in, nothing left."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from autograder import settings

    grader = (f"import sys; sys.path.insert(0, {str(settings.ROOT)!r})\n"
              "from tests.test_warm_sandbox import job\nfrom autograder.run import warm_sandbox\n"
              "warm_sandbox(notebook_timeout=120).run(job('import time\\ntime.sleep(100)'))\n")
    proc = subprocess.Popen([sys.executable, "-c", grader], start_new_session=True)

    def descendants(root: int) -> set[int]:
        parents = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                parents[int(pid)] = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
        found, todo = set(), [root]
        while todo:
            p = todo.pop()
            kids = {c for c, parent in parents.items() if parent == p} - found
            found |= kids
            todo += kids
        return found

    def alive(pids: set[int]) -> set[int]:
        return {p for p in pids if os.path.exists(f"/proc/{p}") and
                b"zombie" not in open(f"/proc/{p}/status", "rb").read().lower()}

    deadline = time.monotonic() + 60
    while len(descendants(proc.pid)) < 3 and time.monotonic() < deadline:  # bwrap, its init, the parent
        time.sleep(0.2)
    time.sleep(3)  # the hand-in is running now
    ours = descendants(proc.pid)
    assert len(ours) >= 3, "the warm sandbox never started"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 15
    while alive(ours) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(ours), "the warm sandbox outlived the grader"


def test_a_custom_autograd_function_is_observed_through_forward_and_backward(warm):
    """`apply` calls the class's forward and autograd its backward: a test of such a class is judged."""
    answer = ("import torch\n"
              "class Square(torch.autograd.Function):\n"
              "    @staticmethod\n"
              "    def forward(ctx, x):\n"
              "        ctx.save_for_backward(x)\n"
              "        return x * x\n"
              "    @staticmethod\n"
              "    def backward(ctx, g):\n"
              "        (x,) = ctx.saved_tensors\n"
              "        return 2 * x * g\n")
    test = ("x = torch.tensor([1.0, -3.0], requires_grad=True)\n"
            "Square.apply(x).sum().backward()\nprint(x.grad.tolist())")
    payload = json.loads(job(answer, test))
    payload["interface"] = ["Square"]
    payload["cells"][0]["kind"], payload["cells"][1]["kind"] = "answer", "test"
    result = warm.run(json.dumps(payload).encode())
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    test_record = next(r for r in records if r.get("i") == 1)
    assert [o["fn"] for o in test_record["obs"]] == ["Square.forward", "Square.backward"], test_record
    assert "[2.0, -6.0]" in printed(result)


def test_a_trial_helper_is_observed_only_in_the_fields_the_contract_fixes(warm):
    """allreduce_trials' results carry the order of messages too, which right answers may change: only
    `fields` are judged (settings.OUT_OF_PROCESS_TRIALS)."""
    answer = "def trial():\n    return [{'got': 3, 'comm': ['send', 'recv'], 'returned_self': True}]\n"
    payload = json.loads(job(answer, "trial()"))
    payload["interface"], payload["fields"] = ["trial"], {"trial": ["got", "returned_self"]}
    payload["cells"][0]["kind"], payload["cells"][1]["kind"] = "answer", "test"
    result = warm.run(json.dumps(payload).encode())
    test_record = next(json.loads(line) for line in result.stdout.decode().splitlines() if '"i": 1' in line)
    seen = json.dumps(test_record["obs"])
    assert '"got"' in seen and '"returned_self"' in seen and "comm" not in seen and "send" not in seen, seen
