"""`python -m labkit.validate <notebook>...`: run a lab's visible tests, as Validate does.

nbgrader's own `validate` command exits 0 even when tests fail; this wrapper
prints its report and exits 1 unless every notebook passed, so scripts can
rely on it.
"""

from __future__ import annotations

import subprocess
import sys


def validate(path: str) -> bool:
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "validate", path], capture_output=True, text=True)
    out = (proc.stdout + proc.stderr).strip()
    print(out)
    return proc.returncode == 0 and "Success! Your notebook passes all the tests." in out


def main(paths: list[str]) -> int:
    if not paths:
        print("usage: python -m labkit.validate labs/<lab>/<lab>.ipynb ...", file=sys.stderr)
        return 2
    results = {p: validate(p) for p in paths}
    for p, ok in results.items():
        print(f"{'PASSED' if ok else 'FAILED'}  {p}")
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
