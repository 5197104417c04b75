"""From what the instructor downloaded to one checked hand-in per student.

Input is a folder with one sub-folder per student (`<student_id>/<lab>.ipynb`, an
optional `timestamp.txt` beside it, as nbgrader writes) or an LMS zip whose file
names carry the student id (`grading.toml` [zip] says how). Nothing here trusts
the input: zip entries with `../` or absolute paths, links, oversized or
bomb-like entries are refused; files that are not UTF-8, not JSON or not a
notebook, and hand-ins from students who are not on the roster, get a status and
are never run. Two hand-ins from one student: the latest counts, and the status
says so.

No hand-in makes `collect` raise: a folder or file that cannot be read, a name the
grader reserves or that is not UTF-8, a zip entry that will not unpack or has no
date, each gets a status or a note and the rest of the class is collected. Only a
SUBMISSIONS or roster that cannot be read at all raises, as FileNotFoundError. A
`timestamp.txt` that cannot be read does not skip the late penalty silently: the
hand-in is graded and `Handin.time_problem` says why its time is unknown.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import re
import stat
import time
import tomllib
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import nbformat
from dateutil import parser as dateparser

from autograder import settings
from autograder.sandbox import remove_tree


@dataclass
class Policy:
    roster: Path | None = None
    due: dict[str, datetime] = field(default_factory=dict)
    penalty_per_day: float = 0.0
    max_penalty: float = 0.0
    grace_minutes: float = 0.0
    timezone: str = "UTC"  # IANA name: the zone of a time written without one (and of zip entries' times)
    zip_regex: str = r"^(?P<student_id>[A-Za-z0-9.@-]+)_"
    lms: str = ""  # "canvas": Canvas's download names and lateness rules (CANVAS_REGEX); ids are Canvas user ids
    max_file_bytes: int = 20_000_000
    max_total_bytes: int = 500_000_000
    # lab -> student id -> extra time after the lab's due date, for that learner alone
    extensions: dict[str, dict[str, timedelta]] = field(default_factory=dict)

    def extension(self, lab: str, student_id: str) -> timedelta | None:
        return self.extensions.get(lab, {}).get(student_id)

    def penalty(self, lab: str, submitted: datetime | None, student_id: str = "") -> tuple[float, float]:
        """(fraction of the points taken, hours late) for a hand-in submitted at `submitted`; the learner's
        extension, if any, moves their due date."""
        due = self.due.get(lab)
        if due is None or submitted is None:
            return 0.0, 0.0
        due += self.extension(lab, student_id) or timedelta(0)
        late_s = (submitted - due).total_seconds()
        if late_s <= self.grace_minutes * 60:
            return 0.0, max(0.0, late_s / 3600)
        days = -(-late_s // 86400)  # a started day counts
        return min(self.max_penalty, self.penalty_per_day * days), late_s / 3600


# Canvas's "Download Submissions" zip, as Canvas's own source writes it (canvas-lms, lib/content_zipper.rb,
# `get_filename` and `add_upload_submission`): each uploaded file is named
#     <name>[_LATE]_<user id>_<attachment id>_<file>
# where <name> is the learner's sortable name, lower-cased, with every character that is not a word character
# removed (so it never holds "LATE", a space or a comma; `_<digits>_` in it is squeezed out); with anonymous
# grading the name is left out and the id is the submission's anonymous id:
#     [LATE_]anon_<anonymous id>_<attachment id>_<file>
# (the anonymous id is 5 base58 characters, lib/anonymity.rb). LATE is Canvas's own verdict (its due date,
# overrides and extensions); the entries' times are when the zip was built, not when the learner submitted,
# so with a regex that has a `late` group they are not used. The zip holds each learner's current submission
# only; when that one attempt uploaded several copies of the notebook, the highest attachment id (Canvas's
# database ids grow) is the newest.
CANVAS_REGEX = (r"^(?:(?!LATE_|anon_)(?P<name>\w*?)_)?(?P<late>LATE_)?"
                r"(?P<student_id>anon_[1-9A-HJ-NP-Za-km-z]+|\d+)_(?P<attachment>\d+)_")


def canvas_anonymous(student_id: str) -> bool:
    """Whether the id is one Canvas gives a hand-in under anonymous grading (CANVAS_REGEX): no roster holds it."""
    return re.fullmatch(r"anon_[1-9A-HJ-NP-Za-km-z]+", student_id) is not None


def load_policy(path: Path | None = None) -> Policy:
    """grading.toml (or COURSE_GRADING_TOML's file) as a Policy. The instructor's own file: a time zone, due date
    or zip regex it cannot use is a ValueError that names it."""
    path = path or settings.policy_file()
    if not path.exists():
        return Policy()
    data = tomllib.loads(path.read_text())
    late, z = data.get("late", {}), data.get("zip", {})
    roster = data.get("roster")
    zone = str(data.get("timezone", "UTC"))
    try:
        _zone(zone)
    except ValueError as e:
        raise ValueError(f"{path}: timezone = {zone!r} is not an IANA time zone name") from e
    due = {}
    for lab, value in data.get("due", {}).items():
        try:
            due[lab] = parse_time(str(value), zone)  # TOML may hold a datetime itself: its str() parses back
        except ValueError as e:
            raise ValueError(f"{path}: [due] {lab}: {e}") from e
    lms = str(z.get("lms", "")).lower()
    if lms not in ("", "canvas"):
        raise ValueError(f"{path}: [zip] lms = {lms!r}: the one LMS with a preset is 'canvas'")
    zip_regex = CANVAS_REGEX if lms == "canvas" else z.get("filename_regex", Policy.zip_regex)
    try:
        if "student_id" not in re.compile(zip_regex).groupindex:
            raise ValueError("it has no (?P<student_id>...) group")
    except (re.error, ValueError) as e:
        raise ValueError(f"{path}: [zip] filename_regex = {zip_regex!r}: {e}") from e
    extensions = {}
    for lab, table in data.get("extensions", {}).items():
        if not isinstance(table, dict):
            raise ValueError(f"{path}: [extensions] {lab} must be a table of student id = extension, got {table!r}")
        for sid, value in table.items():
            try:
                extensions.setdefault(lab, {})[str(sid)] = parse_extension(value, due.get(lab), zone)
            except ValueError as e:
                raise ValueError(f"{path}: [extensions] {lab}: {sid}: {e}") from e
    return Policy(
        extensions=extensions,
        roster=(path.parent / roster) if roster else None, due=due,
        penalty_per_day=float(late.get("penalty_per_day", 0.0)), max_penalty=float(late.get("max_penalty", 0.0)),
        grace_minutes=float(late.get("grace_minutes", 0.0)), timezone=zone,
        zip_regex=zip_regex, lms=lms, max_file_bytes=int(z.get("max_file_bytes", 20_000_000)),
        max_total_bytes=int(z.get("max_total_bytes", 500_000_000)))


DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)\s*w)?\s*(?:(\d+(?:\.\d+)?)\s*d)?\s*(?:(\d+(?:\.\d+)?)\s*h)?\s*"
                      r"(?:(\d+(?:\.\d+)?)\s*m)?", re.I)


def parse_extension(value, due: datetime | None, zone: str = "UTC") -> timedelta:
    """An extension as grading.toml writes it: a duration ("3d", "36h", "1d 12h", "90m", "1w") added to the
    lab's due date, or the learner's own due date (any form `parse_time` reads), which must come after it."""
    text = str(value).strip()[:100]
    m = DURATION.fullmatch(text)
    if text and m and any(m.groups()):
        weeks, days, hours, minutes = (float(g or 0) for g in m.groups())
        try:
            extra = timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes)
        except OverflowError:
            extra = MAX_EXTENSION * 2
        if extra > MAX_EXTENSION:
            raise ValueError(f"{text!r} is longer than {MAX_EXTENSION.days} days: an extension is a few days or weeks")
        return extra
    try:
        own = parse_time(text, zone)
    except ValueError:
        raise ValueError(f"{value!r} is neither a duration (3d, 36h, 1d 12h, 90m, 1w) nor a due date") from None
    if due is None:
        raise ValueError(f"a due date ({value!r}) needs the lab's own due date in [due]; give a duration instead")
    if own <= due:
        raise ValueError(f"{value!r} is not after the lab's due date {due.isoformat()}: an extension gives more time")
    if own - due > MAX_EXTENSION:
        raise ValueError(f"{value!r} is more than {MAX_EXTENSION.days} days after the lab's due date")
    return own - due


MAX_EXTENSION = timedelta(days=366)


def unknown_extensions(policy: Policy, lab: str, roster: dict | None, handins: dict) -> list[str]:
    """Learners grading.toml gives an extension for this lab who are neither on the roster nor among the
    hand-ins: most likely a typo in an id, which would otherwise leave the real learner without it."""
    known = set(roster or {}) | set(handins)
    return sorted(sid for sid in policy.extensions.get(lab, {}) if sid not in known)


# The zone each abbreviation names, not a fixed offset: the zone's rules settle the offset for the date, so a
# sloppy "PST" in July is still Pacific time, and dateutil picks the repeated hour's side the abbreviation names.
ZONE_ABBREVIATIONS = {
    "PDT": "America/Los_Angeles", "PST": "America/Los_Angeles", "EDT": "America/New_York",
    "EST": "America/New_York", "CDT": "America/Chicago", "CST": "America/Chicago", "MDT": "America/Denver",
    "MST": "America/Phoenix",  # Arizona keeps MST all year: a summer "MST" comes from there, not from Denver
    "BST": "Europe/London", "CET": "Europe/Paris", "CEST": "Europe/Paris", "UTC": "UTC", "GMT": "UTC",
}


def parse_time(text: str, zone: str = "UTC") -> datetime:
    """A time in any form a course produces, as an aware datetime in UTC: ISO 8601 with an offset or `Z`,
    nbgrader's timestamp.txt ("2026-09-21 23:59:00.123456 UTC"), a zone abbreviation (PDT, CET, ...) or an IANA
    name ("2026-09-21 16:59 America/Los_Angeles") after it. Without a zone it is in `zone`, an IANA name.
    ValueError for text that is not a time on a whole date (a date alone is its midnight)."""
    text = text.strip()
    iana = re.fullmatch(r"(.+?)\s+([A-Za-z][\w+-]*(?:/[\w+-]+)+)", text)
    if iana:
        text = iana.group(1)
    tz = _zone(iana.group(2) if iana else zone)
    text = re.sub(r"\b(?:UTC|GMT)\s*(?=[+-]\d)", "", text)  # "UTC+2" is +02:00 to people, -02:00 to dateutil
    try:
        # Parsed with two defaults: a field that differs between them was not in the text ("12", "Sep 21").
        first, second = (dateparser.parse(text, default=d, tzinfos=_tzinfo)
                         for d in (datetime(2000, 1, 1), datetime(2001, 2, 2)))
        if first != second:
            raise ValueError("no full date")
        if first.tzinfo is not None and iana:
            raise ValueError("two time zones")
        return (first if first.tzinfo else first.replace(tzinfo=tz)).astimezone(UTC)
    except (ValueError, OverflowError) as e:
        raise ValueError(f"not a time: {text[:80]!r} ({e})") from e


def _tzinfo(name: str | None, offset: int | None) -> timezone | ZoneInfo | None:
    """dateutil's tzinfos: an abbreviation above or a bare offset; any other name is an error, not UTC (dateutil
    would leave the time naive, or take the name for this machine's own zone)."""
    if name is None:
        return None if offset is None else timezone(timedelta(seconds=offset))
    if name not in ZONE_ABBREVIATIONS:
        raise ValueError(f"unknown time zone {name!r}")
    return ZoneInfo(ZONE_ABBREVIATIONS[name])


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ValueError, KeyError, OSError) as e:  # not a key, no such zone, a folder of zones ("America")
        raise ValueError(f"unknown time zone {name!r}") from e


