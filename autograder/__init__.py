"""`make grade`: hand-ins in, grades out, through named stages (one module each).

collect (collect.py: folders, LMS zips, roster, times) -> reference (reference.py: the
solution's observations; the grader's self-check) -> run (run.py: each hand-in in the
sandbox, sandbox.py + sandbox_runner.py) -> judge (judge.py: the points, decided from
plain data; verify.py: tests judged against facts; compile.py: the compiler's words for C++
that did not build) -> record (record.py: nbgrader's gradebook) -> report (report.py: grades.csv,
feedback, class report, audit log). grade.py ties them together; settings.py holds every
path; screen.py reads answer code; late.py is the late penalty. The threat model:
THREATS.md. Course tooling that is not grading lives in `coursetools/`.
"""

import sys

# nbformat validates with jsonschema, which imports rfc3987_syntax where it is installed (a Jupyter
# dependency) and compiles its grammars: most of a second in every grading process, for the IRI formats
# that no notebook schema uses. The grader's processes go without it (an import of it raises ImportError).
sys.modules.setdefault("rfc3987_syntax", None)
