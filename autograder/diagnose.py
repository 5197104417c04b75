"""Stage "diagnose": which known misconception a hand-in's failures look like.

Every lab has a catalogue of plausible wrong answers (`tests/fixtures/mutants/<lab>.md`), each a
misconception described in one line. The quality run (`coursetools/mutants.py`) runs each of them
through the lab's tests and keeps, for every test it ran, its fingerprint: how its observations
differed from the reference's (`judge.fingerprint`: the error the cell ended with, fewer or more
calls, and each disagreeing observation's position and kind). Those fingerprints are this stage's
table, saved under build/diagnosis/<lab>.json with a key of everything that decides them.

When a hand-in fails tests, its fingerprints are compared with the table's. A catalogue entry
explains the hand-in when, on every test the entry ran (those it must fail and the rest of its
answer's tests), the hand-in did exactly what the entry did: the same tests failed, each with the
same fingerprint, and the same tests passed. Misconceptions are named only when together they explain
every failed test, each test by exactly one of them (a test two misconceptions fit alike names
neither); otherwise nothing is said: a wrong diagnosis is worse than none.

What a learner reads is the entry's one-line description and a pointer into the week's walkthrough,
both written by the instructor. Nothing of a hidden test (its source, inputs, values or counts) is
in it; `hidden_words` lists the entries whose description quotes a hidden test's literals, and
those are never shown.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

from autograder import settings

TABLES = settings.BUILD / "diagnosis"


# ---- the table: built by the quality run, read by `make grade` ----

def table_key(lab: str) -> str:
    """A hash of what decides the fingerprints: the grader's code, the lab's solution folder, its catalogue."""
    from autograder.reference import code_hash

    h = hashlib.sha256(code_hash().encode())
    folder = settings.solution_notebook(lab).parent
    for f in sorted(folder.iterdir()) + [settings.MUTANTS / f"{lab}.md"]:
        if f.is_file():
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def save(lab: str, rows: list[dict], folder: Path = TABLES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{lab}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"key": table_key(lab), "entries": rows}, indent=1))
    tmp.replace(path)
    return path


def load(lab: str, folder: Path = TABLES) -> list[dict] | None:
    """The lab's table, or None when there is none for the current grader, solution and catalogue."""
    path = folder / f"{lab}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data["entries"] if data.get("key") == table_key(lab) else None


# ---- matching ----

def explain(fingerprints: dict[str, str], table: list[dict], leave_out: str = "") -> dict[str, dict]:
    """{grade_id: the table row whose misconception explains that failed test}. `fingerprints`: grade_id ->
    the hand-in's fingerprint ("" for a test it passed). `leave_out`: a row's name to ignore (the measure)."""
    claims: dict[str, dict[str, dict]] = {}  # grade_id -> misconception -> row
    for row in table:
        if row["name"] == leave_out or not any(row["cells"].values()):
            continue
        if all(fingerprints.get(gid) == fp for gid, fp in row["cells"].items()):
            for gid, fp in row["cells"].items():
                if fp:
                    claims.setdefault(gid, {}).setdefault(row["misconception"], row)
    # a row is named only where it is the only misconception claiming the test: if two misconceptions fit,
    # the tests cannot tell them apart, and neither is said
    named = {gid: next(iter(by.values())) for gid, by in claims.items() if len(by) == 1}
    # and only when the named misconceptions explain every failure (an answer not written yet aside): a failure
    # nothing explains may come from another mistake, which would make any name a guess
    failed = {gid for gid, fp in fingerprints.items() if fp and not fp.startswith(UNWRITTEN)}
    return named if failed <= set(named) else {}


UNWRITTEN = "raised NotImplementedError"  # judge.fingerprint of a test whose answer is still the stub


def message(row: dict, lead: bool = True) -> str:
    """What feedback says of a diagnosed test: the instructor's words for the mistake, and where it is taught."""
    see = row.get("see") or {}
    where = f" Read: {see['title']} ({see['path']})." if see.get("path") else ""
    return ("This looks like a known mistake in " if lead else "") + \
        f"`{row['replaces']}`: {row['words'].rstrip('.')}.{where}"


def known_mistakes(table: list[dict] | None) -> dict[str, str]:
    """{signature of a visible check's failure message: the mistake's words}, for the released lab (labkit's
    `known_mistake` reads it when a visible check fails, so Validate shows the diagnosis too). Only visible
    tests' messages, which the learner sees anyway; a message two misconceptions share is left out."""
    by_sig: dict[str, dict[str, dict]] = {}
    for row in table or []:
        if row.get("shown", True):
            for sig in (row.get("visible") or {}).values():
                by_sig.setdefault(sig, {}).setdefault(row["misconception"], row)
    return {sig: message(next(iter(rows.values())), lead=False) for sig, rows in sorted(by_sig.items())
            if len(rows) == 1}


def apply(run, table: list[dict] | None) -> None:
    """Add a diagnosis to each failed test of a judged run (`run.verdicts`) that one misconception explains."""
    if not table:
        return
    fps = {label: (v.get("fp") or "") if not v.get("passed") else "" for label, v in run.verdicts.items()}
    for label, row in explain(fps, [r for r in table if r.get("shown", True)]).items():
        v = run.verdicts.get(label)
        if v is not None and not v.get("passed"):
            v["misconception"] = row["misconception"]
            v["diagnosis"] = message(row)
            v["diagnosed"] = {k: row.get(k) for k in ("misconception", "replaces", "words", "see")}


# ---- the words: never a hidden test's literals; a pointer into the walkthrough ----

