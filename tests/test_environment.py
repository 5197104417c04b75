"""One source of truth for versions, and a venv that matches it."""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import subprocess
import sys

import pytest

from autograder import settings

REQ = settings.ROOT / "requirements.txt"


def pins() -> dict[str, tuple[str, str]]:
    """name -> (version, marker) for every requirement line."""
    out = {}
    for line in REQ.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([^;\s]+)\s*(?:;\s*(.+))?", line)
        assert m, f"requirements.txt: {line!r} is not pinned with ==; pin every direct dependency"
        out[m.group(1).lower()] = (m.group(2), m.group(3) or "")
    return out


def test_every_requirement_is_pinned_and_core_pins_hold():
    p = pins()
    for name in ("torch", "jax", "jaxlib", "nbgrader", "jupyterlab", "notebook", "papermill", "matplotlib",
                 "tqdm", "pytest", "ruff", "triton", "ipykernel"):
        assert name in p, f"requirements.txt does not pin {name}"
    assert p["torch"][0] == "2.13.0"
    # torch 2.13.0's CUDA wheel on PyPI requires exactly this triton, on Linux only.
    assert p["triton"] == ("3.7.1", 'sys_platform == "linux"')


def test_environment_yml_installs_the_lock_and_nothing_else():
    """conda's environment file: Python 3.11 and pip from conda, everything else through pip from the lock's pins
    (requirements-conda.txt, made from requirements.lock) and the course package; tests/test_conformance_env.py
    reads it the way conda does."""
    text = (settings.ROOT / "environment.yml").read_text()
    deps = re.findall(r"^\s*-\s*(\S.*)$", text, re.M)
    assert "python=3.11" in deps, "environment.yml must install Python 3.11"
    assert "-r requirements-conda.txt" in deps and "-e ." in deps, "environment.yml installs the lock and labkit"
    allowed = ("python=3.11", "pip", "pip:", "conda-forge")
    pinned_here = [d for d in deps if re.match(r"[A-Za-z]", d) and d not in allowed]
    assert not pinned_here, f"versions live in requirements.txt/.lock only; environment.yml also lists {pinned_here}"


@pytest.mark.skipif(".venv-torch" in sys.prefix, reason="a TORCH=<version> compatibility venv overrides torch/triton")
def test_venv_matches_the_pins():
    wrong = []
    for name, (version, marker) in pins().items():
        if marker and "linux" in marker and not sys.platform.startswith("linux"):
            continue
        try:
            have = md.version(name)
        except md.PackageNotFoundError:
            wrong.append(f"{name} not installed")
            continue
        if have.split("+")[0] != version:
            wrong.append(f"{name} {have} installed, {version} pinned")
    assert not wrong, "the venv does not match requirements.txt (run `make setup`): " + "; ".join(wrong)


def test_kernel_python3_is_this_venv():
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    exe = spec.argv[0]
    assert os.path.realpath(os.path.dirname(exe)) == os.path.realpath(os.path.dirname(sys.executable)), (
        f"kernel 'python3' runs {exe}, not this venv's Python ({sys.executable}); `make setup` registers it")


def test_nbgrader_extension_is_enabled():
    out = subprocess.run([sys.executable, "-m", "jupyter", "labextension", "list"], capture_output=True,
                         text=True)
    text = out.stdout + out.stderr
    assert re.search(r"@jupyter/nbgrader.*enabled", text), f"nbgrader's lab extension is not enabled:\n{text}"
    out = subprocess.run([sys.executable, "-m", "jupyter", "server", "extension", "list"], capture_output=True,
                         text=True)
    text = out.stdout + out.stderr
    assert re.search(r"nbgrader.*enabled", text), f"nbgrader's server extension is not enabled:\n{text}"


def test_nbgrader_config_points_at_the_two_trees():
    text = (settings.ROOT / "nbgrader_config.py").read_text()
    assert 'source_directory = "solutions"' in text
    assert 'release_directory = "labs"' in text
    assert '"build", "course"' in text, "the gradebook and hand-ins live under the ignored build/ folder"
    assert "build/" in (settings.ROOT / ".gitignore").read_text()


def test_make_help_lists_every_target():
    makefile = (settings.ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    out = subprocess.run(["make", "-s", "help"], cwd=settings.ROOT, capture_output=True, text=True).stdout
    listed = set(re.findall(r"make (\S+)", out))
    assert targets <= listed, f"targets missing from `make help`: {sorted(targets - listed)}"
    for needed in ("lab", "test", "setup", "release", "solutions", "lint", "grade", "student-dist"):
        assert needed in targets


def test_nbgrader_and_the_quality_harness_forgive_the_same_stderr():
    text = (settings.ROOT / "nbgrader_config.py").read_text()
    configured = re.search(r'^c\.IgnorePattern\.pattern = r"(.*)"$', text, re.M)
    assert configured and configured.group(1) == settings.IGNORE_STDERR
