"""The learners' tree: what `make student-dist` writes to build/student/.

It holds the walkthroughs, the generated labs, the support package, the
environment files and a small Makefile (`make lab`, `make validate`); `leaks`
proves it holds no answer, no hidden test and no path into solutions/.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from autograder import notebooks as nbs
from autograder import settings

TEMPLATE = Path(__file__).parent / "student_template"


def build(dest: Path = settings.STUDENT_DIST) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "*.pyc")
    shutil.copytree(settings.COURSE, dest / "course", ignore=ignore)
    shutil.copytree(settings.LABS, dest / "labs", ignore=ignore)
    shutil.copytree(settings.LABKIT, dest / "labkit", ignore=ignore)
    (dest / "tools").mkdir()
    shutil.copy(Path(__file__).parent / "venv.py", dest / "tools" / "venv.py")
    for name in ("requirements.txt", "environment.yml"):
        shutil.copy(settings.ROOT / name, dest / name)
    shutil.copy(TEMPLATE / "Makefile", dest / "Makefile")
    config = (TEMPLATE / "nbgrader_config.py").read_text().replace("{ignore}", settings.IGNORE_STDERR)
    (dest / "nbgrader_config.py").write_text(config)
    (dest / ".gitignore").write_text(".venv/\n__pycache__/\n.ipynb_checkpoints/\n")
    readme = (TEMPLATE / "README.md").read_text() + week_list() + "\n"
    (dest / "README.md").write_text(readme)
    return dest


def title(path: Path) -> str:
    for cell in nbs.read(path).cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("# ").strip()
    return path.stem


def week_list() -> str:
    labs = {lab.split("-", 1)[0].replace("lab", ""): lab for lab in settings.labs()}
    lines = []
    for path in settings.course_notebooks():
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
