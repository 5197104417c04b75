"""`python -m autograder.score <course> <lab> <student_id>...`: nbgrader's autograde for these
hand-ins, in one process (nbgrader's command line would start once per student).

Runs in the trusted parent after the sandboxed runs; nbgrader reads each run's
notebook through `PrecomputedExecute`, scores it and writes the gradebook, one
hand-in at a time. Prints one JSON line per student: {"student_id", "ok", "log"}.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime


def main(argv: list[str]) -> int:
    course, lab, due, students = argv[0], argv[1], argv[2], argv[3:]
    os.chdir(course)
    from nbgrader.api import Gradebook
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=course).load_config()
    coursedir = CourseDirectory(config=config)
    with Gradebook(coursedir.db_url) as gb:
        gb.update_or_create_assignment(lab, duedate=datetime.fromisoformat(due).replace(tzinfo=None) if due else None)
    api = NbGraderAPI(coursedir=coursedir, config=config)
    for sid in students:
        result = api.autograde(lab, sid, force=True, create=True)
        print(json.dumps({"student_id": sid, "ok": bool(result.get("success")),
                          "log": (result.get("error") or "")[-2000:]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
