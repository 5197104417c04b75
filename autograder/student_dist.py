"""The learners' tree: what `make student-dist` writes to build/student/.

It holds the walkthroughs, the generated labs, the support package, the
environment files and a small Makefile (`make lab`, `make validate`); `leaks`
proves it holds no answer, no hidden test and no path into solutions/.
"""

from __future__ import annotations

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
    for name in ("Makefile", "nbgrader_config.py"):
        shutil.copy(TEMPLATE / name, dest / name)
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


def answer_lines(lab: str) -> tuple[set[str], set[str]]:
    """Distinctive lines found only in the instructor's answers and only in the hidden tests
    (a line that the visible text also shows, such as a check shared with a visible test, is no leak)."""
    nb = nbs.read(settings.solution_notebook(lab))
    answers, hidden, public = set(), set(), set()
    for cell in nb.cells:
        for m in nbs.SOLUTION_BLOCK.finditer(cell.source):
            answers |= _distinctive(m.group(2))
        for m in nbs.HIDDEN_BLOCK.finditer(cell.source):
            hidden |= _distinctive(m.group(0))
        public |= _distinctive(nbs.strip_hidden_tests(nbs.SOLUTION_BLOCK.sub("", cell.source)))
    return answers - public, hidden - public


def _distinctive(text: str) -> set[str]:
    # Short or generic lines ("return out", "else:") prove nothing when found.
    return {ln.strip() for ln in text.splitlines() if len(ln.strip()) >= 30 and not ln.strip().startswith("#")}


def leaks(dest: Path) -> list[str]:
    """Everything in the learners' tree that an instructor would not publish."""
    found = []
    files = [p for p in dest.rglob("*") if p.is_file() and ".venv" not in p.parts]
    texts = {p: p.read_text(errors="replace") for p in files}
    for p, text in texts.items():
        rel = p.relative_to(dest)
        for marker in ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "solutions/", "autograder/mutants"):
            if marker in text:
                found.append(f"{rel}: contains {marker!r}")
    for lab in settings.labs():
        answers, hidden = answer_lines(lab)
        for p, text in texts.items():
            rel = p.relative_to(dest)
            for kind, lines in (("solution code", answers), ("hidden test", hidden)):
                hits = [ln for ln in lines if ln in text]
                if hits:
                    found.append(f"{rel}: holds {kind} of {lab}: {hits[0]!r}")
    return found
