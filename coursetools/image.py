"""`make image`: the learners' environment as a container image (docker/Dockerfile), built from the
learners' tree and smoke-tested: torch, triton, jax, nbgrader and labkit import, and JupyterLab starts.

Needs Docker or Podman; without either it says so and stops (exit 2). The build context is
build/student/ (`make student-dist`), so nothing of solutions/ can reach the image.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

from autograder import settings

DOCKERFILE = settings.ROOT / "docker" / "Dockerfile"
TAG = "pytorch-internals:latest"
# nbgrader's instructor-only parts (server extensions and JupyterLab plugins), off in the learners' image
INSTRUCTOR_EXTENSIONS = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")
INSTRUCTOR_PLUGINS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                      "@jupyter/nbgrader:course-list")
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
    # labkit from another folder: the installed course package, not the working directory, provides it
    for cmd in (["--workdir", "/tmp", tag, "python", "-c", SMOKE], [tag, "jupyter", "lab", "--version"]):
        if subprocess.run([tool, "run", "--rm", *cmd]).returncode != 0:
            print(f"smoke test failed in {tag}: {' '.join(cmd)}", file=sys.stderr)
            return 1
    # the instructors' nbgrader parts are off for learners (nbgrader's docs, "Installation")
    listed = subprocess.run([tool, "run", "--rm", tag, "bash", "-c",
                             "jupyter server extension list 2>&1; jupyter labextension list 2>&1"],
                            capture_output=True, text=True).stdout
    still_on = instructor_extensions_on(listed)
    if still_on:
        print(f"{tag} leaves the instructors' nbgrader extensions on: {still_on}", file=sys.stderr)
        return 1
    print(f"built and smoke-tested {tag}")
    return 0


def instructor_extensions_on(listed: str) -> list[str]:
    """What `jupyter server extension list` and `jupyter labextension list` (their output together) still
    show as on among the instructors' nbgrader parts."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", listed)  # the listings colour "enabled"/"disabled"
    on = [name for name in INSTRUCTOR_EXTENSIONS if re.search(rf"^\s*{re.escape(name)}\s+enabled", text, re.M)]
    disabled = text.split("Disabled extensions:", 1)[1] if "Disabled extensions:" in text else ""
    return on + [plugin for plugin in INSTRUCTOR_PLUGINS if plugin not in disabled]
