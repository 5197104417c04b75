"""The course's CI workflow and container image: the workflow runs the README's commands and is
well formed; the image builds from the learners' tree and is smoke-tested where an engine exists."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml

from autograder import settings
from coursetools import image

WORKFLOW = settings.ROOT / ".github" / "workflows" / "course.yml"


def _workflow() -> dict:
    data = yaml.safe_load(WORKFLOW.read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def test_workflow_is_well_formed():
    data = _workflow()
    assert data["name"] and {"push", "pull_request"} <= set(data["on"])
    assert set(data["jobs"]) == {"cpu", "gpu"}
    for name, job in data["jobs"].items():
        assert job.get("runs-on") and 0 < job.get("timeout-minutes", 0), name
        for step in job["steps"]:
            assert set(step) <= {"name", "uses", "run", "with", "env", "if", "id"}, (name, step)
            assert ("uses" in step) != ("run" in step), f"{name}: a step runs a command or uses an action: {step}"
            if "uses" in step:  # a tag can be moved to other code; a commit cannot (GitHub's hardening guide)
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), f"pin actions by commit: {step}"
    assert data["jobs"]["cpu"]["timeout-minutes"] <= 90, "CI's limit is 90 minutes"
    assert data["jobs"]["gpu"]["runs-on"][0] == "self-hosted" and "gpu" in data["jobs"]["gpu"]["runs-on"]
    assert data.get("permissions") == {"contents": "read"}, "the workflow's token only reads the repository"
    gpu_if = data["jobs"]["gpu"].get("if", "")
    assert "workflow_dispatch" in gpu_if and "inputs.gpu" in gpu_if, "the GPU job runs only when asked for"
    assert data["on"]["workflow_dispatch"]["inputs"]["gpu"]["type"] == "boolean"


def test_workflow_runs_the_readmes_commands():
    data, readme = _workflow(), (settings.ROOT / "README.md").read_text()
    runs = {job: [s["run"] for s in spec["steps"] if "run" in s] for job, spec in data["jobs"].items()}
    assert "make test" in runs["cpu"] and "make test DEVICE=cuda" in runs["gpu"] and "make gpu-check" in runs["gpu"]
    for command in ("make test", "make test DEVICE=cuda", "make gpu-check"):
        assert f"`{command}" in readme, f"the README gives {command!r}"
    assert "exec make test" in (settings.ROOT / ".ci" / "run").read_text()
    cache = next(s for s in data["jobs"]["cpu"]["steps"] if s.get("uses", "").startswith("actions/cache"))
    assert cache["with"]["path"] == ".venv" and "steps.stamp.outputs.stamp" in cache["with"]["key"]
    stamp = next(s for s in data["jobs"]["cpu"]["steps"] if s.get("id") == "stamp")
    command = re.search(r"python3 -c '([^']+)'", stamp["run"]).group(1)
    from coursetools.venv import STAMP, stamp_of
    got = subprocess.run([sys.executable, "-c", command], cwd=settings.ROOT, capture_output=True, text=True)
    assert got.stdout.strip() == stamp_of(settings.ROOT / "requirements.txt", ""), got.stderr
    here = settings.ROOT / ".venv" / STAMP
    if here.exists():
        assert here.read_text().strip() == got.stdout.strip(), "the key is the stamp make setup writes"


def test_image_is_built_from_the_learners_tree():
    text = image.DOCKERFILE.read_text()
    assert re.search(r"^FROM quay\.io/jupyter/[\w-]+-notebook:", text, re.M), "a JupyterHub-ready base image"
    assert "requirements.txt" in text and "solutions" not in text.replace("no solutions", "")
    dry = subprocess.run(["make", "-n", "image"], cwd=settings.ROOT, capture_output=True, text=True).stdout
    assert "coursetools student-dist" in dry and "coursetools image" in dry, dry


def test_image_builds_and_starts():
    if image.engine() is None:
        pytest.skip("no container engine on this machine (Docker or Podman): `make image` is not built here")
    assert image.build() == 0
