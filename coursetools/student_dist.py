"""The learners' tree: what `make student-dist` writes to build/student/.

It holds the walkthroughs, the generated labs, the support package, the
environment files and a small Makefile (`make lab`, `make validate`, `make update`); `leaks`
proves it holds no answer, no hidden test and no path into solutions/.

A term releases it in stages: `make student-dist WEEKS=1-3` holds weeks 1 to 3 only (their
walkthroughs and labs; the landing page and labkit always). Push each stage to the learners'
repository; a learner's `make update` (labkit/update.py) brings the new weeks and any errata into
their checkout without touching their answers.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from autograder import notebooks as nbs
from autograder import settings
from coursetools import envfiles

TEMPLATE = Path(__file__).parent / "student_template"


def parse_weeks(text: str | None) -> set[int] | None:
    """`1-3`, `1,2,5`, `1-3,7` -> the week numbers; None or empty: every week."""
    if not text:
        return None
    weeks = set()
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise ValueError(f"WEEKS={text!r}: write week numbers and ranges, such as 1-3 or 1,2,5")
        weeks |= set(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    return weeks


def week_of(name: str) -> int | None:
    """weekNN-... and labNN-... -> NN; anything else (the landing page) belongs to no week."""
    m = re.match(r"(?:week|lab)(\d+)-", name)
    return int(m.group(1)) if m else None


def released(name: str, weeks: set[int] | None) -> bool:
    week = week_of(name)
    return weeks is None or week is None or week in weeks


def build(dest: Path = settings.STUDENT_DIST, weeks: set[int] | None = None) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "*.pyc")
    unreleased = shutil.ignore_patterns(*[p.name for p in [*settings.COURSE.iterdir(), *settings.LABS.iterdir()]
                                          if not released(p.name, weeks)])

    def skip(folder, names):
        return set(ignore(folder, names)) | set(unreleased(folder, names))

    shutil.copytree(settings.COURSE, dest / "course", ignore=skip)
    shutil.copytree(settings.LABS, dest / "labs", ignore=skip)
    write_known_mistakes(dest / "labs")
    if weeks is not None:
        _unlink_unreleased(dest / "course", weeks)
    shutil.copytree(settings.LABKIT, dest / "labkit", ignore=ignore)
    (dest / "tools").mkdir()
    shutil.copy(Path(__file__).parent / "venv.py", dest / "tools" / "venv.py")
    shutil.copy(Path(__file__).parent / "update.py", dest / "tools" / "update.py")
    write_environment(dest)
    shutil.copy(TEMPLATE / "Makefile", dest / "Makefile")
    config = (TEMPLATE / "nbgrader_config.py").read_text().replace("{ignore}", settings.IGNORE_STDERR)
    (dest / "nbgrader_config.py").write_text(config)
    ignored = (".venv/", "__pycache__/", ".ipynb_checkpoints/", ".update-backups/", "*.egg-info/", "build/")
    (dest / ".gitignore").write_text("".join(f"{p}\n" for p in ignored))
    readme = (TEMPLATE / "README.md").read_text() + week_list(weeks) + "\n"
    (dest / "README.md").write_text(readme)
    return dest


def write_known_mistakes(labs: Path) -> list[str]:
    """labs/<lab>/known-mistakes.json for each released lab whose diagnosis table is current (the quality run,
    `make quality`, builds it): the messages of visible checks that a known wrong answer fails with, each with
    the mistake's words, which labkit adds to the failure (so Validate names it). The labs without one."""
    from autograder import diagnose
    from labkit.testing import KNOWN_MISTAKES

    missing = []
    for folder in sorted(p for p in labs.iterdir() if p.is_dir()):
        table = diagnose.load(folder.name)
        if table is None:
            missing.append(folder.name)
            continue
        (folder / KNOWN_MISTAKES).write_text(json.dumps(diagnose.known_mistakes(table), indent=1) + "\n")
    return missing


# The tables of the course's pyproject.toml that make labkit installable; its tool settings stay behind.
PACKAGE_TABLES = ("build-system", "project", "tool.setuptools")


def write_environment(dest: Path) -> None:
    """The learners' environment files: their requirements and lock (coursetools/envfiles.py: the course's lock
    without the instructors' tools), the same environment.yml as the course's, Binder's configuration and the
    pyproject.toml that installs labkit (`pip install -e .`)."""
    for name, text in envfiles.learner_files(settings.ROOT).items():
        (dest / name).write_text(text)
    shutil.copy(settings.ROOT / "environment.yml", dest / "environment.yml")
    (dest / "pyproject.toml").write_text(package_tables((settings.ROOT / "pyproject.toml").read_text()))
    binder = dest / "binder"
    binder.mkdir()
    (binder / "environment.yml").write_text(binder_environment((settings.ROOT / "environment.yml").read_text()))
    shutil.copy(TEMPLATE / "binder" / "postBuild", binder / "postBuild")
    (binder / "postBuild").chmod(0o755)


def package_tables(pyproject: str) -> str:
    """pyproject.toml's [build-system], [project] and [tool.setuptools] tables, as they are written there."""
    out, keep = ["# labkit as a package: `pip install -e .` (written by the course's `make student-dist`)."], False
    for line in pyproject.splitlines():
        header = re.match(r"^\[([^\]]+)\]\s*$", line)
        if header:
            keep = header.group(1).strip() in PACKAGE_TABLES
        if keep:
            out.append(line)
    return "\n".join(out).rstrip() + "\n"


