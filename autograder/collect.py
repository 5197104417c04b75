"""From what the instructor downloaded to one checked hand-in per student.

Input is a folder with one sub-folder per student (`<student_id>/<lab>.ipynb`, an
optional `timestamp.txt` beside it, as nbgrader writes) or an LMS zip whose file
names carry the student id (`grading.toml` [zip] says how). Nothing here trusts
the input: zip entries with `../` or absolute paths, links, oversized or
bomb-like entries are refused; files that are not UTF-8, not JSON or not a
notebook, and hand-ins from students who are not on the roster, get a status and
are never run. Two hand-ins from one student: the latest counts, and the status
says so.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import stat
import tomllib
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import nbformat

from autograder import settings

POLICY_FILE = settings.ROOT / "grading.toml"


@dataclass
class Policy:
    roster: Path | None = None
    due: dict[str, datetime] = field(default_factory=dict)
    penalty_per_day: float = 0.0
    max_penalty: float = 0.0
    grace_minutes: float = 0.0
    timezone: str = "UTC"  # for times written without a zone (an IANA name)
    zip_regex: str = r"^(?P<student_id>[A-Za-z0-9.@-]+)_"
    max_file_bytes: int = 20_000_000
    max_total_bytes: int = 500_000_000

    def penalty(self, lab: str, submitted: datetime | None) -> tuple[float, float]:
        """(fraction of the points taken, hours late) for a hand-in submitted at `submitted`."""
        due = self.due.get(lab)
        if due is None or submitted is None:
            return 0.0, 0.0
        late_s = (submitted - due).total_seconds()
        if late_s <= self.grace_minutes * 60:
            return 0.0, max(0.0, late_s / 3600)
        days = -(-late_s // 86400)  # a started day counts
        return min(self.max_penalty, self.penalty_per_day * days), late_s / 3600


def load_policy(path: Path = POLICY_FILE) -> Policy:
    if not path.exists():
        return Policy()
    data = tomllib.loads(path.read_text())
    late, z = data.get("late", {}), data.get("zip", {})
    roster = data.get("roster")
    zone = str(data.get("timezone", "UTC"))
    due = {}
    for lab, text in data.get("due", {}).items():
        try:
            due[lab] = parse_time(str(text), zone)
        except ValueError as e:
            raise ValueError(f"{path}: the due date of {lab} ({text!r}) is not a time: {e}") from None
    return Policy(
        roster=(path.parent / roster) if roster else None, due=due, timezone=zone,
        penalty_per_day=float(late.get("penalty_per_day", 0.0)), max_penalty=float(late.get("max_penalty", 0.0)),
        grace_minutes=float(late.get("grace_minutes", 0.0)),
        zip_regex=z.get("filename_regex", Policy.zip_regex), max_file_bytes=int(z.get("max_file_bytes", 20_000_000)),
        max_total_bytes=int(z.get("max_total_bytes", 500_000_000)))


# Zone abbreviations LMSs and nbgrader write; each maps to the zone it names, so DST is right.
ZONE_ABBREVIATIONS = {"UTC": "UTC", "GMT": "UTC", "Z": "UTC", "PST": "America/Los_Angeles",
                      "PDT": "America/Los_Angeles", "MST": "America/Denver", "MDT": "America/Denver",
                      "CST": "America/Chicago", "CDT": "America/Chicago", "EST": "America/New_York",
                      "EDT": "America/New_York", "BST": "Europe/London", "CET": "Europe/Paris",
                      "CEST": "Europe/Paris"}


def parse_time(text: str, zone: str = "UTC") -> datetime:
    """A time as courses write it: ISO 8601 with an offset or `Z`, nbgrader's timestamp.txt
    (`2026-09-21 23:59:00.123456 UTC`), a zone abbreviation (`PDT`), an IANA name after the time
    (`2026-09-21 16:59 America/Los_Angeles`), or no zone at all (then `zone`, grading.toml's
    `timezone`). Always aware; ValueError for text that is not a time."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from dateutil import parser

    text = text.strip()
    words = text.split()
    tz = None
    if len(words) > 1 and "/" in words[-1]:
        try:
            tz, text = ZoneInfo(words[-1]), " ".join(words[:-1])
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {words[-1]!r}") from None
    elif words and words[-1].upper() in ZONE_ABBREVIATIONS:
        tz, text = ZoneInfo(ZONE_ABBREVIATIONS[words[-1].upper()]), " ".join(words[:-1])
    try:
        t = parser.isoparse(text)
    except ValueError:
        try:
            t = parser.parse(text)
        except (ValueError, OverflowError) as e:
            raise ValueError(f"not a time: {text[:40]!r}") from e
    if t.tzinfo is None:
        t = t.replace(tzinfo=tz or ZoneInfo(zone))
    return t.astimezone(UTC)


