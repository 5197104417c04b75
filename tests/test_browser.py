"""The course as people use it: `make lab` in a real browser (headless Chromium, Playwright).

A learner opens a lab from the file browser, restarts the kernel and runs every cell, and presses
nbgrader's Validate: the untouched lab fails naming the failing tests, the same lab with the
instructor's answers filled in passes. The week's walkthrough runs and its plot renders. An
instructor opens Nbgrader > Formgrader, sees every lab, and after `make grade` on the demo class
sees its submissions. Each step leaves a screenshot in build/browser/screenshots/; a failing step
names its screenshot and the page's console errors.

Run alone: `.venv/bin/python -m pytest tests/test_browser.py -x -q` (or `-m browser`).
"""

from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser import (
    CHROMIUM,
    INSTALL_HINT,
    OUT,
    SHOTS,
    UI_S,
    JupyterLab,
    StepFailed,
    chromium,
    lab_server,
    unchanged,
)

from autograder import notebooks as nbs
from autograder import settings
from coursetools.student_dist import title

pytestmark = pytest.mark.browser

LAB = "lab01-strides"
WEEK = settings.COURSE / "week01-strides.ipynb"
LANDING = settings.COURSE / "START-HERE.ipynb"
FILLED = OUT / LAB / f"{LAB}.ipynb"  # the lab with the instructor's answers, inside the served root
GRADE_S = 420  # `make grade` on the demo class, while the browser steps share the CPU
# The test's own JupyterLab user settings: no autosave, so only Validate writes a notebook.
TEST_SETTINGS = {"@jupyterlab/docmanager-extension:plugin": {"autosave": False}}


def graded_functions(lab: str) -> list[str]:
    """The lab's interface: the grade_ids of its answer cells (one function each)."""
    return [nbs.grade_id(c) for c in nbs.read(settings.student_notebook(lab)).cells if nbs.is_solution(c)]


def course_gradebook() -> Path:
    """The gradebook the formgrader shows: nbgrader_config.py's db_url."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader(settings.NBGRADER_CONFIG.name, path=str(settings.ROOT)).load_config()
    return Path(config.CourseDirectory.db_url.removeprefix("sqlite:///"))


def gradebook_students(db: Path, lab: str) -> list[str]:
    if not db.exists():
        return []
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{db}") as gb:
        try:
            return sorted(s.student.id for s in gb.assignment_submissions(lab))
        except MissingEntry:
            return []


class DemoGrading:
    """`make grade LAB=<lab>` on the demo class, in the background while the learner steps run."""

    def __init__(self, lab: str):
        self.lab, self.proc, self.log = lab, None, OUT / "make-grade.log"

    def start(self) -> None:
        if self.proc is None:
            OUT.mkdir(parents=True, exist_ok=True)
            with self.log.open("w") as log:
                self.proc = subprocess.Popen(
                    ["make", "--no-print-directory", "grade", f"LAB={self.lab}", f"VENV={sys.prefix}"],
                    cwd=settings.ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                    env={**os.environ, "COURSE_REUSE_VENV": "1"})

    def wait(self) -> str:
        self.start()
        try:
            self.proc.wait(timeout=GRADE_S)
        except subprocess.TimeoutExpired:
            self.stop()
            raise StepFailed(f"`make grade LAB={self.lab}` did not finish in {GRADE_S} s; log: {self.log}") from None
        out = self.log.read_text(errors="replace")
        if self.proc.returncode != 0:
            raise StepFailed(f"`make grade LAB={self.lab}` failed ({self.proc.returncode}); log {self.log}:\n"
                             + out[-3000:])
        return out

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.fail(INSTALL_HINT)
    tmp = tmp_path_factory.mktemp("jupyterlab")
    t0 = time.perf_counter()
    with unchanged([LANDING, WEEK, settings.student_notebook(LAB)]), \
            lab_server(tmp, TEST_SETTINGS) as server, chromium() as context:
        page = context.pages[0] if context.pages else context.new_page()
        jl = JupyterLab(page, server)
        jl.times["start JupyterLab and Chromium"] = time.perf_counter() - t0
        yield jl
        report = "\n".join(f"  {name:<34} {secs:6.1f} s" for name, secs in jl.times.items())
        report += "".join(f"\n  retried: {r}" for r in jl.retries)
        (OUT / "steps.txt").write_text(report + "\n")
        print(f"\nbrowser steps (screenshots in {SHOTS}):\n{report}")


@pytest.fixture(scope="module")
def demo_grading():
    grading = DemoGrading(LAB)
    yield grading
    grading.stop()


def test_landing_page_links_every_week_and_lab():
    """course/START-HERE.ipynb (what `make lab` opens) links each walkthrough and lab, and nothing missing."""
    text = "\n".join(c.source for c in nbs.read(LANDING).cells if c.cell_type == "markdown")
    links = re.findall(r"\]\(([^)\s]+\.ipynb)\)", text)
    targets = {(LANDING.parent / link).resolve() for link in links}
    unreleased = {settings.student_notebook(lab).resolve() for lab in settings.labs()}  # the lint reports these
    broken = [link for link in links if not (LANDING.parent / link).exists()
              and (LANDING.parent / link).resolve() not in unreleased]
    assert not broken, f"{LANDING.name} links notebooks that do not exist: {broken}"
    wanted = settings.course_notebooks() + [p for p in map(settings.student_notebook, settings.labs()) if p.exists()]
    missing = [p for p in wanted if p.resolve() not in targets]
    rows = {landing_row(p) for p in missing}
    assert not missing, (f"course/{LANDING.name} does not link {[str(p.relative_to(settings.ROOT)) for p in missing]}:"
                         " put these rows in its table 'The weeks', in week order:\n" + "\n".join(sorted(rows)))


def landing_row(path: Path) -> str:
    """The landing table's row for the week of `path` (a walkthrough or a lab), from the files that exist."""
    number = re.search(r"(?:week|lab)(\d+)", path.name).group(1)
    week = next(iter(settings.COURSE.glob(f"week{number}-*.ipynb")), None)
    lab = next((lab for lab in settings.labs() if lab.startswith(f"lab{number}-")), None)
    read = f"[{title(week)}]({week.name})" if week else "*(coming)*"
    build = f"[{lab}](../labs/{lab}/{lab}.ipynb)" if lab else ""
    return f"| {int(number)} | {read} | {build} |"