@dataclass
class Handin:
    student_id: str
    path: Path | None  # the staged copy that will be graded (None when it cannot be)
    submitted: datetime | None = None
    status: str = "ok"  # "ok", or why it is not graded: malformed, unknown student, ...
    notes: list[str] = field(default_factory=list)
    sha256: str = ""
    origin: str = ""  # where it came from (folder path or zip entry), for the audit log
    attempt: int = 0  # "lab01-strides (2).ipynb" or "lab01-strides-2.ipynb": a later copy in one folder
    upload: int = 0  # the LMS's own id of the uploaded file (Canvas's attachment id): a later upload's is higher
    order: int = 0  # its place in the zip or folder listing: the last of equal times and attempts counts
    time_problem: str = ""  # why a submission time that was given cannot be read: the late penalty is unchecked
    late_marker: bool = False  # the LMS marked it late without saying when it came (Canvas's _LATE_)


def read_roster(path: Path | None) -> dict[str, dict] | None:
    if path is None:
        return None
    try:
        if not path.is_file():
            return None
        with path.open(newline="", encoding="utf-8-sig") as f:  # -sig: a spreadsheet's byte-order mark
            return {(row.get("id") or "").strip(): row for row in csv.DictReader(f) if (row.get("id") or "").strip()}
    except (OSError, ValueError, csv.Error) as e:  # grading without the roster would grade strangers
        raise FileNotFoundError(f"roster {path}: cannot read it ({e})") from e


