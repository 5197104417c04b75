"""`make setup`: one venv per requirements hash (and per TORCH override)."""

from __future__ import annotations

import re
import subprocess
import sys

from autograder import settings
from coursetools import venv


def test_stamp_changes_with_requirements_and_torch(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("torch==2.13.0\n")
    a = venv.stamp_of(req, "")
    assert venv.stamp_of(req, "") == a, "the stamp must be stable, or every run rebuilds the venv"
    assert venv.stamp_of(req, "2.14.1") != a
    req.write_text("torch==2.13.0\nnumpy==2.4.6\n")
    assert venv.stamp_of(req, "") != a


def test_this_venv_is_stamped_with_the_current_requirements():
    stamp = (settings.ROOT / ".venv" / venv.STAMP)
    if ".venv-torch" in sys.prefix or not stamp.exists():
        return  # a compatibility venv is stamped with its own torch
    assert stamp.read_text().strip() == venv.stamp_of(settings.ROOT / "requirements.txt", "")


def test_torch_override_uses_a_second_venv():
    out = subprocess.run(["make", "-n", "setup", "TORCH=9.9.9"], cwd=settings.ROOT, capture_output=True,
                         text=True).stdout
    assert "--venv .venv-torch9.9.9" in out and "--torch 9.9.9" in out, out


def test_device_cuda_on_a_cpu_machine_stops_with_a_reason():
    import torch

    if torch.cuda.is_available():
        return
    proc = subprocess.run(["make", "test", "DEVICE=cuda", f"VENV={sys.prefix}"], cwd=settings.ROOT,
                          capture_output=True, text=True, env={"COURSE_REUSE_VENV": "1",
                                                               "PATH": "/usr/bin:/bin"})
    assert proc.returncode != 0
    assert "needs a CUDA GPU" in proc.stderr + proc.stdout, proc.stdout + proc.stderr


def test_lock_pins_every_requirement_but_torch_with_hashes():
    """requirements.lock (make lock) is made from this requirements.txt and is what make setup installs."""
    req = settings.ROOT / "requirements.txt"
    assert venv.lock_is_current(req), "requirements.lock was made from another requirements.txt: run `make lock`"
    lock = venv.lock_of(req).read_text()
    entries = re.findall(r"^([A-Za-z0-9_.-]+)==([^ ;\\]+)(.*?)(?=^[A-Za-z0-9]|\Z)", lock, re.M | re.S)
    pinned = {name.lower().replace("_", "-"): (version, body) for name, version, body in entries}
    assert "torch" not in pinned, "torch's wheel depends on the machine: it is installed from requirements.txt"
    for line in req.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==([^ ;#]+)", line.strip())
        if m and m.group(1) != "torch":
            name = m.group(1).lower().replace("_", "-")
            assert pinned.get(name, ("",))[0] == m.group(2), f"{name} is not pinned to {m.group(2)} in the lock"
    assert all("--hash=sha256:" in body for _, body in pinned.values()), "every entry carries its hashes"
    assert not re.search(r"^--(extra-index-url|index-url|find-links)", lock, re.M), "no machine-specific index"
    assert len(pinned) > 100, "the whole environment, dependencies included"


def test_make_help_lists_every_variable_a_recipe_reads():
    """A variable an instructor can set (FORMAT, STUDENT, EXCHANGE_ROOT, ...) is useless if `make help` does not
    name it: every $(NAME) the Makefile reads that make itself does not define internally is on a `#:` line."""
    text = (settings.ROOT / "Makefile").read_text()
    read = set(re.findall(r"\$\(([A-Z][A-Z0-9_]*)\)", text))
    internal = {"PY", "MAKEFILE_LIST", "CURDIR", "PATH", "DISPLAY", "LANDING", "LAB_OVERRIDES", "EXCHANGE_OPTIONS"}
    documented = set(re.findall(r"^#: ([A-Z][A-Z0-9_]*)=", text, re.M))
    assert read - internal <= documented, f"variables make help does not list: {sorted(read - internal - documented)}"
    out = subprocess.run(["make", "-s", "help"], cwd=settings.ROOT, capture_output=True, text=True).stdout
    for name in sorted(documented):
        assert f"  {name}=" in out, f"make help does not print {name}"