def test_both_makefiles_turn_off_the_same_pop_ups():
    """`make lab` (instructors) and the learners' `make lab` install the same JupyterLab overrides."""
    def overrides(makefile: Path) -> str:
        m = re.search(r"^LAB_OVERRIDES := (.+)$", makefile.read_text(), re.M)
        assert m, f"{makefile} has no LAB_OVERRIDES line"
        return m.group(1)

    ours = overrides(settings.ROOT / "Makefile")
    assert ours == overrides(settings.ROOT / "coursetools" / "student_template" / "Makefile")
    assert '"fetchNews": "false"' in ours and '"checkForUpdates": false' in ours


def test_make_lab_opens_the_landing_page_without_pop_ups_or_console_errors(lab):
    with lab.step("01-landing-page", "`make lab`'s URL opens course/START-HERE.ipynb with nbgrader's tools, "
                  "no news pop-up and no console errors") as mark:
        lab.goto("/")
        lab.wait_for_notebook(LANDING.name)
        assert lab.page.url.split("?")[0].endswith(f"/lab/tree/course/{LANDING.name}"), lab.page.url
        nb = lab.notebook()
        nb.locator(".jp-RenderedMarkdown a", has_text=LAB).wait_for()
        # nbgrader's assignment tools: Validate in the toolbar, the Nbgrader menu, Create Assignment
        nb.locator(".validate-button").wait_for()
        lab.page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for()
        lab.page.locator(".jp-SideBar .lm-TabBar-tab[data-id='nbgrader-create_assignemnt']").wait_for()
        schema = lab.server.api("/lab/api/settings/@jupyterlab/apputils-extension:notification")["schema"]
        fetch = schema["properties"]["fetchNews"]["default"]
        assert fetch == "false", f"JupyterLab's news fetch is {fetch!r}, not 'false': `make lab` did not " \
            "install its overrides.json"
        time.sleep(3)  # the news question pops up within a second or two of start-up when it is on
        toasts = lab.page.locator(".Toastify__toast").all_inner_texts()
        assert not toasts, f"pop-up notifications on load: {toasts}"
        errors = lab.errors(mark)
        assert not errors, f"console errors while loading the landing page: {errors}"


def test_instructor_sees_every_lab_in_the_formgrader(lab, demo_grading):
    with lab.step("02-formgrader-labs", "Nbgrader > Formgrader lists every lab"):
        lab.menu("Nbgrader", "Formgrader")
        table = lab.formgrader().locator("table").first
        for name in settings.labs():
            table.locator("td.name", has_text=re.compile(f"^\\s*{re.escape(name)}\\s*$")).wait_for()
        rows = table.locator("tbody tr td.name").all_inner_texts()
        assert sorted(r.strip() for r in rows) == settings.labs(), rows
    # The demo class is graded in the background while the learner steps run; the last test waits.
    demo_grading.start()


def test_untouched_lab_fails_validation_naming_the_failing_tests(lab):
    path = settings.student_notebook(LAB).relative_to(settings.ROOT).as_posix()
    with lab.step("03-untouched-lab-run", f"open {path} from the file browser, restart and run all: "
                  "the run stops at the first test, which says the answer is missing"):
        lab.open_from_file_browser(path)
        prompts = lab.restart_and_run_all()
        assert "[ ]:" in prompts, f"every cell ran in the untouched lab (no test failed): {prompts}"
        out = lab.outputs_text()
        assert "NotImplementedError" in out, f"the stopped run does not blame the missing answer:\n{out[-1500:]}"
    with lab.step("04-validate-untouched-lab", "Validate on the untouched lab fails, naming every failing test"):
        title, text = lab.validate()
        assert title == "Validation Results", f"Validate opened {title!r}:\n{text[:2000]}"
        assert "Success!" not in text and "The following cell failed" in text, text[:2000]
        missing = [f for f in graded_functions(LAB) if f not in text]
        assert not missing, f"Validate's report does not name the failing tests of {missing}:\n{text[:3000]}"
        assert "NotImplementedError" in text, text[:3000]
    lab.close_dialog()


