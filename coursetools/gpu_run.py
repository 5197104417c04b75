"""Run the solution notebooks on a CUDA machine, cell by cell, and say which cells fail there.

CI has no GPU, so the labs' GPU paths (the `skip_unless_cuda` cells, and every test that runs
with DEVICE = "cuda") would rot unseen. A maintainer with any CUDA machine runs

    python -m coursetools.gpu_run                      # every lab
    python -m coursetools.gpu_run lab07-triton lab13-streams

It needs only what the labs import (torch, numpy, matplotlib, and the lab's own packages: triton,
jax, ...), not nbgrader or papermill, so a bare GPU image with PyTorch will do. Each lab runs in
its own interpreter, in a scratch copy of its folder, with DEVICE = "cuda" set after the
parameters cell; a failing cell is reported and the next one still runs. The exit status is 1
when any cell failed or any GPU check was skipped.
"""

from __future__ import annotations

import argparse
import json
import linecache
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from autograder.settings import ROOT, SKIP_MARK  # standard library only: fine on a bare GPU image


def _cells(notebook: Path) -> list[tuple[str, str, bool]]:
    """(label, source, is_parameters) for each code cell."""
    nb = json.loads(notebook.read_text())
    out = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        meta = cell.get("metadata", {})
        label = meta.get("nbgrader", {}).get("grade_id") or f"cell {i}"
        out.append((label, src, "parameters" in meta.get("tags", [])))
    return out


def run_one(notebook: Path) -> int:
    """Execute one notebook's code cells in this process; print one line per cell."""
    import matplotlib

    matplotlib.use("Agg")
    namespace: dict = {"__name__": "__main__", "display": print}
    failed = skipped = 0
    for label, src, is_parameters in _cells(notebook):
        t0 = time.perf_counter()
        status = "ok"
        import io
        from contextlib import redirect_stdout

        buf = io.StringIO()
        try:
            with redirect_stdout(buf):
                # registered as IPython registers a cell, so inspect.getsource (and @triton.jit) can read it
                name = f"<{notebook.stem}: {label}>"
                linecache.cache[name] = (len(src), None, src.splitlines(True), name)
                exec(compile(src, name, "exec"), namespace)  # noqa: S102
                if is_parameters:
                    namespace["DEVICE"] = "cuda"
        except BaseException as exc:  # noqa: BLE001 - report and go on to the next cell
            failed += 1
            message = str(exc).strip().splitlines() or [""]
            where = [line.strip() for line in traceback.format_exc().splitlines() if line.strip().startswith("File ")]
            status = f"FAILED {type(exc).__name__}: " + "\n      ".join(message[:30])
            status += "\n      at " + "\n      at ".join(where[-3:])
        printed = buf.getvalue()
        skips = [line for line in printed.splitlines() if SKIP_MARK in line]
        skipped += len(skips)
        print(f"  {label:<34} {time.perf_counter() - t0:7.1f} s  {status}", flush=True)
        if "gpu" in label.lower() or skips:
            for line in printed.strip().splitlines()[-25:]:
                print(f"      | {line}")
    print(f"  -> {failed} failed cell(s), {skipped} GPU check(s) skipped", flush=True)
    return 1 if failed or skipped else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*", help="lab ids (default: every lab under solutions/)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per lab")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run this notebook here
    args = parser.parse_args(argv)
    if args.one:
        return run_one(Path(args.one))
    labs = args.labs or sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
    worst = 0
    for lab in labs:
        folder = ROOT / "solutions" / lab
        with tempfile.TemporaryDirectory(prefix=f"gpu-{lab}-") as scratch:
            work = Path(scratch) / lab
            shutil.copytree(folder, work)
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                   "PYTHONUNBUFFERED": "1"}
            print(f"{lab}", flush=True)
            t0 = time.perf_counter()
            try:
                rc = subprocess.run([sys.executable, "-m", "coursetools.gpu_run", "--one", str(work / f"{lab}.ipynb")],
                                    cwd=work, env=env, timeout=args.timeout).returncode
            except subprocess.TimeoutExpired:
                print(f"  -> TIMED OUT after {args.timeout:.0f} s")
                rc = 1
            print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
            worst = max(worst, rc)
    return worst


if __name__ == "__main__":
    sys.exit(main())