SAFE_ID = settings.SAFE_ID
MAX_CELLS = 2000


def collect(submissions: Path, lab: str, staging: Path, policy: Policy,
            roster_path: Path | None = None) -> tuple[dict[str, Handin], dict[str, dict] | None]:
    """{student_id: Handin} staged under `staging/<student_id>/<lab>.ipynb`, and the roster used."""
    _clear(staging)
    staging.mkdir(parents=True)
    try:
        if submissions.is_file() and zipfile.is_zipfile(submissions):
            found = _from_zip(submissions, lab, staging / "_zip", policy)
            own_roster = staging / "_zip" / "students.csv"
        elif submissions.is_dir():
            found = _from_folder(submissions, lab, policy.timezone, skip=staging)
            own_roster = submissions / "students.csv"
        else:
            raise FileNotFoundError(f"SUBMISSIONS={submissions}: expected a folder of <student_id>/{lab}.ipynb "
                                    "or an LMS .zip download")
        roster_path = roster_path or (own_roster if own_roster.is_file() else None)
    except FileNotFoundError:
        raise
    except OSError as e:  # SUBMISSIONS itself cannot be listed: there is no hand-in to give a status to
        raise FileNotFoundError(f"SUBMISSIONS={submissions}: cannot read it ({_why(e)})") from e
    roster = read_roster(roster_path or policy.roster)
    handins: dict[str, Handin] = {}
    for sid, candidates in sorted(found.items()):
        candidates.sort(key=lambda h: (h.submitted or datetime.min.replace(tzinfo=UTC), h.upload, h.attempt,
                                       h.order))
        chosen = candidates[-1]
        if len(candidates) > 1:
            chosen.notes.append(f"{len(candidates)} hand-ins from this student: graded the latest, {chosen.origin}")
        if sid.startswith((".", "_")) or sid.lower() in ("students.csv", "timestamp.txt"):
            # staging/_zip, the roster and the time stamp are the grader's own files
            chosen.status, chosen.path = "refused: the folder name is reserved by the grader", None
        elif not SAFE_ID.fullmatch(sid):
            chosen.status, chosen.path = "refused: the student id has characters a file name cannot carry", None
        elif roster is not None and sid not in roster and not canvas_anonymous(sid):
            chosen.status = "unknown student: not on the roster (not graded)"
        if chosen.late_marker and chosen.submitted is None:
            due = policy.due.get(lab)
            if due is None:
                chosen.notes.append("the LMS marks this hand-in late; grading.toml gives no due date for the lab, "
                                    "so no late penalty is taken")
            else:
                # the least lateness the marker proves: one second past the learner's own due date (one started
                # day of penalty); the LMS knows the real time
                chosen.submitted = due + (policy.extension(lab, sid) or timedelta(0)) + timedelta(seconds=1)
                chosen.notes.append("the LMS marks this hand-in late but its download does not say when it came: "
                                    "the penalty of one started day is taken; check the LMS for the real time")
        if chosen.status == "ok":
            chosen.path = _stage(chosen, staging / sid / f"{lab}.ipynb", policy)
        handins[sid] = chosen
    if roster is not None:
        for sid in sorted(set(roster) - set(handins)):
            handins[sid] = Handin(sid, None, status="missing: no hand-in")
    return handins, roster


