"""Run one hand-in: assemble a trusted notebook around its answers, run it in the
sandbox with `sandbox_runner.py`, and turn the runner's records into an executed
notebook and a status.

Only the hand-in's answer cells (matched by grade_id) and the code cells it added
are taken from the hand-in; every other cell (parameters, set-up, visible and hidden
tests) comes from the lab's source in the grading course. So editing, deleting,
re-ordering or re-tagging test cells in a hand-in changes nothing: the tests that
run are the instructor's, in the instructor's order.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder import notebooks as nbs
from autograder import sandbox, screen, settings

RUNNER = Path(__file__).with_name("sandbox_runner.py")
OUTPUT_LIMIT = 200_000  # characters of stdout/stderr kept per cell


@dataclass
class HandinRun:
    status: str  # "graded", or why the cells score 0
    notebook: NotebookNode  # the assembled notebook with outputs (test cells carry the verdicts)
    seconds: float = 0.0
    memory_peak: int = 0
    flags: list[str] = field(default_factory=list)  # exploit-like behaviour, for a human to look at
    notes: list[str] = field(default_factory=list)  # harmless oddities (added cells, another kernel)
    cell_seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"status": self.status, "notebook": nbformat.writes(self.notebook), "seconds": self.seconds,
                "memory_peak": self.memory_peak, "flags": self.flags, "notes": self.notes,
                "cell_seconds": self.cell_seconds}

    @classmethod
    def from_json(cls, data: dict) -> HandinRun:
        data = dict(data)
        nb = nbformat.reads(data.pop("notebook"), as_version=4)
        data.pop("key", None)
        return cls(notebook=nb, **data)


def assemble(source: NotebookNode, release: NotebookNode, handin: NotebookNode):
    """(cells to run, notebook to return, notes). Answers come from the hand-in, all else from `source`."""
    stubs = {nbs.grade_id(c): c.source for c in release.cells if nbs.is_solution(c)}
    answers: dict[str, str] = {}
    added: dict[str, list[str]] = {}  # grade_id of the answer cell they follow -> sources
    known = {nbs.grade_id(c) for c in source.cells if nbs.grade_id(c)}
    first_answer = next((nbs.grade_id(c) for c in source.cells if nbs.is_solution(c)), "")
    after, notes = first_answer, []
    for cell in handin.cells:
        gid = nbs.grade_id(cell)
        if cell.cell_type != "code":
            continue
        if gid in stubs and gid not in answers:
            answers[gid] = cell.source
            after = gid
        elif gid in known and gid not in stubs:
            continue  # a locked or test cell: the source's version runs
        elif cell.source.strip():
            added.setdefault(after, []).append(cell.source)
    if added:
        notes.append(f"{sum(map(len, added.values()))} added code cell(s) ran as part of the answers")
    notes += tampering(release, handin)
    missing = sorted(set(stubs) - set(answers))
    if missing:
        notes.append("answer cells missing from the hand-in (graded as unanswered): " + ", ".join(missing))

    out = nbformat.v4.new_notebook(metadata=source.metadata)
    cells = []
    for cell in source.cells:
        gid = nbs.grade_id(cell)
        new = nbformat.from_dict(json.loads(json.dumps(cell)))
        if cell.cell_type != "code":
            out.cells.append(new)
            continue
        new.outputs, new.execution_count = [], None
        if nbs.is_solution(cell):
            new.source = answers.get(gid, stubs.get(gid, ""))
            kind = "answer"
        elif nbs.is_grade(cell):
            kind = "test"
        else:
            kind = "trusted"
        out.cells.append(new)
        cells.append({"kind": kind, "label": gid or "cell", "source": new.source,
                      "hidden": "BEGIN HIDDEN TESTS" in new.source, "index": len(out.cells) - 1})
        for extra in added.get(gid, []) if nbs.is_solution(cell) else []:
            out.cells.append(nbformat.v4.new_code_cell(extra, metadata={"grader": {"added": True}}))
            cells.append({"kind": "answer", "label": "added", "source": extra, "hidden": False,
                          "index": len(out.cells) - 1})
    return cells, out, notes


TAMPER_NOTE = "review: "


def tampering(release: NotebookNode, handin: NotebookNode) -> list[str]:
    """What the hand-in changed in the cells it may not change (they are restored before the run, so
    this costs no points, but a person should see it)."""
    keys = ("grade", "solution", "locked", "points", "grade_id")

    def locked(nb):
        return {nbs.grade_id(c): c for c in nb.cells if nbs.grade_id(c) and not nbs.is_solution(c)}

    ours, theirs = locked(release), locked(handin)
    found = []
    deleted = sorted(set(ours) - set(theirs))
    if deleted:
        found.append(f"deleted locked or test cells: {', '.join(deleted)}")
    edited = sorted(g for g in set(ours) & set(theirs) if ours[g].source.strip() != theirs[g].source.strip())
    if edited:
        found.append(f"edited locked or test cells: {', '.join(edited)}")
    retagged = sorted(g for g in set(ours) & set(theirs)
                      if {k: nbs.nbgrader_meta(ours[g]).get(k) for k in keys}
                      != {k: nbs.nbgrader_meta(theirs[g]).get(k) for k in keys})
    renamed = sorted(set(theirs) - set(ours) - {nbs.grade_id(c) for c in release.cells})
    if retagged or renamed:
        found.append(f"changed nbgrader metadata: {', '.join(retagged + renamed)}")
    order = [g for g in (nbs.grade_id(c) for c in handin.cells) if g in ours]
    if order != [g for g in (nbs.grade_id(c) for c in release.cells) if g in theirs]:
        found.append("re-ordered locked or test cells")
    return [TAMPER_NOTE + f + " (the instructor's cells ran instead)" for f in found]


def run_handin(source: NotebookNode, release: NotebookNode, handin: NotebookNode, *, sandboxed: bool = True,
               slot: int = 0, cell_timeout: int = settings.CELL_TIMEOUT_S, notebook_timeout: float = 600.0,
               memory_bytes: int = 4 << 30, threads: int = 1, files: Path | None = None,
               cpus: set[int] | None = None) -> HandinRun:
    """Run one hand-in; never raises for anything the hand-in does."""
    cells, out, notes = assemble(source, release, handin)
    first = next((n for n, c in enumerate(cells) if c["kind"] == "answer"), len(cells))
    flags = screen.screen([c["source"] for c in cells if c["kind"] == "answer"],
                          screen.bound_names([c["source"] for c in cells[:first]]))
    kernel = handin.metadata.get("kernelspec", {}).get("name", "python3")
    if kernel != "python3":
        notes.append(f"the hand-in names the kernel {kernel!r}; it ran on the course's python3")
    nonce = secrets.token_hex(16)
    job = {"nonce": nonce, "cell_timeout": cell_timeout, "output_limit": OUTPUT_LIMIT,
           "cells": [{k: c[k] for k in ("kind", "label", "source", "hidden")} for c in cells]}
    payload = json.dumps(job).encode()
    work = Path(tempfile.mkdtemp(prefix="handin-"))
    try:
        if files is not None:  # the lab's released data files, never other hand-ins
            for f in files.iterdir():
                if f.is_file() and f.suffix != ".ipynb":
                    shutil.copy(f, work / f.name)
        if sandboxed:
            limits = sandbox.Limits(memory_bytes=memory_bytes, wall_seconds=notebook_timeout)
            os.environ["OMP_NUM_THREADS"] = str(threads)
            result = sandbox.run([sys.executable, f"{sandbox.COURSE}/runner.py"], work, limits, slot=slot,
                                 extra_ro={str(RUNNER): f"{sandbox.COURSE}/runner.py"}, stdin=payload, cpus=cpus)
        else:
            result = _run_insecure(payload, work, notebook_timeout, threads)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    status, records, parse_flags = _read(result, nonce, len(cells))
    flags = flags + parse_flags
    run = HandinRun(status, out, round(result.seconds, 2), result.memory_peak, flags, notes)
    for rec in records.values():
        flags.extend(rec.get("flags", []))
    for n, cell in enumerate(cells):
        nb_cell = out.cells[cell["index"]]
        rec = records.get(n)
        if rec is None:
            nb_cell.outputs = [_error("GradingError", f"not run: {status}")]
            continue
        nb_cell.execution_count = n + 1
        nb_cell.outputs = [nbformat.from_dict(o) for o in rec["outputs"]]
        run.cell_seconds[cell["label"]] = rec.get("seconds", 0.0)
        if rec.get("flags") and cell["kind"] == "test" and rec.get("error") is None:
            nb_cell.outputs.append(_error("GradingError", "flagged: " + "; ".join(rec["flags"])[:500]))
    if flags:
        run.status = "flagged: " + flags[0][:300]
        for cell in cells:  # a hand-in caught tampering scores nothing until a person has looked
            if cell["kind"] == "test":
                out.cells[cell["index"]].outputs.append(
                    _error("GradingError", "the grader flagged this hand-in for review: " + flags[0][:300]))
    return run


def _error(ename: str, evalue: str) -> NotebookNode:
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue, traceback=[])


def _read(result, nonce: str, n_cells: int):
    """(status, {cell number: record}, flags) from what came back; forged or garbled lines are flags."""
    records, flags, ended = {}, [], False
    if result.killed:
        reason = {"timeout": "notebook timeout", "memory": "memory limit", "output": "output limit"}
        status = reason.get(result.killed, f"kernel died ({result.killed})")
    else:
        status = ""
    expected = 0
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            flags.append("the result channel carried a line the runner did not write")
            break
        if not isinstance(rec, dict) or rec.get("nonce") != nonce:
            flags.append("the result channel carried a forged record")
            break
        if rec.get("event") == "start":
            continue
        if rec.get("event") == "end":
            ended = True
            break
        if rec.get("i") != expected or expected >= n_cells:
            flags.append("the result channel's records are out of order")
            break
        records[expected] = rec
        expected += 1
        if rec.get("stop"):
            status = status or "cell timeout"
    if not status:
        status = "graded" if ended and expected == n_cells else "kernel died"
    return status, records, flags


@dataclass
class _Plain:
    returncode: int
    stdout: bytes
    stderr: bytes
    seconds: float
    killed: str = ""
    memory_peak: int = 0


def _run_insecure(payload: bytes, work: Path, timeout: float, threads: int) -> _Plain:
    """The same runner without bubblewrap (`--insecure`, and the lab-quality check where bwrap is missing)."""
    env = {**os.environ, "PYTHONPATH": str(settings.ROOT), "MPLBACKEND": "Agg", "TQDM_DISABLE": "1",
           "OMP_NUM_THREADS": str(threads), "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(RUNNER)], cwd=work, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    killed = ""
    try:
        out, err = proc.communicate(payload, timeout=timeout)
    except subprocess.TimeoutExpired:
        killed = "timeout"
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
    if not killed and proc.returncode and proc.returncode < 0:
        killed = f"signal {-proc.returncode}"
    return _Plain(proc.returncode, out, err[-20000:], time.perf_counter() - t0, killed)


def run_remote(source: str, release: str, handin: str, options: dict) -> dict:
    """`run_handin` on plain strings, for a dask worker (`make grade --executor dask`). The worker needs
    the same venv and bubblewrap; each worker takes its own sandbox uid from its name."""
    try:
        from distributed import get_worker
        name = str(get_worker().name)
        options = {**options, "slot": 8 + sum(map(ord, name)) % 64}
    except (ImportError, ValueError):
        pass
    files = options.pop("files", None)
    run = run_handin(nbformat.reads(source, as_version=4), nbformat.reads(release, as_version=4),
                     nbformat.reads(handin, as_version=4), files=Path(files) if files else None, **options)
    return run.to_json()

