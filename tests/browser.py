"""Drive the course's JupyterLab in headless Chromium, the way a learner or an instructor does.

- `lab_server` starts `make lab` (the learner's own front door) on a random loopback port with a
  random token, waits until it answers and always stops it, kernels included.
- `chromium` starts Debian's Chromium headless through Playwright (no browser download at run time).
- `JupyterLab` is one browser tab on that server: it clicks through the file browser, menus,
  toolbar buttons and dialogs, records the page's console errors and saves a screenshot per step.
  `step` turns any failure into a message that names the step, its screenshot and the console
  errors seen during it.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from autograder import settings

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
INSTALL_HINT = (f"the browser test drives Chromium at {CHROMIUM}, which is missing: run `make browser-deps` as root "
                "(or `sudo apt-get install chromium`); set CHROMIUM=<path> for another build; "
                "`pytest -m 'not browser'` skips these tests")
OUT = settings.BUILD / "browser"  # screenshots, console and server logs, the filled-in lab copy
SHOTS = OUT / "screenshots"
VIEWPORT = {"width": 1400, "height": 900}

# Seconds per step, generous for a busy 2-core machine.
SERVER_START_S = 120
UI_S = 60  # a page, a panel, a menu, a dialog
RUN_ALL_S = 240  # Restart Kernel and Run All Cells
STALLED_S = 45  # ... of which this long without a single cell running means the kernel connection is lost
VALIDATE_S = 240  # nbgrader runs the saved notebook again


class StepFailed(AssertionError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class LabServer:
    url: str  # http://127.0.0.1:<port>
    token: str
    log: Path
    proc: subprocess.Popen
    runtime_dir: Path

    def api(self, path: str, method: str = "GET") -> dict:
        req = urllib.request.Request(f"{self.url}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else {}

    def log_tail(self, n: int = 40) -> str:
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return "\n".join(lines[-n:])


@contextmanager
def lab_server(tmp: Path, jupyterlab_settings: dict[str, dict] | None = None) -> Iterator[LabServer]:
    """`make lab` on 127.0.0.1:<random port> with a random token, JupyterLab's user settings and
    workspaces in `tmp` (so nothing the user set leaks in) and checkpoints out of the repository.
    `jupyterlab_settings` ({plugin id: settings}) are written as the user's settings."""
    port, token = free_port(), secrets.token_hex(16)
    user_settings, runtime = tmp / "user-settings", tmp / "runtime"
    for plugin, values in (jupyterlab_settings or {}).items():
        package, name = plugin.split(":")
        path = user_settings / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = {**os.environ, "JUPYTER_TOKEN": token, "JUPYTERLAB_SETTINGS_DIR": str(user_settings),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"), "JUPYTER_RUNTIME_DIR": str(runtime),
           "COURSE_REUSE_VENV": "1"}  # use this venv as it is: never rebuild it from a test
    env.pop("DISPLAY", None)
    lab_args = f"--ServerApp.ip=127.0.0.1 --FileCheckpoints.checkpoint_dir={tmp / 'checkpoints'}"
    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / "jupyter-lab.log"
    with log.open("w") as log_file:
        proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"PORT={port}", "NO_BROWSER=1",
                                 f"VENV={sys.prefix}", f"LAB_ARGS={lab_args}"],
                                cwd=settings.ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT,
                                start_new_session=True)
    server = LabServer(f"http://127.0.0.1:{port}", token, log, proc, runtime)
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if proc.poll() is not None:
                raise StepFailed(f"`make lab` exited ({proc.returncode}) before JupyterLab answered; "
                                 f"its log ({log}):\n{server.log_tail()}")
            try:
                server.api("/api/status")
                break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise StepFailed(f"JupyterLab did not answer on {server.url} within {SERVER_START_S} s; "
                                 f"its log ({log}):\n{server.log_tail()}")
            time.sleep(0.5)
        yield server
    finally:
        stop_server(server)


def stop_server(server: LabServer) -> None:
    """Shut JupyterLab down through its API (it stops its kernels), then its process group, then
    any kernel still holding a connection file in this server's runtime folder."""
    if server.proc.poll() is None:
        try:
            server.api("/api/shutdown", method="POST")
            server.proc.wait(timeout=30)
        except (urllib.error.URLError, OSError, subprocess.TimeoutExpired):
            pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if server.proc.poll() is not None:
            break
        try:
            os.killpg(server.proc.pid, sig)
            server.proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    for pid in pids_mentioning(str(server.runtime_dir)):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def pids_mentioning(text: str) -> list[int]:
    """Processes whose command line contains `text` (kernels started with a connection file there)."""
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                pids.append(int(cmdline.parent.name))
        except OSError:
            continue
    return [p for p in pids if p != os.getpid()]