def binder_environment(environment_yml: str) -> str:
    """environment.yml for binder/: repo2docker reads only binder/ when it exists, and conda (micromamba on
    Binder) runs pip in the environment file's folder, so the paths point one folder up."""
    text = environment_yml
    for old, new in (("- -r requirements-conda.txt", "- -r ../requirements-conda.txt"), ("- -e .", "- -e ..")):
        if old not in text:
            raise ValueError(f"environment.yml has no line {old!r} to point at the learners' tree from binder/")
        text = text.replace(old, new)
    head = ("# Binder (repo2docker) builds the learners' tree from this folder: this file, then postBuild.\n"
            "# The same as the tree's environment.yml, its paths relative to binder/.\n")
    return head + text


WEEK_ROW = re.compile(r"^\| *(\d+) *\| *\[(?P<title>[^\]]+)\]\([^)]*\) *\|.*\|$", re.M)


def _unlink_unreleased(course: Path, weeks: set[int]) -> None:
    """The landing page's rows of weeks not released yet keep their titles and lose their (broken) links."""
    for path in course.glob("*.ipynb"):
        nb = nbs.read(path)
        changed = False
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            new = WEEK_ROW.sub(lambda m: m.group(0) if int(m.group(1)) in weeks else
                               f"| {m.group(1)} | {m.group('title')} (not released yet) | |", cell.source)
            changed |= new != cell.source
            cell.source = new
        if changed:
            nbs.write(nb, path)


def title(path: Path) -> str:
    for cell in nbs.read(path).cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("# ").strip()
    return path.stem


def week_list(weeks: set[int] | None = None) -> str:
    labs = {lab.split("-", 1)[0].replace("lab", ""): lab for lab in settings.labs()}
    lines = []
    for path in settings.course_notebooks():
        if not released(path.name, weeks):
            continue
        num = path.stem.split("-", 1)[0].replace("week", "")
        lab = labs.get(num)
        lab_text = f", lab `labs/{lab}/{lab}.ipynb`" if lab else ""
        lines.append(f"- **{title(path)}**: `course/{path.name}`{lab_text}")
    return "\n".join(lines)


def answer_lines(lab: str) -> tuple[set[str], set[str], list[str]]:
    """What an instructor must not publish for `lab`: distinctive fragments of the answers and
    of the hidden tests (three consecutive code lines the visible text does not show), and
    each whole answer block."""
    nb = nbs.read(settings.solution_notebook(lab))
    answers, hidden, public, blocks = set(), set(), set(), []
    for cell in nb.cells:
        for m in nbs.SOLUTION_BLOCK.finditer(cell.source):
            answers |= _fragments(m.group(2))
            lines = _code_lines(m.group(2))
            if len(lines) >= 4:
                blocks.append("\n".join(lines))
        for m in nbs.HIDDEN_BLOCK.finditer(cell.source):
            hidden |= _fragments(m.group(0))
        public |= _fragments(nbs.strip_hidden_tests(nbs.SOLUTION_BLOCK.sub("", cell.source)))
    return answers - public, hidden - public, blocks


def _code_lines(text: str) -> list[str]:
    """Code lines, stripped of indentation and trailing comments (which do not make code new)."""
    lines = (re.sub(r"\s+#.*$", "", ln).strip() for ln in text.splitlines())
    return [ln for ln in lines if ln and not ln.startswith("#")]


def _fragments(text: str) -> set[str]:
    # A generic line or two ("with warnings.catch_warnings():" / "warnings.simplefilter(...)")
    # proves nothing; three distinctive lines in a row do.
    lines = _code_lines(text)
    return {"\n".join(w) for w in zip(lines, lines[1:], lines[2:]) if sum(map(len, w)) >= 70}


def _text(path: Path) -> str:
    """A file's text; for a notebook, its cells' sources (JSON escaping would hide code lines)."""
    raw = path.read_text(errors="replace")
    if path.suffix == ".ipynb":
        try:
            return raw + "\n" + "\n".join(c.source for c in nbs.read(path).cells)
        except Exception:  # noqa: BLE001 - a malformed notebook is checked as raw text
            return raw
    return raw


def leaks(dest: Path) -> list[str]:
    """Everything in the learners' tree that an instructor would not publish."""
    found = []
    files = [p for p in dest.rglob("*") if p.is_file() and ".venv" not in p.parts]
    texts = {p: _text(p) for p in files}
    code = {p: "\n".join(_code_lines(t)) for p, t in texts.items()}
    for p, text in texts.items():
        rel = p.relative_to(dest)
        for marker in ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "solutions/", "tests/fixtures/mutants"):
            if marker in text:
                found.append(f"{rel}: contains {marker!r}")
    for lab in settings.labs():
        answers, hidden, blocks = answer_lines(lab)
        for p, text in code.items():
            rel = p.relative_to(dest)
            if rel.parts[0] == "labs":
                # The generated student notebooks: no fragment of an answer or a hidden test.
                for kind, frags in (("solution code", answers), ("hidden test", hidden)):
                    hits = [f for f in frags if f in text]
                    if hits:
                        found.append(f"{rel}: holds {kind} of {lab}: {hits[0]!r}")
            else:
                # Walkthroughs and labkit may teach an idiom the answer also uses, but never
                # hold a whole answer.
                hits = [b for b in blocks if b in text]
                if hits:
                    found.append(f"{rel}: holds a whole solution of {lab}: {hits[0][:120]!r}")
    return found
