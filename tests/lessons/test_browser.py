"""The course in a real browser: JupyterLab in headless Chromium runs lessons 08 and 03 as a person would.

Each test starts its own JupyterLab on 127.0.0.1 (a free port, a random token, throw-away settings)
over a temporary copy of notebooks/, so that nothing the browser does can save outputs into the
repository. Chromium is Debian's (/usr/bin/chromium, installed by `make test` through
scripts/ensure_chromium.sh), driven by Playwright; Playwright's own browser download is never used.

The tests fail on any console error that is not on the short allowlist below: a widget manager whose
version does not match the kernel's ipywidgets shows up there ("Failed to load model class",
"Could not create a view"), not as a Python error. Screenshots go to build/screenshots/.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from course_utils.skills.paths import BUILD_DIR, NOTEBOOKS_DIR
from helpers.browser import CHROMIUM_ARGS

SCREENSHOTS = BUILD_DIR / "screenshots"
# JupyterLab user settings for the test server only (a fresh settings folder each time).
LAB_SETTINGS = {
    # Never write the notebook back: the server works on a copy anyway, this keeps the copy as it was.
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
    # No "news" toast over the notebook, and no update check: both would go to the internet.
    "@jupyterlab/apputils-extension:notification": {"checkForUpdates": False, "fetchNews": "false"},
    # Keep every cell in the DOM (no virtual scrolling), so outputs far down the notebook can be read.
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}
# Console messages that are not a problem, each with why. Matched as regular expressions on the text.
CONSOLE_ALLOWLIST: list[tuple[str, str]] = []
# Messages that mean the widgets are broken, whatever their console level.
WIDGET_FAILURES = re.compile(r"Failed to load model class|Could not create a view|Error displaying widget|"
                             r"Model not found|Class .* not found in (registry|module)", re.I)
COUNTS = re.compile(r"(\d+)/(\d+) correct \((\d+)%\) · (\d+) false triggers · (\d+) misses · (\d+) wrong skill")

pytestmark = [pytest.mark.browser, pytest.mark.model, pytest.mark.timeout(900)]


# --- JupyterLab -------------------------------------------------------------------------------------

@dataclass
class Lab:
    url: str
    token: str
    root: Path
    log: Path
    process: subprocess.Popen = field(repr=False)

    def api(self, path: str, method: str = "GET") -> object:
        request = urllib.request.Request(f"{self.url}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    """Process ids whose parent is `pid` (the kernels a server started: they run in their own sessions)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _stop(process: subprocess.Popen, kernels: list[int]) -> None:
    """SIGTERM the server's process group (the server shuts its kernels down), then SIGKILL what is left."""
    for sig, grace in [(signal.SIGTERM, 30), (signal.SIGKILL, 10)]:
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    for pid in kernels:  # normally gone with the server; never leave a kernel holding the model behind
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def lab(chromium: Path, tmp_path: Path) -> Iterator[Lab]:
    """A JupyterLab server over a copy of notebooks/, always stopped at the end, pass or fail."""
    root = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS_DIR, root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    settings = tmp_path / "lab-settings"
    for plugin, values in LAB_SETTINGS.items():
        package, name = plugin.split(":")
        path = settings / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = os.environ | {
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter-runtime"),
    }
    port, token = _free_port(), secrets.token_hex(24)
    log = tmp_path / "jupyter-lab.log"
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
               f"--ServerApp.root_dir={root}", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--LabApp.extension_manager=readonly"]  # no update check, no extension search on PyPI
    if os.geteuid() == 0:  # CI and this course's machines run as root; Jupyter refuses that unless told
        command.append("--allow-root")
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, cwd=root, start_new_session=True)
    server = Lab(f"http://127.0.0.1:{port}", token, root, log, process)
    kernels: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"JupyterLab exited with code {process.returncode}:\n{server.log_tail()}")
            try:
                server.api("/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer on {server.url} in 120 s:\n{server.log_tail()}")
                time.sleep(0.5)
        yield server
        kernels = _children(process.pid)
    finally:
        kernels = kernels or _children(process.pid)
        _stop(process, kernels)


# --- Chromium ---------------------------------------------------------------------------------------