@dataclass
class Handin:
    student_id: str
    path: Path | None  # the staged copy that will be graded (None when it cannot be)
    submitted: datetime | None = None
    status: str = "ok"  # "ok", or why it is not graded: malformed, unknown student, ...
    notes: list[str] = field(default_factory=list)
    sha256: str = ""
    origin: str = ""  # where it came from (folder path or zip entry), for the audit log
    attempt: int = 1  # "lab01-strides (2).ipynb" or "lab01-strides-2.ipynb": the 2nd hand-in in one folder


def read_roster(path: Path | None) -> dict[str, dict] | None:
    if path is None or not path.exists():
        return None
    with path.open(newline="") as f:
        return {row["id"].strip(): row for row in csv.DictReader(f) if row.get("id", "").strip()}


SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


def collect(submissions: Path, lab: str, staging: Path, policy: Policy,
            roster_path: Path | None = None) -> tuple[dict[str, Handin], dict[str, dict] | None]:
    """{student_id: Handin} staged under `staging/<student_id>/<lab>.ipynb`, and the roster used."""
    if staging.exists():
        from autograder.sandbox import remove_tree
        remove_tree(staging)  # a folder tree too deep for shutil.rmtree must not stop the class
    staging.mkdir(parents=True)
    if submissions.is_file() and zipfile.is_zipfile(submissions):
        found = _from_zip(submissions, lab, staging / "_zip", policy)
        roster_path = roster_path or (staging / "_zip" / "students.csv" if (staging / "_zip" / "students.csv").exists()
                                      else None)
    elif submissions.is_dir():
        found = _from_folder(submissions, lab, policy.timezone)
        roster_path = roster_path or (submissions / "students.csv" if (submissions / "students.csv").exists() else None)
    else:
        raise FileNotFoundError(f"SUBMISSIONS={submissions}: expected a folder of <student_id>/{lab}.ipynb "
                                "or an LMS .zip download")
    roster = read_roster(roster_path or policy.roster)
    handins: dict[str, Handin] = {}
    for sid, candidates in sorted(found.items()):
        candidates.sort(key=lambda h: (h.submitted or datetime.min.replace(tzinfo=UTC), h.attempt, h.origin))
        chosen = candidates[-1]
        if len(candidates) > 1:
            chosen.notes.append(f"{len(candidates)} hand-ins from this student: graded the latest, {chosen.origin}")
        if chosen.status != "ok":
            pass  # refused or unreadable already, and says why
        elif not SAFE_ID.match(sid):
            chosen.status, chosen.path = "refused: the student id has characters a file name cannot carry", None
        elif roster is not None and sid not in roster:
            chosen.status = "unknown student: not on the roster (not graded)"
        if chosen.status == "ok":
            chosen.path = _stage(chosen, staging / sid / f"{lab}.ipynb", policy)
        handins[sid] = chosen
    if roster is not None:
        for sid in sorted(set(roster) - set(handins)):
            handins[sid] = Handin(sid, None, status="missing: no hand-in")
    return handins, roster


RESERVED = {"_zip", "students.csv", "timestamp.txt", "staged", "runs"}  # names the grader's own files use


def _from_folder(folder: Path, lab: str, zone: str = "UTC") -> dict[str, list[Handin]]:
    """One folder per student. A folder that cannot be read, a reserved name, an unreadable time: each a
    status or a note on that student, never an exception."""
    found: dict[str, list[Handin]] = {}
    for student_dir in sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()):
        sid = student_dir.name
        if sid in RESERVED or sid.startswith((".", "_")):
            found.setdefault(sid, []).append(Handin(sid, None, status="refused: the folder name is reserved by "
                                                    "the grader", origin=str(student_dir)))
            continue
        try:
            if (student_dir / lab).is_dir() and not (student_dir / lab).is_symlink():
                student_dir = student_dir / lab  # nbgrader's own layout: submitted/<student_id>/<lab>/<lab>.ipynb
            files = sorted(p for p in student_dir.glob("*.ipynb") if p.name.startswith(lab))
        except OSError as e:
            found.setdefault(sid, []).append(Handin(sid, None, status=f"malformed: the folder cannot be read "
                                                    f"({e.strerror})", origin=str(student_dir)))
            continue
        stamp = student_dir / "timestamp.txt"
        submitted, problem = None, ""
        try:
            if stamp.is_file() and not stamp.is_symlink():
                text = stamp.read_text(errors="replace")[:100]
                try:
                    submitted = parse_time(text, zone)
                except ValueError:
                    problem = f"review: unreadable submission time in timestamp.txt ({text.strip()[:40]!r}): " \
                        "no late penalty was applied"
        except OSError as e:
            problem = f"review: timestamp.txt cannot be read ({e.strerror}): no late penalty was applied"
        for path in files:  # several in one folder share a time stamp: the highest attempt number wins
            m = re.search(r"(\d+)\)?$", path.stem[len(lab):])
            h = Handin(sid, path, submitted, origin=str(path), attempt=int(m.group(1)) if m else 1)
            if problem:
                h.notes.append(problem)
            if path.is_symlink():
                h.status = "refused: the hand-in is a symbolic link"
            found.setdefault(sid, []).append(h)
    return found


