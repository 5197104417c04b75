"""Stage "record": nbgrader's gradebook gets the judged runs.

`python -m autograder.record <course> <lab> <due> <student_id>...|-` runs nbgrader's autograde for
these hand-ins (`-`: ids read from stdin, one per line, as the grader's runs finish), in one process
(nbgrader's command line would start once per student). Where
nbgrader's own `Execute` would run the student's notebook in the grader's process,
`PrecomputedExecute` hands it the notebook the sandboxed run produced and the judge marked
(`run.py`, `judge.py`): the instructor's cells around the student's answers, with sanitised
outputs, and an error on every test the judge failed. nbgrader then scores it and writes the
gradebook, so formgrader and `nbgrader export` keep working.

Runs in the trusted parent after the sandboxed runs; nbgrader reads each run's
notebook through `PrecomputedExecute`, scores it and writes the gradebook, one
hand-in at a time. Prints one JSON line per student: {"student_id", "ok", "log"}.

A learner's extension in grading.toml ([extensions]) becomes nbgrader's own: the submission's
`extension` in the gradebook, set before autograde, so nbgrader's lateness (and with it the late
penalty, `late.py`) counts from the learner's own due date, and formgrader shows it.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime
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



def apply_extension(gb, lab: str, student_id: str, extension) -> None:
    """The gradebook's extension for this learner and lab: grading.toml's, or none (an extension taken out of
    grading.toml is taken out of the gradebook at the next regrade)."""
    from nbgrader.api import MissingEntry

    try:
        submission = gb.find_submission(lab, student_id)
    except MissingEntry:
        if extension is None:
            return
        gb.update_or_create_student(student_id)
        gb.update_or_create_submission(lab, student_id, extension=extension)
        return
    if submission.extension != extension:
        submission.extension = extension
        gb.db.commit()


class _CheckedSchemas:
    """`jsonschema` as nbgrader's metadata validator uses it (`jsonschema.validate(metadata, schema)` for every
    cell of every notebook), with each schema checked against JSON Schema's metaschema once instead of at every
    call: that re-check was a quarter of the time scoring a hand-in took. Each cell's metadata is still
    validated against nbgrader's schema, and fails as it would."""

    def __init__(self):
        import jsonschema

        self._module, self._validators = jsonschema, {}

    def validate(self, instance, schema, *args, **kwargs):
        if args or kwargs:
            return self._module.validate(instance, schema, *args, **kwargs)
        kept = self._validators.get(id(schema))  # the schema is kept with its validator, so its id stays its own
        if kept is None or kept[0] is not schema:
            cls = self._module.validators.validator_for(schema)
            cls.check_schema(schema)
            kept = self._validators[id(schema)] = (schema, cls(schema))
        error = self._module.exceptions.best_match(kept[1].iter_errors(instance))
        if error is not None:
            raise error

    def __getattr__(self, name):
        return getattr(self._module, name)


def share_engines() -> None:
    """One SQLAlchemy engine per gradebook URL for this process, instead of one per `Gradebook`.

    nbgrader opens a `Gradebook` about ten times for every hand-in it scores (the converter, each
    preprocessor, the API), and each one built a new engine: a new connection pool, the tables checked again,
    and every query compiled again, because SQLAlchemy caches compiled queries per engine. That was a third
    of scoring a hand-in. The engine is shared; each `Gradebook` still has its own session, `close()` still
    returns its connections (`dispose` on a shared engine empties the pool and keeps the compiled queries), and
    the tables are still created when the file has none (the first `Gradebook` of the URL)."""
    import functools

    from nbgrader import api

    if getattr(api.create_engine, "shared", False):
        return
    made = api.create_engine

    @functools.cache
    def shared(url, **kwargs):
        engine = made(url, **kwargs)
        engine.tables_checked = False
        return engine

    def create_engine(url, **kwargs):
        return shared(url, **dict(sorted(kwargs.items())))

    create_engine.shared = True
    create_all = api.Base.metadata.create_all

    def create_all_once(bind=None, **kwargs):
        if bind is not None and getattr(bind, "tables_checked", False):
            return
        create_all(bind=bind, **kwargs)
        if bind is not None and hasattr(bind, "tables_checked"):
            bind.tables_checked = True

    api.create_engine = create_engine
    api.Base.metadata.create_all = create_all_once


def main(argv: list[str]) -> int:
    course, lab, due, students = argv[0], argv[1], argv[2], argv[3:]
    os.chdir(course)
    from nbgrader.nbgraderformat import common as nbgrader_format

    nbgrader_format.jsonschema = _CheckedSchemas()
    share_engines()
    from nbgrader.api import Gradebook
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=course).load_config()
    coursedir = CourseDirectory(config=config)
    with Gradebook(coursedir.db_url) as gb:
        gb.update_or_create_assignment(lab, duedate=datetime.fromisoformat(due).replace(tzinfo=None) if due else None)
    api = NbGraderAPI(coursedir=coursedir, config=config)
    if students == ["-"]:  # one id per line on stdin, as the grader's runs finish
        students = (line.strip() for line in sys.stdin if line.strip())
    from autograder.collect import load_policy

    policy = load_policy()
    for sid in students:
        with Gradebook(coursedir.db_url) as gb:
            apply_extension(gb, lab, sid, policy.extension(lab, sid))
        result = api.autograde(lab, sid, force=True, create=True)
        print(json.dumps({"student_id": sid, "ok": bool(result.get("success")),
                          "log": (result.get("error") or "")[-2000:]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