def test_lab_with_the_answers_filled_in_passes_validation(lab):
    filled = nbs.fill_solutions(nbs.read(settings.student_notebook(LAB)), nbs.read(settings.solution_notebook(LAB)))
    nbs.write(filled, FILLED)
    path = FILLED.relative_to(settings.ROOT).as_posix()
    with lab.step("05-filled-lab-run", f"open {path} (the lab with the answers filled in), restart and run all: "
                  "every cell runs"):
        lab.open_from_file_browser(path)
        prompts = lab.restart_and_run_all()
        assert all(re.fullmatch(r"\[\d+\]:", p) for p in prompts), f"not every code cell ran: {prompts}"
        out = lab.outputs_text()
        passed = [f for f in graded_functions(LAB) if f"{f}: visible checks passed" in out]
        assert passed == graded_functions(LAB), f"visible checks passed only for {passed}"
    with lab.step("06-validate-filled-lab", "Validate on the filled-in lab passes"):
        title, text = lab.validate()
        assert title == "Validation Results", f"Validate opened {title!r}:\n{text[:2000]}"
        assert "Success! Your notebook passes all the tests." in text, text[:3000]
    lab.close_dialog()


def test_walkthrough_runs_and_its_plot_renders(lab):
    with lab.step("07-walkthrough-plot", f"open course/{WEEK.name} from the landing page's link, restart and "
                  "run all: every cell runs and a plot (an <img>) renders in an output area"):
        lab.loaded()
        lab.page.locator(".lm-TabBar-tab", has_text=LANDING.name).first.click()
        text = re.search(rf"\[([^\]]+)\]\({re.escape(WEEK.name)}\)",
                         "\n".join(c.source for c in nbs.read(LANDING).cells)).group(1).replace("`", "")
        lab.notebook().locator(".jp-RenderedMarkdown a", has_text=text).first.click()
        lab.wait_for_notebook(WEEK.name)
        prompts = lab.restart_and_run_all()
        assert all(re.fullmatch(r"\[\d+\]:", p) for p in prompts), f"not every code cell ran: {prompts}"
        images = lab.notebook().locator(".jp-OutputArea-output img")
        images.first.wait_for()
        images.first.scroll_into_view_if_needed()
        sizes = images.evaluate_all("els => els.map(e => [e.naturalWidth, e.naturalHeight])")
        assert sizes and all(w > 0 and h > 0 for w, h in sizes), f"plot images did not load: {sizes}"


def test_instructor_sees_the_graded_demo_class_in_the_formgrader(lab, demo_grading):
    with lab.step("08-formgrader-submissions", f"after `make grade LAB={LAB}` on the demo class, the "
                  "formgrader lists its submissions"):
        log = demo_grading.wait()
        with (settings.GRADES / LAB / "grades.csv").open() as f:  # hand-ins that ran (not malformed, unknown...)
            rows = list(csv.DictReader(f))
        students = sorted(r["student_id"] for r in rows
                          if not r["status"].startswith(("malformed", "missing", "unknown", "refused")))
        db = course_gradebook()
        url = f"/formgrader/manage_submissions/{LAB}"
        recorded = gradebook_students(db, LAB)
        assert set(students) <= set(recorded), (
            f"`make grade` did not record the demo class {students} in the formgrader's gradebook {db} "
            f"(it has {recorded}):\n{log[-2000:]}")
        lab.formgrader_tab().goto(f"{lab.server.url}{url}")
        table = lab.formgrader().locator("table").first
        for sid in students:
            table.locator("td.student-id", has_text=re.compile(f"^\\s*{re.escape(sid)}\\s*$")).wait_for(
                timeout=UI_S * 1000)
        scores = dict(zip(table.locator("td.student-id").all_inner_texts(),
                          table.locator("td.score").all_inner_texts()))
        grades_csv = settings.GRADES / LAB / "grades.csv"
        if grades_csv.exists():
            with grades_csv.open() as f:
                for row in csv.DictReader(f):
                    if row["student_id"] not in students:
                        continue
                    shown = scores.get(row["student_id"], "").replace(" ", "")
                    # formgrader shows the score before the late penalty; grades.csv has both
                    assert shown.startswith((f"{float(row['score']):g}/", f"{float(row['raw_score']):g}/")), \
                        f"{row['student_id']}: formgrader shows {shown!r}, grades.csv says {row['score']}"
