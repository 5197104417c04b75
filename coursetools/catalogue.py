"""The per-lab catalogues of answers the quality table tries on every lab.

`tests/fixtures/mutants/<lab>.md` lists plausible wrong answers, each of which must lose
points on the tests it names; `tests/fixtures/alternatives/<lab>.md` lists right answers
written differently from the reference, each of which must keep full marks. Both are
Markdown a maintainer can read top to bottom, one entry per `##` heading:

    ## flat_index_no_offset
    Forgets that a view may start part-way into its storage.

    - replaces: flat_index
    - must fail: test_flat_index, hidden_flat_index

    ```diff
    -    return t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))
    +    return sum(i * s for i, s in zip(index, t.stride()))
    ```

The line under the heading is the wrong (or the different) idea in one line; for a mutant it is
also the feedback a learner reads when their failures match it (`autograder/diagnose.py`). `must fail`
is for mutants only. Optional: `- misconception: <name>` gives mutants that are one mistake written two
ways the same name (the default is the entry's own). Optional: `- see: <heading>` names the walkthrough
section a learner who made this mistake should read again (a `##`/`###` heading of the lab's week notebook,
spelt as it is there); without it the section is guessed from the words. The independent wrong answers
(`tests/fixtures/wrong/<lab>.md`) carry `- expect: <mutant name or none>` instead of `must fail`.
The code block is either

- `diff`: an edit of the solution cell that defines `replaces` (markers stripped). Lines
  starting with ' ' are context, '-' are removed, '+' are added; a line `@@` starts a new
  hunk. Each hunk's old lines must appear exactly once in the cell, inside the definition
  of `replaces`. The entry's source is the whole edited cell. Or
- `python`: the entry's whole source, which replaces that cell (a rewrite).

The entries are read here and nowhere else; nothing under solutions/ (which is copied into
sandboxes and shipped) holds them.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from autograder import diagnose, settings
from autograder import notebooks as nbs

HEADING = re.compile(r"^## +(\S+)\s*$", re.M)
FIELD = re.compile(r"^- *(replaces|must fail|misconception|expect|see) *: *(.+?)\s*$", re.M | re.I)
BLOCK = re.compile(r"^```(diff|python)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Entry:
    """One mutant or alternative. `source` is what replaces the answer cell."""

    name: str
    path: Path  # the catalogue file
    description: str
    replaces: str
    must_fail: tuple[str, ...]
    source: str
    form: str = "python"  # "diff" or "python"
    error: str = ""  # why the entry cannot be used, explained
    # mutants: the misconception the entry is an instance of (several mutants may share one; default its name)
    misconception: str = ""
    # wrong answers (settings.WRONG): the catalogue misconception that describes the mistake, "" for none
    expect: str = ""
    # mutants: the walkthrough heading that teaches the mistake ("" = chosen by word overlap)
    see: str = ""

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(settings.ROOT) if self.path.is_relative_to(settings.ROOT) else self.path}" \
               f" § {self.name}"


def catalogue_path(kind: str, lab: str) -> Path:
    """kind: 'mutants', 'alternatives' or 'wrong'."""
    folders = {"mutants": settings.MUTANTS, "alternatives": settings.ALTERNATIVES, "wrong": settings.WRONG}
    return folders[kind] / f"{lab}.md"


def solution_cells(lab: str) -> dict[str, str]:
    """{name defined at the top level: the solution cell's source, markers stripped}."""
    out: dict[str, str] = {}
    for cell in nbs.read(settings.solution_notebook(lab)).cells:
        if nbs.is_solution(cell):
            source = nbs.strip_solution_markers(cell.source)
            for name in defined_names(source):
                out.setdefault(name, source)
    return out


def defined_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def definition_lines(source: str, name: str) -> range:
    """0-based line range of the top-level def/class `name` (decorators included)."""
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            return range(first - 1, node.end_lineno)
    raise ValueError(f"no top-level definition of {name!r}")


def apply_diff(source: str, diff: str, inside: str = "") -> str:
    """Apply a catalogue diff to `source`; `inside`: every hunk must edit that definition."""
    lines = source.splitlines()
    hunks: list[list[str]] = [[]]
    for raw in diff.splitlines():
        if raw.startswith("@@"):
            hunks.append([])
        else:
            hunks[-1].append(raw)
    allowed = definition_lines(source, inside) if inside else range(len(lines))
    for k, hunk in enumerate(h for h in hunks if h):
        old, new = [], []
        for raw in hunk:
            tag, text = (raw[:1] or " "), raw[1:]
            if tag not in " -+":
                raise ValueError(f"hunk {k + 1}: a line must start with ' ', '-' or '+': {raw!r}")
            if tag in " -":
                old.append(text)
            if tag in " +":
                new.append(text)
        if not old:
            raise ValueError(f"hunk {k + 1} has no context or removed line to anchor it")
        at = [i for i in range(len(lines) - len(old) + 1) if lines[i:i + len(old)] == old]
        if len(at) != 1:
            raise ValueError(f"hunk {k + 1}: its old lines occur {len(at)} times in the solution cell "
                             f"(must be once): {old[0]!r}")
        i = at[0]
        if inside and not (i >= allowed.start and i + len(old) <= allowed.stop):
            raise ValueError(f"hunk {k + 1} edits lines outside the definition of {inside!r}")
        lines[i:i + len(old)] = new
        if inside:
            allowed = definition_lines("\n".join(lines), inside)
    return "\n".join(lines) + ("\n" if source.endswith("\n") else "")


def read_catalogue(kind: str, lab: str) -> list[Entry]:
    path = catalogue_path(kind, lab)
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    cells = solution_cells(lab)
    heads = list(HEADING.finditer(text))
    out = []
    for j, head in enumerate(heads):
        body = text[head.end(): heads[j + 1].start() if j + 1 < len(heads) else len(text)]
        name = head.group(1)
        fields = {k.lower(): v.strip("` ") for k, v in FIELD.findall(body)}
        blocks = BLOCK.findall(body)
        prose = [ln.strip() for ln in BLOCK.sub("", FIELD.sub("", body)).splitlines() if ln.strip()]
        description = prose[0] if prose else ""
        replaces = fields.get("replaces", "")
        must_fail = tuple(g.strip(" `") for g in fields.get("must fail", "").split(",") if g.strip(" `"))
        error, source, form = "", "", "python"
        missing = [f for f, ok in (("a one-line description", description), ("'- replaces: <function>'", replaces),
                                   ("one ```diff or ```python block", len(blocks) == 1)) if not ok]
        if kind == "mutants" and not must_fail:
            missing.append("'- must fail: <grade_id>, ...'")
        if kind == "alternatives" and must_fail:
            error = "an alternative must keep full marks: remove its 'must fail' line"
        if kind == "wrong" and "expect" not in fields:
            missing.append("'- expect: <the catalogue's misconception, or none>'")
        if missing:
            error = f"the entry lacks {', '.join(missing)}"
        elif fields.get("see") and diagnose.named_section(lab, fields["see"]) is None:
            error = f"'- see: {fields['see']}' is not a heading of {lab}'s week walkthrough"
        elif replaces not in cells:
            error = f"replaces {replaces!r}, which no solution cell of {lab} defines"
        else:
            form, code = blocks[0]
            if form == "diff":
                try:
                    source = apply_diff(cells[replaces], code, inside=replaces)
                except ValueError as exc:
                    error = f"its diff does not apply to the solution: {exc}"
            else:
                source = code
        expect = fields.get("expect", "")
        out.append(Entry(name, path, description, replaces, must_fail, source, form, error,
                         misconception=fields.get("misconception", name),
                         expect="" if expect.lower() in ("none", "-") else expect, see=fields.get("see", "")))
    names = [e.name for e in out]
    dupes = {n for n in names if names.count(n) > 1}
    return [e if e.name not in dupes or e.error else
            Entry(**{**e.__dict__, "error": f"the name {e.name!r} is used twice in the catalogue"}) for e in out]
