"""What happened to a hand-in, as one word a program can test and a person can read.

A status in grades.csv, the report and the audit log is `Status` alone ("graded") or
`Status: detail` ("malformed: not UTF-8 text (byte 0)"); `kind_of` reads the word back.
Every status but GRADED means the hand-in needs a person's look.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    GRADED = "graded"  # ran to the end; the judge decided every point
    MALFORMED = "malformed"  # not a notebook the grader can read (collect)
    REFUSED = "refused"  # unsafe input: a link, a path out of the zip, a reserved name (collect)
    UNKNOWN_STUDENT = "unknown student"  # not on the roster (collect)
    MISSING = "missing"  # on the roster, no hand-in (collect)
    NOTEBOOK_TIMEOUT = "notebook timeout"  # run: past the wall-clock limit
    CELL_TIMEOUT = "cell timeout"  # run: one cell past its limit
    MEMORY_LIMIT = "memory limit"  # run: killed by its memory cgroup
    OUTPUT_LIMIT = "output limit"  # run: the result channel past its cap
    KERNEL_DIED = "kernel died"  # run: the process ended before the last cell
    FORGED = "forged result records"  # run: the result channel carried records the runner did not write
    GRADER_ERROR = "grader error"  # a fault of the grader's own with this hand-in; the class went on
    NOT_GRADED = "not graded"  # nbgrader could not score it (see the audit log)


def status(kind: Status, detail: str = "") -> str:
    return f"{kind}: {detail}" if detail else str(kind)


def kind_of(text: str) -> Status | None:
    for kind in sorted(Status, key=lambda k: -len(k.value)):
        if text == kind.value or text.startswith(kind.value + ":") or text.startswith(kind.value + " ("):
            return kind
    return None
