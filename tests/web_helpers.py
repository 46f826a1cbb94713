"""The browser tests' shared parts (tests/test_web_ui.py, tests/test_web_page.py): the system's
Chromium driven by Playwright (never a browser Playwright downloads: missing, the tests fail
with one line saying how to install it; `make browser` installs it as root), axe-core from the
npm registry for the accessibility checks (`make browser` installs it into tests/artifacts/npm;
missing, the fixture installs it there with npm), and the steps a person takes on the page.

The page's policy runs no script but its own, so the tests wait by polling from Python (never
with an evaluated string) and inject axe-core through the DevTools protocol.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts" / "web_ui"
NPM_DIR = ROOT / "tests" / "artifacts" / "npm"
AXE = NPM_DIR / "node_modules" / "axe-core" / "axe.min.js"
AXE_VERSION = "4.14.1"  # as the Makefile's
DOCS = ROOT / "docs"
WAIT_MS = 300_000  # a run's own budgets end it first; this only stops a hung page
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SETTLED = "#status.waiting, #status.done, #status.error"


def chromium() -> str:
    """The system Chromium (DEEPRESEARCH_CHROMIUM overrides); a one-line failure without it."""
    for candidate in (os.environ.get("DEEPRESEARCH_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        path = candidate and shutil.which(candidate)
        if path:
            return path
    pytest.fail(
        "no Chromium for the browser tests: run 'make test' as root (it installs Debian's chromium), "
        "or 'apt-get install chromium', or set DEEPRESEARCH_CHROMIUM=/path/to/chrome",
        pytrace=False,
    )


def axe_source() -> str:
    """axe-core's script, installed with npm into the tests' own folder when missing."""
    if not AXE.exists():
        npm = shutil.which("npm")
        if not npm:
            pytest.fail(
                "no npm for the accessibility check: run 'make browser' (or 'apt-get install npm')", pytrace=False
            )
        r = subprocess.run(
            [
                npm,
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--prefix",
                str(NPM_DIR),
                f"axe-core@{AXE_VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if r.returncode != 0 or not AXE.exists():
            pytest.fail(f"could not install axe-core with npm: {(r.stderr or r.stdout).strip()[-300:]}", pytrace=False)
    return AXE.read_text()


def launch(playwright):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS, headless=True)


def open_page(browser, url: str, *, width: int = 1280, height: int = 900, dark: bool = False):
    """A fresh page of the app; `page.problems` collects script errors and dialogs (a hostile
    text that ran would show there)."""
    context = browser.new_context(
        viewport={"width": width, "height": height}, accept_downloads=True, color_scheme="dark" if dark else "light"
    )
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url)
    page = context.new_page()
    page.problems = []
    page.on("pageerror", lambda e: page.problems.append(f"pageerror: {e}"))
    page.on("dialog", lambda d: (page.problems.append(f"dialog: {d.message}"), d.dismiss()))
    page.goto(f"{url}/ui/")
    return page


def shot(page, name: str, *, docs: str | None = None, full_page: bool = True) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)
    if docs:  # the README's pictures of the page
        page.screenshot(path=str(DOCS / docs), full_page=False)


def settle(page) -> str:
    """The status once the page waits for the person, has finished or has failed."""
    page.wait_for_timeout(200)  # the click's own status change comes first
    page.wait_for_selector(SETTLED, timeout=WAIT_MS)
    return page.inner_text("#status")


def until(page, check, what: str, timeout_s: float = 300) -> None:
    """Poll `check()` (Python, reading the page) until true."""
    end = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(150)


def progress_text(page) -> str:
    return page.text_content("#progress") or ""


def wait_progress(page, pattern: str, timeout_s: float = 300) -> None:
    until(page, lambda: re.search(pattern, progress_text(page)), f"progress {pattern!r}", timeout_s)


def open_settings(page) -> None:
    """Unfold Settings (budgets, steps, source limits, the citation style, other fields)."""
    if not page.locator("#settings").evaluate("d => d.open"):
        page.click("#settings summary")


def ask(
    page, question: str, *, graph="iterative", extra: str = "", iterations="1", sections="2", search=None, **checks
) -> None:
    page.fill("#question", question)
    page.select_option("#graph", graph)
    open_settings(page)
    page.fill("#max_iterations", iterations)
    page.fill("#max_sections", sections)
    if search is not None:  # what the boxes do not list, as the CLI's --search
        page.fill("#search", search)
    for box in ("clarify", "outline_review", "edit_after_report", "as_chat"):
        page.set_checked(f"#{box}", bool(checks.get(box, box == "edit_after_report")))
    if checks.get("citation_style"):
        page.select_option("#citation_style", checks["citation_style"])
    if extra:
        page.fill("#extra-context", extra)
    page.click("#settings summary")  # folded again: the report comes under the question
    page.click("#ask")


SELECT = """([t, k]) => { const body = document.querySelector('#report .report-body');
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT); let seen = 0;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) { let i = n.data.indexOf(t);
    while (i >= 0) { if (seen++ === k) { const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + t.length);
      const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
      body.dispatchEvent(new MouseEvent('mouseup', {bubbles: true})); return true; }
      i = n.data.indexOf(t, i + 1); } }
  return false; }"""


def select_in_report(page, text: str, copy: int = 0) -> None:
    """Select the `copy`-th (from 0) appearance of `text` in the report's body, as a person
    would with the mouse."""
    assert page.evaluate(SELECT, [text, copy]), text


def download(page, fmt: str, tmp_path: Path) -> bytes:
    with page.expect_download() as d:
        page.click(f"#export-{fmt}")
    target = tmp_path / f"report.{fmt}"
    d.value.save_as(str(target))
    return target.read_bytes()


def words(text: str) -> str:
    return " ".join(text.split())


def unnamed_controls(page) -> list[str]:
    """axe-core's violations on the page as it is now (WCAG 2.1 A and AA: every control named,
    contrast, structure), as 'rule: element' lines; [] when there are none."""
    page.evaluate(axe_source())
    return page.evaluate("""async () => {
      const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}});
      return r.violations.flatMap(v => v.nodes.map(n => `${v.id}: ${n.target.join(' ')}`)); }""")


def open_thread(page, question: str) -> str:
    """Open the newest thread asked with `question` from the thread list; its status."""
    if page.locator("#threads-toggle").is_visible() and not page.locator("#threads-panel").is_visible():
        page.click("#threads-toggle")  # a phone: the list is behind the header's button
    page.wait_for_selector(".open-thread")
    page.locator(f".thread:has(.open-thread:text-is({question!r}))").first.locator(".open-thread").click()
    return settle(page)