def _clear(staging: Path) -> None:
    """Remove an earlier run's staging folder, however deep its tree. What even `rm -rf` leaves is moved aside,
    so nothing stale is read as this run's."""
    if not os.path.lexists(staging):
        return
    remove_tree(staging)
    if os.path.lexists(staging):
        staging.rename(staging.with_name(f"{staging.name}.stale-{time.time_ns()}"))


def _from_folder(folder: Path, lab: str, zone: str, skip: Path | None = None) -> dict[str, list[Handin]]:
    """Every folder's hand-ins, but the grader's own output (OUT given inside SUBMISSIONS holds `skip`)."""
    found: dict[str, list[Handin]] = {}
    for entry in _entries(folder):
        sid = _printable(entry.name)
        if skip is not None and skip.absolute().is_relative_to(Path(entry.path).absolute()):
            continue
        origin = _printable(entry.path)
        try:
            if entry.is_symlink() and entry.is_dir():
                handins = [Handin(sid, None, status="refused: the folder is a symbolic link", origin=origin)]
            elif not entry.is_dir(follow_symlinks=False):
                continue
            else:
                handins = _from_student_folder(Path(entry.path), sid, lab, zone) or [
                    Handin(sid, None, status=f"missing: the folder holds no {lab}.ipynb", origin=origin)]
        except OSError as e:
            handins = [Handin(sid, None, status=f"malformed: cannot read the folder ({_why(e)})", origin=origin)]
        found.setdefault(sid, []).extend(handins)
    return found


