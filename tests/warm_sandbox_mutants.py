"""Mutants of the warm sandbox: each is a plausible mistake in `sandbox_runner.zygote`/`isolate` or in
`sandbox.WarmSandbox`, and `tests/test_warm_sandbox.py` must fail on every one. Too slow for `make test`
(the warm suite runs once per mutant, about 45 s each); run it after changing the warm sandbox:

    .venv/bin/python tests/warm_sandbox_mutants.py [name ...]

It edits the source in place and always restores it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNNER, SANDBOX = ROOT / "autograder" / "sandbox_runner.py", ROOT / "autograder" / "sandbox.py"
MUTANTS = {  # name: (file, text, replacement)
    "leftover processes not killed": (RUNNER, "        clean = _kill_the_rest(libc)\n", "        clean = True\n"),
    "mounts not locked": (RUNNER, "    _user_namespace(libc, CLONE_NEWNS)  # the mounts above",
                          "    pass  # the mounts above"),
    "parent dumpable": (RUNNER, "    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)\n", "    pass\n"),
    "no IPC namespace": (RUNNER, "    _user_namespace(libc, CLONE_NEWNS | CLONE_NEWIPC)",
                         "    _user_namespace(libc, CLONE_NEWNS)"),
    "no fresh /tmp": (RUNNER, '        _check(libc.mount(b"tmpfs", path.encode()',
                      '        0 and _check(libc.mount(b"tmpfs", path.encode()'),
    "child not in its cgroup": (SANDBOX, "            cg.add(child_pid)  # before", "            pass  # before"),
    "trial results not reduced to their fields": (
        RUNNER, "            kept = _fields(result, observer.fields[name]) if name in observer.fields else result",
        "            kept = result"),
    "sandbox outlives the grader": (RUNNER, "            if not sock.recv(1 << 12):\n                return None",
                                    "            if not sock.recv(1 << 12):\n                continue"),
}


def main(names: list[str]) -> int:
    survived = []
    for name in names or list(MUTANTS):
        path, old, new = MUTANTS[name]
        source = path.read_text()
        if old not in source:
            print(f"{name}: the text it mutates is gone; update this file")
            return 2
        path.write_text(source.replace(old, new, 1))
        try:
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                                   "tests/test_warm_sandbox.py"], cwd=ROOT, capture_output=True, text=True)
        finally:
            path.write_text(source)
        caught = proc.returncode != 0
        survived += [] if caught else [name]
        print(f"  {'caught  ' if caught else 'SURVIVED'} {name}", flush=True)
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
