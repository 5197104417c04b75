"""CSV files a person opens in a spreadsheet: no cell may become a formula.

OWASP's rule for CSV injection (https://owasp.org/www-community/attacks/CSV_Injection): a cell that starts
with `=`, `+`, `-`, `@`, a tab or a carriage return is read by Excel, LibreOffice and Google Sheets as a
formula; prefix it with a single quote. Ids, names and e-mails come from rosters and LMS downloads, so every
text cell goes through `cell`. A number the grader formatted itself (`-2.5`) is left as it is, so a score stays a
number. `reader` undoes the prefix, so a stage that reads grades.csv back sees the id the roster gave.
"""

from __future__ import annotations

import csv
import re

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?")


def cell(value) -> str:
    text = "" if value is None else str(value)
    if text.startswith(TRIGGERS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def uncell(text: str) -> str:
    return text[1:] if text.startswith("'") and text[1:].startswith(TRIGGERS) else text


class _Writer:
    def __init__(self, f):
        self._w = csv.writer(f)

    def writerow(self, row):
        self._w.writerow([cell(v) for v in row])


def writer(f) -> _Writer:
    """csv.writer whose every cell is neutralised (`cell`)."""
    return _Writer(f)


def reader(f) -> list[dict[str, str]]:
    """csv.DictReader's rows with the neutralising quote taken off again."""
    return [{k: uncell(v or "") if isinstance(v, str) else v for k, v in row.items()} for row in csv.DictReader(f)]