@dataclass
class Console:
    messages: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)

    def record(self, kind: str, text: str) -> None:
        line = f"[{kind}] {text}"
        self.messages.append(line)
        if kind in ("error", "pageerror") or WIDGET_FAILURES.search(text):
            reason = next((why for pattern, why in CONSOLE_ALLOWLIST if re.search(pattern, text)), None)
            (self.allowed if reason else self.problems).append(line)


@pytest.fixture
def browser_page(chromium: Path, request: pytest.FixtureRequest, tmp_path: Path):
    """A Playwright page in a fresh headless Chromium profile, and the console it records."""
    from playwright.sync_api import sync_playwright

    console = Console()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    failed_before = request.session.testsfailed
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(chromium), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.on("console", lambda message: console.record(message.type, message.text))
            page.on("pageerror", lambda error: console.record("pageerror", str(error)))
            yield page, console
            if request.session.testsfailed > failed_before:  # the test's call phase failed: keep what it saw
                page.screenshot(path=str(SCREENSHOTS / f"{request.node.name}_failure.png"))
        finally:
            (SCREENSHOTS / f"{request.node.name}_console.log").write_text("\n".join(console.messages) + "\n")
            context.close()


# --- Driving a notebook -----------------------------------------------------------------------------

# The status bar's kernel item reads "Python 3 (ipykernel) | Idle" only once the notebook's kernel is
# connected and idle (the toolbar's execution indicator says "idle" before any kernel exists).
KERNEL_IDLE = """() => {
  const item = document.querySelector('.jp-StatusBar-Widget [title^="Change kernel for"]');
  return item !== null && /[|] Idle$/.test(item.textContent.trim());
}"""
# 'done' when every code cell has an execution count and the kernel is idle; 'error' on a traceback;
# 'dialog' when JupyterLab asks something (a kernel choice, a dead kernel): nobody would answer it.
RUN_STATE = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return false;
  if (document.querySelector('.jp-Dialog')) return 'dialog';
  const outputs = [...panel.querySelectorAll('.jp-OutputArea-output')];
  if (outputs.some(o => o.textContent.includes('Traceback (most recent call last)'))) return 'error';
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent);
  return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p)) && (""" + KERNEL_IDLE + """)() ? 'done' : false;
}"""


def open_and_run_all(page, lab: Lab, notebook: str, timeout_s: float = 780) -> float:
    """Open `notebook` in its own workspace, wait for its kernel, Run → Run All Cells, wait until done."""
    page.goto(f"{lab.url}/lab/workspaces/{Path(notebook).stem}/tree/{notebook}?reset&token={lab.token}")
    page.wait_for_selector(".jp-NotebookPanel .jp-CodeCell", timeout=120_000)
    page.wait_for_function(KERNEL_IDLE, timeout=120_000, polling=250)
    start = time.monotonic()
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    run_all = page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$"))
    page.locator(".lm-Menu-item", has=run_all).click()
    state = page.wait_for_function(RUN_STATE, timeout=timeout_s * 1000, polling=500).json_value()
    if state == "dialog":
        pytest.fail(f"JupyterLab opened a dialog while running {notebook}: "
                    f"{page.locator('.jp-Dialog').first.inner_text()!r}\n{lab.log_tail()}")
    if state == "error":
        tracebacks = page.locator(".jp-OutputArea-output", has_text="Traceback (most recent call last)")
        pytest.fail(f"{notebook} raised in JupyterLab:\n{tracebacks.first.inner_text()[:3000]}")
    return time.monotonic() - start


def assert_clean_console(console: Console) -> None:
    assert console.problems == [], "errors in the browser console:\n" + "\n".join(console.problems)


def shoot(page, name: str) -> Path:
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


# --- The tests --------------------------------------------------------------------------------------

def _counts(text: str) -> tuple[int, ...]:
    match = COUNTS.search(text)
    assert match, f"no counts line in {text!r}"
    correct, total, percent, false_triggers, misses, wrong = map(int, match.groups())
    assert correct + false_triggers + misses + wrong == total, f"the four boxes do not add up: {text!r}"
    assert f"{percent}%" == f"{correct / total:.0%}", text  # the widget's own rounding
    return correct, total, false_triggers, misses, wrong


@pytest.mark.lesson("08_threshold_analysis.ipynb")
def test_threshold_explorer_follows_its_slider(lab: Lab, browser_page):
    page, console = browser_page
    seconds = open_and_run_all(page, lab, "08_threshold_analysis.ipynb")
    print(f"08 ran all cells in JupyterLab in {seconds:.0f} s")

    explorer = page.locator(".jp-OutputArea-output .widget-vbox", has=page.locator(".widget-slider")).first
    explorer.wait_for(state="visible", timeout=60_000)
    handle = explorer.locator(".widget-slider .noUi-handle")
    readout = explorer.locator(".widget-slider .widget-readout")
    label = explorer.locator(".widget-html-content")
    image = explorer.locator(".widget-output img")
    image.wait_for(state="visible", timeout=60_000)
    explorer.scroll_into_view_if_needed()

    def state() -> tuple[str, str, str]:
        return readout.inner_text(), label.inner_text(), image.get_attribute("src") or ""

    before = state()
    assert before[2].startswith("data:image/png;base64,"), before[2][:60]
    assert image.evaluate("img => img.naturalWidth") > 300, "the explorer's figure did not render"
    correct, total, false_before, misses_before, _ = _counts(before[1])
    assert total >= 20
    shoot(page, "08_threshold_before")

    # Raise the threshold by 0.1 with the keyboard, as a person does on the focused handle: each arrow
    # press moves one step (0.005) and commits it (continuous_update=False commits on keyup/release).
    handle.focus()
    for _ in range(20):
        handle.press("ArrowRight")
    after = settle(page, state, before)
    assert float(after[0]) > float(before[0]), (before[0], after[0])
    assert after[1] != before[1], f"the counts did not change when the threshold rose: {after[1]!r}"
    _, total_after, false_after, misses_after, _ = _counts(after[1])
    assert total_after == total
    # A higher threshold fires less: never more false triggers, never fewer misses.
    assert false_after <= false_before and misses_after >= misses_before, (before[1], after[1])
    assert after[2] != before[2] and after[2].startswith("data:image/png;base64,"), "the figure was not redrawn"
    shoot(page, "08_threshold_after")

    # Drag the handle back left with the mouse: the value is committed on release.
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 80, y, steps=10)
    page.mouse.up()
    dragged = settle(page, state, after)
    assert float(dragged[0]) < float(after[0]), (after[0], dragged[0])
    assert dragged[2] != after[2], "the figure was not redrawn after the drag"
    _counts(dragged[1])
    shoot(page, "08_threshold_dragged")

    assert page.locator("text=Error displaying widget").count() == 0
    assert_clean_console(console)


def settle(page, state, before: tuple[str, str, str], timeout_s: float = 180) -> tuple[str, str, str]:
    """Wait until the readout and figure differ from `before`, the kernel is idle and nothing changes for 2 s."""
    deadline = time.monotonic() + timeout_s
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = state()
        idle = page.evaluate(KERNEL_IDLE)
        if now != last:
            last, since = now, time.monotonic()
        elif idle and now[0] != before[0] and now[2] != before[2] and time.monotonic() - since >= 2:
            return now
        page.wait_for_timeout(250)
    pytest.fail(f"the explorer did not settle after moving the slider in {timeout_s:.0f} s: "
                f"readout {before[0]} → {last[0] if last else '?'}; counts {last[1] if last else '?'!r}")


@pytest.mark.lesson("03_load_skill_loop.ipynb")
def test_load_skill_loop_shows_its_trace(lab: Lab, browser_page):
    page, console = browser_page
    # 03 runs its loop live twice (the from-scratch loop, then run_agent refusing repeats; up to six model calls
    # each): 128 s here in JupyterLab, 104 s headless (2026-12-01). A run that loops to max_turns takes longer, and
    # a machine of this kind can be twice as slow: the limit keeps a wide margin over the default 780 s.
    seconds = open_and_run_all(page, lab, "03_load_skill_loop.ipynb", timeout_s=1500)
    print(f"03 ran all cells in JupyterLab in {seconds:.0f} s")

    # The trace printed by print_event ("turn 1    → load_skill(name='custom-cake-order')"), as the
    # learner sees it: the model's load_skill call is the point of the lesson.
    trace = page.locator(".jp-OutputArea-output", has_text=re.compile(r"turn \d+ +→ load_skill\(")).first
    trace.scroll_into_view_if_needed()
    assert trace.is_visible(), "no visible trace output with a load_skill call"
    assert re.search(r"model call( \([A-Z]+[^)]*\))?: [\d,]+ prompt tokens", trace.inner_text())  # with its tool_config
    shoot(page, "03_trace")
    assert_clean_console(console)