@contextmanager
def unchanged(paths: list[Path]) -> Iterator[None]:
    """Put committed files back as they were: opening and validating a notebook saves it."""
    saved = {p: (p.read_bytes(), p.stat()) for p in paths if p.exists()}
    try:
        yield
    finally:
        for p, (data, st) in saved.items():
            if not p.exists() or p.read_bytes() != data:
                p.write_bytes(data)
                os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))


@contextmanager
def chromium():
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                        args=CHROMIUM_ARGS, viewport=VIEWPORT)
        try:
            yield context
        finally:
            context.close()


@dataclass
class ConsoleEntry:
    kind: str
    text: str


@dataclass
class JupyterLab:
    """One Chromium tab on the course's JupyterLab."""

    page: object  # playwright Page
    server: LabServer
    console: list[ConsoleEntry] = field(default_factory=list)
    times: dict[str, float] = field(default_factory=dict)
    retries: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.page.set_default_timeout(UI_S * 1000)
        self.page.on("console", lambda m: self.console.append(ConsoleEntry(m.type, m.text)))
        self.page.on("pageerror", lambda e: self.console.append(ConsoleEntry("pageerror", str(e))))
        SHOTS.mkdir(parents=True, exist_ok=True)
        for old in SHOTS.glob("*.png"):
            old.unlink()

    # ---- steps, screenshots, console ---------------------------------------------------------
    def errors(self, since: int = 0) -> list[str]:
        return [f"{e.kind}: {e.text}" for e in self.console[since:] if e.kind in ("error", "pageerror")]

    def screenshot(self, name: str) -> Path:
        path = SHOTS / f"{name}.png"
        self.page.screenshot(path=str(path))
        return path

    @contextmanager
    def step(self, name: str, what: str) -> Iterator[int]:
        """Run one step; on success save SHOTS/<name>.png, on failure SHOTS/<name>-FAILED.png and raise
        a message naming the step, the screenshot and the console errors. Yields the console mark."""
        mark, t0 = len(self.console), time.perf_counter()
        try:
            yield mark
        except Exception as exc:  # noqa: BLE001 - every failure gets the same report
            try:
                shot = self.screenshot(f"{name}-FAILED")
            except Exception as shot_exc:  # noqa: BLE001
                shot = f"(no screenshot: {shot_exc})"
            errors = self.errors(mark) or ["(none)"]
            self.times[name] = time.perf_counter() - t0
            self.write_console_log()
            raise StepFailed(f"browser step {name!r} failed: {what}\n{str(exc).strip()[:2500]}\n"
                             f"  screenshot: {shot}\n  console errors during the step:\n    "
                             + "\n    ".join(e[:500] for e in errors)
                             + f"\n  JupyterLab's log: {self.server.log}") from None
        self.screenshot(name)
        self.times[name] = time.perf_counter() - t0
        self.write_console_log()

    def write_console_log(self) -> None:
        (OUT / "console.log").write_text("".join(f"{e.kind}: {e.text}\n" for e in self.console))

    # ---- JupyterLab ----------------------------------------------------------------------------
    def goto(self, path: str = "/") -> None:
        sep = "&" if "?" in path else "?"
        self.page.goto(f"{self.server.url}{path}{sep}token={self.server.token}")
        self.page.locator("#jp-main-dock-panel").wait_for()

    def loaded(self) -> None:
        """Open `make lab`'s URL unless this tab already shows JupyterLab (a test run alone with -k)."""
        if not self.page.url.startswith(self.server.url):
            self.goto("/")
            self.page.locator(".jp-FileBrowser .jp-DirListing-item").first.wait_for()  # the layout is restored

    def menu(self, *labels: str) -> None:
        """Click through the menu bar: menu("Nbgrader", "Formgrader")."""
        self.loaded()
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{re.escape(labels[0])}$")).click()
        for label in labels[1:]:
            self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(label)}$")).first.click()

    def open_from_file_browser(self, path: str) -> None:
        """Double-click `path` open from the file browser's root, one folder at a time."""
        self.loaded()
        if not self.page.locator(".jp-FileBrowser .jp-DirListing-content").is_visible():
            self.page.locator(".jp-SideBar .lm-TabBar-tab[data-id='filebrowser']").click()
        self.page.locator(".jp-FileBrowser .jp-BreadCrumbs-home").click()
        self.page.wait_for_function("() => !document.querySelector('.jp-FileBrowser .jp-BreadCrumbs-item')")
        for part in path.split("/"):
            item = self.page.locator(".jp-FileBrowser .jp-DirListing-item").filter(
                has=self.page.locator(".jp-DirListing-itemText", has_text=re.compile(f"^{re.escape(part)}$")))
            item.dblclick()
        self.wait_for_notebook(path.rsplit("/", 1)[-1])

    def notebook(self):
        """The notebook panel in the current tab."""
        return self.page.locator(".jp-NotebookPanel:visible")

    def wait_for_notebook(self, name: str) -> None:
        self.page.locator(".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel",
                          has_text=re.compile(f"^{re.escape(name)}$")).first.wait_for()
        self.notebook().locator(".jp-Cell").first.wait_for()
        self.wait_for_kernel_idle(name)

    def wait_for_kernel_idle(self, name: str) -> None:
        """Wait until the status bar says the notebook's kernel is idle. (The toolbar's execution indicator
        says 'idle' before a kernel even exists; restarting a kernel that is still starting loses its
        connection.)"""
        self.page.locator(f".jp-StatusBar-TextItem[title='Change kernel for {name}']",
                          has_text=re.compile(r"\| Idle$")).wait_for()

    def prompts(self) -> list[str]:
        """The input prompt of every code cell in the current notebook ('[3]:', '[*]:', '[ ]:')."""
        return self.notebook().locator(".jp-CodeCell .jp-InputPrompt").evaluate_all(
            "els => els.map(e => e.textContent.trim())")

    def restart_and_run_all(self, attempts: int = 2) -> list[str]:
        """Kernel > Restart Kernel and Run All Cells (the toolbar's fast-forward button), confirm, and wait
        until the run ends (all cells ran, or it stopped at an error). Returns the prompts.

        If the kernel's websocket is lost on restart (jupyter_server logs "unpack requires a buffer of ...
        bytes"; seen when a restart races the kernel's start-up, which `wait_for_notebook` now waits
        out), no cell ever starts: that is retried once, and recorded in self.retries for the report."""
        nb = self.notebook()
        prompts: list[str] = []
        for attempt in range(attempts):
            nb.locator("[data-jp-item-name='restart-and-run'] jp-button").click()
            dialog = self.page.locator(".jp-Dialog")
            dialog.locator(".jp-Dialog-header", has_text="Restart Kernel").wait_for()
            dialog.locator("button.jp-mod-accept").click()
            start = time.monotonic()
            deadline = start + RUN_ALL_S
            while time.monotonic() < deadline:
                prompts = self.prompts()
                status = nb.locator(".jp-Notebook-ExecutionIndicator").get_attribute("data-status")
                if prompts and prompts[0] == "[1]:" and not any("*" in p for p in prompts) and status == "idle":
                    return prompts
                if time.monotonic() - start > STALLED_S and not any(re.fullmatch(r"\[\d+\]:", p) for p in prompts):
                    break  # not one cell ran: the kernel's connection was lost, try again
                time.sleep(0.5)
            else:
                break
            self.retries.append(f"Restart Kernel and Run All Cells: no cell ran in {STALLED_S} s "
                                f"(attempt {attempt + 1}); retried")
        raise StepFailed(f"Restart Kernel and Run All Cells had not finished after {RUN_ALL_S} s; prompts: {prompts}")

    def outputs_text(self) -> str:
        return "\n".join(self.notebook().locator(".jp-OutputArea-output").evaluate_all(
            "els => els.map(e => e.textContent)"))

    def validate(self) -> tuple[str, str]:
        """Press nbgrader's Validate button; return the (title, text) of the dialog it opens, then close it."""
        self.notebook().locator(".validate-button").first.click()
        dialog = self.page.locator(".jp-Dialog")
        dialog.wait_for(timeout=VALIDATE_S * 1000)
        title = dialog.locator(".jp-Dialog-header").inner_text().strip()
        text = dialog.locator(".jp-Dialog-body").inner_text()
        return title, text

    def close_dialog(self) -> None:
        self.page.locator(".jp-Dialog button.jp-mod-accept").click()
        self.page.locator(".jp-Dialog").wait_for(state="detached")

    def formgrader(self):
        """The formgrader's frame (Nbgrader > Formgrader opens it in a JupyterLab tab)."""
        return self.page.frame_locator("iframe[src*='formgrader']").first

    def formgrader_tab(self):
        """Bring the Formgrader tab to the front, opening it from the Nbgrader menu if needed; its frame."""
        self.loaded()
        tab = self.page.locator(".lm-TabBar-tab", has_text=re.compile(r"^Formgrader$"))
        if tab.count():
            tab.first.click()
        else:
            self.menu("Nbgrader", "Formgrader")
        self.formgrader().locator("body").wait_for()
        return self.page.frame(url=re.compile("/formgrader"))
