"""Build the course's virtual environment (standard library only: it runs before one exists).

    python3 -m coursetools.venv --venv .venv [--torch 2.14.1] [--root .]

Creates the venv once, and again (from clean) when requirements.txt, requirements.lock, the
torch override or this file change: a stamp inside the venv holds their hash. Then it
registers the venv's kernel as `python3` inside the venv, so papermill and
nbgrader never pick a system Python, and puts the course root on the venv's
path so `import labkit` works in every kernel.

requirements.lock (`make lock`) pins every package the course installs, with hashes, except torch:
which torch wheel is right depends on the machine (PyPI's Linux wheel is the CUDA build, a CPU
machine takes the CPU wheel of the same version), so torch is installed first from
requirements.txt's pin (from COURSE_TORCH_INDEX first where it is set, as Gradescope's setup.sh does for
the CPU wheel), then everything else from the lock with `--require-hashes`. A lock that
was not made from the current requirements.txt is not used (the build says so).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

STAMP = ".course-stamp"
LOCK_HEADER = "# requirements.txt sha256: "  # the first line of requirements.lock: what it was compiled from
PINNED_ELSEWHERE = re.compile(r"^\s*(torch|triton)\s*(==|;|$)", re.I)


def lock_of(requirements: Path) -> Path:
    return requirements.with_name("requirements.lock")


def lock_is_current(requirements: Path) -> bool:
    lock = lock_of(requirements)
    if not lock.is_file():
        return False
    first = lock.read_text().split("\n", 1)[0]
    return first == LOCK_HEADER + hashlib.sha256(requirements.read_bytes()).hexdigest()


def finish_lock(compiled: Path, requirements: Path, lock: Path) -> None:
    """pip-compile's output as requirements.lock: its header names the requirements it came from, and the
    machine's own index lines and torch's entry (machine-specific, see above) are left out."""
    out, skipping = [], False
    for line in compiled.read_text().splitlines():
        if re.match(r"^--(extra-index-url|index-url|find-links)\b", line):
            continue
        if re.match(r"^[A-Za-z0-9]", line):
            skipping = bool(re.match(r"^torch==", line))
        if not skipping:
            out.append(line)
    header = [LOCK_HEADER + hashlib.sha256(requirements.read_bytes()).hexdigest(),
              "# Every package but torch, with hashes: `make lock` writes this file from requirements.txt."]
    lock.write_text("\n".join(header + out) + "\n")


def stamp_of(requirements: Path, torch: str) -> str:
    h = hashlib.sha256()
    h.update(requirements.read_bytes())
    if lock_of(requirements).is_file():
        h.update(lock_of(requirements).read_bytes())
    h.update(torch.encode())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


def run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def site_packages(python: Path) -> Path:
    out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         check=True, capture_output=True, text=True).stdout.strip()
    return Path(out)


def build(venv: Path, requirements: Path, root: Path, torch: str = "") -> None:
    python = venv / "bin" / "python"
    stamp = stamp_of(requirements, torch)
    if python.exists() and (venv / STAMP).exists() and (venv / STAMP).read_text().strip() == stamp:
        print(f"{venv}: up to date (requirements unchanged)")
        return
    if python.exists() and os.environ.get("COURSE_REUSE_VENV") == "1":
        print(f"{venv}: used as it is (COURSE_REUSE_VENV=1)")
        return
    t0 = time.perf_counter()
    print(f"{venv}: building (requirements changed or first run; a few minutes, cached afterwards)")
    run([sys.executable, "-m", "venv", "--clear", str(venv)])
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-q"]
    if torch:
        # Maintainers' compatibility run: this torch, and the triton its own wheel requires.
        lines = [ln for ln in requirements.read_text().splitlines() if not PINNED_ELSEWHERE.match(ln)]
        filtered = venv / "requirements-no-torch.txt"
        filtered.write_text("\n".join(lines) + "\n")
        run(pip + [f"torch=={torch}"])
        run(pip + ["-r", str(filtered)])
        wants_triton = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m; "
             "print(any(r.startswith('triton') for r in (m.requires('torch') or [])))"],
            check=True, capture_output=True, text=True).stdout.strip() == "True"
        if not wants_triton:  # a CPU wheel: install the course's pinned triton for the interpreter
            pinned = [ln for ln in requirements.read_text().splitlines() if ln.strip().startswith("triton")]
            run(pip + pinned)
    elif lock_is_current(requirements):
        pins = [ln.strip() for ln in requirements.read_text().splitlines() if re.match(r"^\s*torch\s*==", ln)]
        # this machine's wheel of the pinned torch, with its own dependencies; COURSE_TORCH_INDEX (say
        # https://download.pytorch.org/whl/cpu) takes it from that index first: PyPI's Linux wheel is CUDA's
        index = os.environ.get("COURSE_TORCH_INDEX", "")
        run(pip + (["--index-url", index, "--extra-index-url", "https://pypi.org/simple"] if index else []) + pins)
        run(pip + ["--require-hashes", "--no-deps", "-r", str(lock_of(requirements))])
    else:
        if lock_of(requirements).is_file():
            print(f"{lock_of(requirements)} was made from another requirements.txt: not used (run make lock)")
        run(pip + ["-r", str(requirements)])
    run([str(python), "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3",
         "--display-name", "Python 3 (ipykernel)"])
    (site_packages(python) / "course-root.pth").write_text(str(root.resolve()) + "\n")
    (venv / STAMP).write_text(stamp + "\n")
    print(f"{venv}: ready in {time.perf_counter() - t0:.0f} s")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--venv", type=Path, default=Path(".venv"))
    p.add_argument("--requirements", type=Path, default=Path("requirements.txt"))
    p.add_argument("--root", type=Path, default=Path("."))
    p.add_argument("--torch", default="")
    p.add_argument("--finish-lock", type=Path, metavar="COMPILED", help="turn pip-compile's output into the lock")
    a = p.parse_args()
    if a.finish_lock:
        finish_lock(a.finish_lock, a.requirements, lock_of(a.requirements))
        return 0
    build(a.venv, a.requirements, a.root, a.torch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