def _from_student_folder(student_dir: Path, sid: str, lab: str, zone: str) -> list[Handin]:
    """The hand-ins in one student's folder; OSError when it cannot be listed. Never looks deeper than the
    folder itself (or `<lab>/` inside it), however deep its tree."""
    entries = _entries(student_dir)
    nested = next((e for e in entries if e.name == lab and e.is_dir(follow_symlinks=False)), None)
    if nested:  # nbgrader's own layout: submitted/<student_id>/<lab>/<lab>.ipynb
        entries = _entries(Path(nested.path))
    submitted, problem = None, ""
    stamp = next((e for e in entries if e.name == "timestamp.txt"), None)
    if stamp:
        try:
            text = _read_regular(Path(stamp.path), 100).decode("utf-8", "replace")
            submitted = parse_time(text, zone)
        except OSError as e:
            problem = f"unreadable submission time in timestamp.txt: cannot read it ({_why(e)})"
        except ValueError:
            problem = f"unreadable submission time in timestamp.txt: {text.strip()[:40]!r}"
    notes = [f"review: {problem}"] if problem else []  # a "review: " note puts it on grade.py's review list
    handins = []
    for n, e in enumerate(entries):  # several in one folder share a time stamp: the highest attempt number wins
        if not (e.name.startswith(lab) and e.name.endswith(".ipynb")):
            continue
        h = Handin(sid, Path(e.path), submitted, origin=_printable(e.path), attempt=_attempt(e.name, lab),
                   time_problem=problem, notes=list(notes), order=n)
        if e.is_symlink():
            h.status = "refused: the hand-in is a symbolic link"
        handins.append(h)
    return handins


