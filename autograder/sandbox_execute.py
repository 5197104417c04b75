"""nbgrader's execute step, moved into the sandbox.

The scratch course's config puts `SandboxExecute` where nbgrader's own `Execute`
was in the autograde pipeline: nbgrader still sanitizes the hand-in (restoring
locked cells and hidden tests from the gradebook) and still records the grades,
both in the trusted parent; only running the student's code happens in the
sandbox. When the run fails (timeout, memory, a dead kernel, garbage output),
every graded cell gets an error output, so it scores 0, and the status is kept
for grades.csv.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Float, Int, Unicode

from autograder import sandbox

RUNNER = Path(__file__).with_name("sandbox_runner.py")


class SandboxExecute(NbGraderPreprocessor):
    cell_timeout = Int(120, help="seconds one cell may run").tag(config=True)
    notebook_timeout = Float(600.0, help="seconds the whole notebook may run").tag(config=True)
    memory_bytes = Int(4 << 30, help="memory limit of the whole run").tag(config=True)
    status_dir = Unicode("", help="where each hand-in's run status is written (JSON)").tag(config=True)
    insecure = Bool(False, help="run without the sandbox (never for real hand-ins)").tag(config=True)
    slot = Int(0, help="job slot: selects the unprivileged uid").tag(config=True)

    def preprocess(self, nb, resources):
        student = resources.get("nbgrader", {}).get("student", "unknown")
        here = Path(resources.get("metadata", {}).get("path") or ".")
        work = Path(tempfile.mkdtemp(prefix=f"handin-{student}-"))
        try:
            for f in here.iterdir():  # the lab's released files, never other hand-ins
                if f.is_file() and f.suffix != ".ipynb":
                    shutil.copy(f, work / f.name)
            nbformat.write(nb, str(work / "handin.ipynb"))
            limits = sandbox.Limits(memory_bytes=self.memory_bytes, wall_seconds=self.notebook_timeout)
            argv = [sys.executable, f"{sandbox.COURSE}/runner.py", "handin.ipynb",
                    str(self.cell_timeout)]
            result = sandbox.run(argv, work, limits, slot=self.slot,
                                 extra_ro={str(RUNNER): f"{sandbox.COURSE}/runner.py"})
            status, executed = self._read(result)
            if executed is not None:
                status, executed = self._check(nb, executed, status)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if executed is None:
            executed = self._all_failed(nb, status)
        if self.status_dir:
            Path(self.status_dir).mkdir(parents=True, exist_ok=True)
            (Path(self.status_dir) / f"{student}.json").write_text(json.dumps(
                {"status": status, "seconds": round(result.seconds, 2), "memory_peak": result.memory_peak}))
        return executed, resources

    @staticmethod
    def _read(result):
        if result.killed:
            reason = {"timeout": "notebook timeout", "memory": "memory limit", "output": "output limit"}
            return reason.get(result.killed, f"killed ({result.killed})"), None
        try:
            executed = nbformat.reads(result.stdout.decode("utf-8"), as_version=4)
        except Exception:  # noqa: BLE001 - anything the sandbox printed that is not a notebook
            tail = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
            return f"run failed: {tail[0][:200]}", None
        status = executed.metadata.pop("sandbox_status", "ok")
        return ("graded" if status == "ok" else status), executed

    @staticmethod
    def _check(sent, executed, status):
        """The notebook that came back must be the one sent (same cells, same sources), and
        cells a dead or timed-out kernel never ran score 0: nbgrader would give full points
        to a test cell with no output."""
        same = len(sent.cells) == len(executed.cells) and all(
            (a.cell_type, a.source, a.metadata.get("nbgrader")) == (b.cell_type, b.source, b.metadata.get("nbgrader"))
            for a, b in zip(sent.cells, executed.cells))
        if not same:
            return "tampered: the executed notebook does not match the hand-in", None
        if status != "graded":
            for cell in executed.cells:
                if cell.cell_type == "code" and cell.get("execution_count") is None and not cell.outputs:
                    cell.outputs = [nbformat.v4.new_output("error", ename="GradingError",
                                                           evalue=f"not run: {status}", traceback=[])]
        return status, executed

    @staticmethod
    def _all_failed(nb, status):
        nb = nbformat.reads(nbformat.writes(nb), as_version=4)  # a deep copy with sources as strings
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = [nbformat.v4.new_output("error", ename="GradingError",
                                                       evalue=f"not graded: {status}", traceback=[])]
        return nb
