"""Executing notebooks: papermill for whole runs, one live kernel for mutant swaps."""

from __future__ import annotations

import copy
import os
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode

from autograder import settings

# The kernel's own log (e.g. ipykernel's warning about unencrypted local TCP) is noise here.
QUIET_KERNEL = ["--IPKernelApp.log_level=ERROR"]


def kernel_env(threads: int | None = None) -> dict:
    """Environment for kernels: quiet progress bars off stderr, and torch threads
    pinned when several jobs share the cores."""
    env = {"PYTHONWARNINGS": "ignore::DeprecationWarning", "TQDM_DISABLE": os.environ.get("TQDM_DISABLE", "")}
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    return env


def run_papermill(path: Path, out: Path, params: dict | None = None, threads: int | None = None) -> float:
    """Run a notebook top to bottom with papermill; return seconds. Raises on a failing cell."""
    import papermill

    out.parent.mkdir(parents=True, exist_ok=True)
    old = {k: os.environ.get(k) for k in kernel_env(threads)}
    os.environ.update(kernel_env(threads))
    t0 = time.perf_counter()
    try:
        papermill.execute_notebook(str(path), str(out), parameters=params or {}, kernel_name=settings.KERNEL,
                                   cwd=str(path.parent), progress_bar=False, log_output=False,
                                   execution_timeout=settings.CELL_TIMEOUT_S, extra_arguments=QUIET_KERNEL)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return time.perf_counter() - t0


class KernelSession:
    """One kernel that runs a notebook's cells, then extra code and re-runs of single cells.

    Used to evaluate many mutants without paying a kernel start and the imports
    for each: execute the notebook once, then swap one function at a time.
    """

    def __init__(self, nb: NotebookNode, cwd: Path, threads: int | None = None):
        self.nb = nb
        self.cwd = cwd
        self.threads = threads
        self.client: NotebookClient | None = None
        self._ctx = None

    def start(self) -> None:
        os.environ.update(kernel_env(self.threads))
        self.client = NotebookClient(self.nb, kernel_name=settings.KERNEL, timeout=settings.CELL_TIMEOUT_S,
                                     allow_errors=True, resources={"metadata": {"path": str(self.cwd)}},
                                     extra_arguments=QUIET_KERNEL)
        self._ctx = self.client.setup_kernel()
        self._ctx.__enter__()

    def stop(self) -> None:
        if self._ctx is not None:
            try:
                self._ctx.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - a dead kernel may fail to shut down cleanly
                pass
        self._ctx = None
        self.client = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def run_cell(self, cell: NotebookNode, index: int = 0) -> NotebookNode:
        """Execute `cell` in place (outputs replaced). Raises DeadKernelError if the kernel dies."""
        cell.outputs = []
        self.client.execute_cell(cell, index)
        return cell

    def run_notebook(self) -> float:
        """Run every code cell in order; the seconds each took are kept in `cell_seconds` (by grade_id)."""
        t0 = time.perf_counter()
        self.cell_seconds: dict[str, float] = {}
        for i, cell in enumerate(self.nb.cells):
            if cell.cell_type == "code":
                t = time.perf_counter()
                self.run_cell(cell, i)
                gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                if gid:
                    self.cell_seconds[gid] = time.perf_counter() - t
        return time.perf_counter() - t0

    def run_source(self, source: str) -> NotebookNode:
        return self.run_cell(nbformat.v4.new_code_cell(source))

    def rerun_copy(self, cell: NotebookNode, index: int) -> NotebookNode:
        return self.run_cell(copy.deepcopy(cell), index)


__all__ = ["DeadKernelError", "KernelSession", "run_papermill"]