def _attempt(base: str, lab: str) -> int:
    """The copy number a file name carries after the lab's name, as browsers and file stores number a file saved
    again under the same name: "lab01-strides (1).ipynb", "lab01-strides-1.ipynb"; 0 for the name itself, so
    any numbered copy counts as later than it."""
    tail = base[base.find(lab) + len(lab):] if lab in base else ""
    m = re.fullmatch(r"\s*(?:\((\d{1,6})\)|[-_ ](\d{1,6}))?\.ipynb", tail)
    return int(m.group(1) or m.group(2) or 0) if m else 0


def _entries(folder: Path) -> list[os.DirEntry]:
    """One folder's entries by name, not recursing; OSError when it cannot be listed (pathlib's glob would
    swallow that and report no hand-in)."""
    with os.scandir(folder) as it:
        return sorted(it, key=lambda e: e.name)


def _read_regular(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of a regular file; OSError for a link or anything else (a FIFO would block forever)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        return f.read(limit)


def _printable(name: str) -> str:
    """A file or zip entry name as text any log or CSV can hold: control characters and the bytes that were not
    UTF-8 (surrogates) escaped. SAFE_ID refuses such an id."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in name)


def _why(e: BaseException) -> str:
    return getattr(e, "strerror", None) or str(e) or type(e).__name__


def _from_zip(archive: Path, lab: str, dest: Path, policy: Policy) -> dict[str, list[Handin]]:
    """Extract only what is safe: no paths outside dest, no links, bounded sizes (read, not trusted)."""
    dest.mkdir(parents=True)
    regex = re.compile(policy.zip_regex)
    zone = _zone(policy.timezone)
    found: dict[str, list[Handin]] = {}
    total = 0
    staged = 0  # every entry unpacks to its own file: names made from counts per student collide
    try:
        zf = zipfile.ZipFile(archive)
    except Exception as e:  # noqa: BLE001 - a damaged central directory fails in many ways
        raise FileNotFoundError(f"SUBMISSIONS={archive}: not a zip that can be read ({e})") from e
    with zf:
        for order, info in enumerate(zf.infolist()):
            name = info.filename
            base = name.rsplit("/", 1)[-1]
            if info.is_dir():
                continue
            if base == "students.csv" and "/" not in name.strip("/"):
                _unpack(zf, info, dest / "students.csv", 5_000_000)  # one that will not unpack: no roster from here
                continue
            if not base.endswith(".ipynb"):
                continue
            m = regex.search(base)
            sid = _printable((m and m.group("student_id")) or base.removesuffix(".ipynb"))
            marked = "late" in regex.groupindex  # the LMS says late or not; the entry's time is the zip's
            when = None if marked else _zip_time(info, zone)
            upload = m.group("attachment") if m and "attachment" in regex.groupindex else None
            h = Handin(sid, None, when, origin=_printable(f"{archive.name}:{name}"), attempt=_attempt(base, lab),
                       order=order, upload=int(upload[:18]) if upload and upload.isdigit() else 0)
            if marked and m and m.group("late"):
                h.late_marker = True
            elif when is None and not marked:
                h.notes.append(f"zip entry has no valid date {info.date_time}")
            mode = info.external_attr >> 16
            if name.startswith("/") or ".." in Path(name).parts or "\\" in name:
                h.status = f"refused: unsafe path in the zip ({_printable(name)!r})"
            elif stat.S_ISLNK(mode):
                h.status = "refused: the zip entry is a symbolic link"
            elif lab not in base:
                continue  # another lab's file
            else:
                total += min(info.file_size, policy.max_file_bytes + 1)
                if total > policy.max_total_bytes:
                    h.status = "refused: the zip expands past the size limit (zip bomb?)"
                else:
                    staged += 1
                    out = dest / f"entry-{staged}.ipynb"
                    size = _unpack(zf, info, out, policy.max_file_bytes)
                    if isinstance(size, str):
                        h.status = f"malformed: the zip entry does not unpack ({size})"
                    elif size is None:
                        h.status = f"malformed: larger than {policy.max_file_bytes // 1_000_000} MB when unpacked"
                    else:
                        h.path = out
            found.setdefault(sid, []).append(h)
    return found


def _zip_time(info: zipfile.ZipInfo, zone: ZoneInfo) -> datetime | None:
    """An entry's time; a zip holds local time without a zone: the course's. None for 1980-01-01 00:00 (what zip
    tools write when they had no time) and for fields no date has (month 0, day 0, hour 25)."""
    if info.date_time == (1980, 1, 1, 0, 0, 0):
        return None
    try:
        return datetime(*info.date_time, tzinfo=zone).astimezone(UTC)
    except (ValueError, TypeError, OverflowError):
        return None


def _unpack(zf: zipfile.ZipFile, info: zipfile.ZipInfo, out: Path, limit: int) -> int | str | None:
    """Bytes written; None past `limit`; why not when the entry does not unpack (nothing is left at `out`)."""
    try:
        return _extract_bounded(zf, info, out, limit)
    except Exception as e:  # noqa: BLE001 - bad CRC, method, password, truncated stream: each its own type
        out.unlink(missing_ok=True)
        return (str(e).splitlines() or [type(e).__name__])[0][:100]


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


def metadata_problems(nb: dict) -> list[str]:
    """What in a notebook's cells has a type nbgrader does not expect ("cell 3: metadata.nbgrader.points is not
    a number"), or too many cells. Only the cells are looked at: whether it is a notebook is nbformat's to say."""
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return []
    if len(cells) > MAX_CELLS:
        return [f"{len(cells)} cells (at most {MAX_CELLS})"]
    problems = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            problems.append(f"cell {i}: not an object")
            continue
        source = cell.get("source", "")
        if not (isinstance(source, str) or isinstance(source, list) and all(isinstance(s, str) for s in source)):
            problems.append(f"cell {i}: source is neither text nor a list of lines")
        meta = cell.get("metadata", {})
        if not isinstance(meta, dict):
            problems.append(f"cell {i}: metadata is not an object")
            continue
        if "nbgrader" not in meta:
            continue
        nbg = meta["nbgrader"]
        if not isinstance(nbg, dict):
            problems.append(f"cell {i}: metadata.nbgrader is not an object")
            continue
        if "grade_id" in nbg and not isinstance(nbg["grade_id"], str):
            problems.append(f"cell {i}: metadata.nbgrader.grade_id is not text")
        points = nbg.get("points", 0)
        if isinstance(points, bool) or not isinstance(points, int | float) or not math.isfinite(points):
            problems.append(f"cell {i}: metadata.nbgrader.points is not a number")
        problems += [f"cell {i}: metadata.nbgrader.{key} is not true or false"
                     for key in ("grade", "solution", "locked") if key in nbg and not isinstance(nbg[key], bool)]
    return problems


def _stage(h: Handin, dest: Path, policy: Policy) -> Path | None:
    """Check the file is a readable notebook; copy it where the grader reads it. None if it is not."""
    if h.path is None:
        h.status = h.status if h.status != "ok" else "malformed: nothing to grade"
        return None
    try:
        raw = _read_regular(h.path, policy.max_file_bytes + 1)
    except OSError as e:
        h.status = f"malformed: cannot read the file ({_why(e)})"
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
    except (ValueError, RecursionError) as e:  # RecursionError: arrays nested past Python's stack
        h.status = f"malformed: not JSON ({str(e)[:80]})"
        return None
    if problems := metadata_problems(data):
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        h.status = f"malformed: {problems[0]}{more}"
        return None
    try:
        nb = nbformat.from_dict(data)
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            raise ValueError("no list of cells")
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # noqa: BLE001 - any way it is not a notebook
        h.status = f"malformed: not a Jupyter notebook ({(str(e).splitlines() or [type(e).__name__])[0][:100]})"
        return None
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
        if h.submitted is not None:  # in UTC, as the text says: nbgrader reads this file
            (dest.parent / "timestamp.txt").write_text(h.submitted.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    except OSError as e:
        h.status = f"grader error: cannot stage the hand-in ({_why(e)})"
        return None
    return dest