def _literals(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)) and \
                not isinstance(node.value, bool):
            text = str(node.value).strip()
            if len(text) >= 2 and not (isinstance(node.value, str) and len(text) > 60):
                out.add(text)
    return out


def secret_literals(lab: str) -> set[str]:
    """The literals (strings, numbers) of the lab's hidden tests that the learner's notebook shows nowhere else."""
    from autograder import notebooks as nbs

    nb = nbs.read(settings.solution_notebook(lab))
    hidden, seen = set(), set()
    for cell in nb.cells:
        text = cell.source
        if cell.cell_type == "code" and "BEGIN HIDDEN TESTS" in text:
            inner = re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", text, re.S)
            hidden |= set().union(*(_literals(_dedent(b)) for b in inner)) if inner else set()
            text = re.sub(r"### BEGIN HIDDEN TESTS\n.*?### END HIDDEN TESTS", "", text, flags=re.S)
        seen |= _literals(text) if cell.cell_type == "code" else set(re.findall(r"[\w.]+", text))
    week = _week_notebook(lab)  # the walkthrough is the learner's too
    shown = week.read_text(encoding="utf-8") if week else ""
    return {w for w in hidden - seen if (not w.isidentifier() or len(w) > 3) and json.dumps(w)[1:-1] not in shown}


def quotes_secret(text: str, secret: set[str]) -> bool:
    return bool(set(re.findall(r"[\w.\-]+", text)) & secret) or any(len(w) > 12 and w in text for w in secret)


def hidden_words(lab: str, descriptions: list[str]) -> set[str]:
    """The descriptions that quote a literal (a string or a number) of a hidden test which the learner's
    notebook shows nowhere else: such words would tell a hidden input, so they are never shown."""
    secret = secret_literals(lab)
    return {d for d in descriptions if quotes_secret(d, secret)}


def _dedent(block: str) -> str:
    import textwrap

    return textwrap.dedent(block)


def _sections(week: Path) -> list[tuple[str, str]]:
    """(heading, its text) for every ## and ### heading of a walkthrough, in order."""
    from autograder import notebooks as nbs

    heading, body = None, []
    sections = []
    for cell in nbs.read(week).cells:
        for line in cell.source.splitlines() if cell.cell_type == "markdown" else []:
            m = re.match(r"^#{2,3}\s+(.+)$", line)
            if m:
                if heading:
                    sections.append((heading, " ".join(body)))
                heading, body = m.group(1).strip(), []
            else:
                body.append(line)
        if cell.cell_type == "code":
            body.append(cell.source)
    if heading:
        sections.append((heading, " ".join(body)))
    return sections


def _link(week: Path, title: str) -> dict:
    return {"path": str(week.relative_to(settings.ROOT)) + "#" + re.sub(r"\s+", "-", title.strip()),
            "title": f"\u201c{title}\u201d"}


def named_section(lab: str, heading: str) -> dict | None:
    """The link for a catalogue entry's `- see: <heading>` (a maintainer's choice over the word-overlap guess);
    None when the lab's walkthrough has no such heading."""
    week = _week_notebook(lab)
    if week is None:
        return None
    titles = [t.strip() for t, _ in _sections(week)]
    return _link(week, heading.strip()) if heading.strip() in titles else None


def walkthrough_section(lab: str, function: str, words: str) -> dict:
    """{"path", "title"}: the heading of the lab's week walkthrough whose section shares most words with the
    entry's function and description (the notebook itself where no section stands out)."""
    week = _week_notebook(lab)
    if week is None:
        return {}
    path = str(week.relative_to(settings.ROOT))
    own = _terms(f"{function.replace('_', ' ')} {words}")  # the mistake's words count most; the task's
    want = own | _terms(_task_text(lab, function))  # text adds the answer's subject
    best, score = None, 0.0
    sections = [(t, _terms(f"{t} {t} {text}")) for t, text in _sections(week) if not GENERIC.match(t)]
    import math

    # a word that appears in every section says nothing about which one teaches the mistake
    df = {w: sum(w in have for _, have in sections) for w in want}
    for title, have in sections:
        if not have:
            continue
        s = sum(math.log((1 + len(sections)) / (1 + df[w])) * (1.0 if w in own else 0.25)
                for w in want & have) / len(have) ** 0.5
        if s > score:
            best, score = title, s
    if best is None or score < 0.5:
        return {"path": path, "title": "the week's walkthrough"}
    return _link(week, best)


def _task_text(lab: str, function: str) -> str:
    """The lab's task text for `function`: the markdown between the previous answer cell and its own."""
    from autograder import notebooks as nbs

    text: list[str] = []
    for cell in nbs.read(settings.solution_notebook(lab)).cells:
        if cell.cell_type == "markdown":
            text.append(cell.source)
        elif nbs.is_solution(cell):
            if re.search(rf"^(def|class)\s+{re.escape(function)}\b", cell.source, re.M):
                return "\n".join(text)
            text = []
    return ""


# sections that sum up or point elsewhere: never the place a mistake is taught
GENERIC = re.compile(r"^(\d+\.\s*)?(summary|in the lab|recap|setup|set-up|exercises?|further reading|what'?s next|"
                     r"references|next week)\b", re.I)


STOP = set("""a an the of in on at to for and or not no is are be it its as by with from that this than then
when where which into only one two each every your their does do uses use used instead""".split())


def _terms(text: str) -> set[str]:
    return {w.lower().rstrip("s") for w in re.findall(r"[A-Za-z_][A-Za-z_0-9]+", text)
            if w.lower() not in STOP and len(w) > 2}


def _week_notebook(lab: str) -> Path | None:
    found = settings.week_notebooks([lab])
    return found[0] if found else None