def _from_zip(archive: Path, lab: str, dest: Path, policy: Policy) -> dict[str, list[Handin]]:
    """Extract only what is safe: no paths outside dest, no links, bounded sizes (read, not trusted)."""
    dest.mkdir(parents=True)
    regex = re.compile(policy.zip_regex)
    found: dict[str, list[Handin]] = {}
    total = 0
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = info.filename
            base = name.rsplit("/", 1)[-1]
            if info.is_dir():
                continue
            if base == "students.csv" and "/" not in name.strip("/"):
                _extract_bounded(zf, info, dest / "students.csv", 5_000_000)
                continue
            if not base.endswith(".ipynb"):
                continue
            m = regex.search(base)
            sid = m.group("student_id") if m else base.removesuffix(".ipynb")
            try:
                when = datetime(*info.date_time, tzinfo=UTC)
            except (ValueError, TypeError):
                when = None
            h = Handin(sid, None, when, origin=f"{archive.name}:{name}")
            if when is None:
                h.notes.append(f"review: the zip entry has no valid date {info.date_time}: no late penalty was "
                               "applied")
            mode = info.external_attr >> 16
            if name.startswith("/") or ".." in Path(name).parts or "\\" in name:
                h.status = f"refused: unsafe path in the zip ({name!r})"
            elif stat.S_ISLNK(mode):
                h.status = "refused: the zip entry is a symbolic link"
            elif lab not in base:
                continue  # another lab's file
            else:
                total += min(info.file_size, policy.max_file_bytes + 1)
                if total > policy.max_total_bytes:
                    h.status = "refused: the zip expands past the size limit (zip bomb?)"
                else:
                    out = dest / f"{len(found)}-{len(found.get(sid, []))}.ipynb"
                    size = _extract_bounded(zf, info, out, policy.max_file_bytes)
                    if size is None:
                        h.status = f"malformed: larger than {policy.max_file_bytes // 1_000_000} MB when unpacked"
                    else:
                        h.path = out
            found.setdefault(sid, []).append(h)
    return found


def _extract_bounded(zf: zipfile.ZipFile, info: zipfile.ZipInfo, out: Path, limit: int) -> int | None:
    size = 0
    with zf.open(info) as src, out.open("wb") as dst:
        while chunk := src.read(1 << 20):
            size += len(chunk)
            if size > limit:
                dst.close()
                out.unlink()
                return None
            dst.write(chunk)
    return size


def _stage(h: Handin, dest: Path, policy: Policy) -> Path | None:
    """Check the file is a readable notebook; copy it where the grader reads it. None if it is not."""
    if h.path is None:
        h.status = h.status if h.status != "ok" else "malformed: nothing to grade"
        return None
    try:
        raw = h.path.read_bytes()[: policy.max_file_bytes + 1]
    except OSError as e:
        h.status = f"malformed: cannot read the file ({e.strerror})"
        return None
    h.sha256 = hashlib.sha256(raw).hexdigest()
    if len(raw) > policy.max_file_bytes:
        h.status = f"malformed: larger than {policy.max_file_bytes // 1_000_000} MB"
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        h.status = f"malformed: not UTF-8 text (byte {e.start})"
        return None
    try:
        data = json.loads(text)
    except ValueError as e:
        h.status = f"malformed: not JSON ({str(e)[:80]})"
        return None
    try:
        nb = nbformat.from_dict(data)
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            raise ValueError("no list of cells")
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # noqa: BLE001 - any way it is not a notebook
        h.status = f"malformed: not a Jupyter notebook ({str(e).splitlines()[0][:100]})"
        return None
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(text, encoding="utf-8")
    if h.submitted is not None:
        (dest.parent / "timestamp.txt").write_text(h.submitted.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    return dest
