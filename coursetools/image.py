"""`make image`: the learners' environment as a container image (docker/Dockerfile), built from the
learners' tree and smoke-tested: torch, triton, jax, nbgrader and labkit import, and JupyterLab starts.

Needs Docker or Podman; without either it says so and stops (exit 2). The build context is
build/student/ (`make student-dist`), so nothing of solutions/ can reach the image.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from autograder import settings

DOCKERFILE = settings.ROOT / "docker" / "Dockerfile"
TAG = "pytorch-internals:latest"
SMOKE = ("import torch, nbgrader, labkit, jax; import triton; "
         "print('torch', torch.__version__, 'nbgrader', nbgrader.__version__)")


def engine() -> str | None:
    """docker or podman, whichever answers."""
    for name in ("docker", "podman"):
        path = shutil.which(name)
        if path and subprocess.run([path, "info"], capture_output=True).returncode == 0:
            return path
    return None


def build(context: Path = settings.STUDENT_DIST, tag: str = TAG) -> int:
    tool = engine()
    if tool is None:
        print("make image needs Docker or Podman (neither answers `info` on this machine)", file=sys.stderr)
        return 2
    if not (context / "labkit").is_dir():
        print(f"{context} is not the learners' tree: run make student-dist first", file=sys.stderr)
        return 2
    if subprocess.run([tool, "build", "-t", tag, "-f", str(DOCKERFILE), str(context)]).returncode != 0:
        return 1
    for cmd in (["python", "-c", SMOKE], ["jupyter", "lab", "--version"]):
        if subprocess.run([tool, "run", "--rm", tag, *cmd]).returncode != 0:
            print(f"smoke test failed in {tag}: {' '.join(cmd)}", file=sys.stderr)
            return 1
    print(f"built and smoke-tested {tag}")
    return 0
