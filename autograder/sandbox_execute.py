"""nbgrader's execute step, replaced by the results of the sandboxed runs.

`make grade` runs every hand-in first, in parallel, each in its own sandbox
(`execute_handin.py`), and stores each run under the course's `runs/<lab>/`. Then
nbgrader autogrades as usual (so the gradebook, formgrader and `nbgrader export`
keep working), but where its own `Execute` would run the student's notebook in the
grader's process, `PrecomputedExecute` hands back the notebook the sandboxed run
produced: the trusted assembly of the instructor's cells around the student's
answers, with outputs and verdicts. nbgrader then scores it and writes the
gradebook, in the trusted parent, one hand-in at a time.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode


class PrecomputedExecute(NbGraderPreprocessor):
    runs_dir = Unicode("", help="folder of <student_id>.json runs written by the parallel stage").tag(config=True)

    def preprocess(self, nb, resources):
        student = resources.get("nbgrader", {}).get("student", "unknown")
        path = Path(self.runs_dir) / f"{student}.json"
        if not path.exists():
            raise RuntimeError(f"no sandboxed run recorded for {student} in {self.runs_dir}")
        data = json.loads(path.read_text())
        executed = nbformat.reads(data["notebook"], as_version=4)
        return executed, resources
