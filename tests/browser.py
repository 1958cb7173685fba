"""A headless chromium for the tests of ``fxcache report``'s page (``browser`` marker).

Selenium drives Debian's ``chromium`` through its ``chromium-driver`` (``.ci/run``
installs both). :func:`browser_session` starts one (about a second and a half: one per
test module, as a module-scoped fixture); where chromium, its driver or selenium is
missing it skips the test saying which, and under CI (``CI`` set) fails it instead.

Pages load from ``file://`` with the network off: every host name resolves to nothing
(``--host-resolver-rules``), and :meth:`Browser.load` reads the requests the page made
from the browser's performance log, and its console from the browser log. A dialog
(``alert``) stays open (``unhandledPromptBehavior: ignore``) so a test can see it.
Screenshots go under :func:`artifacts_dir` (``$FXCACHE_TEST_ARTIFACTS``, else
``build/test-artifacts`` in the repository), which ``tools/report_screenshots.py``
copies into the docs.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = ("chromium", "chromium-browser")
DRIVER = "chromedriver"


def artifacts_dir(name: str) -> Path:
    """``$FXCACHE_TEST_ARTIFACTS/NAME`` (default ``build/test-artifacts/NAME``), made."""
    base = Path(os.environ.get("FXCACHE_TEST_ARTIFACTS") or REPO / "build" / "test-artifacts")
    d = base / name
    d.mkdir(parents=True, exist_ok=True)
    return d


@dataclass
class Loaded:
    """What loading a page did.

    Attributes:
        charts: the page's ``<body data-charts>`` once its charts were drawn (``ready``),
            or could not be (``failed``), or ``pending`` at the timeout.
        console: the browser log's entries (``level``, ``message``, ``source``).
        requests: every URL the page requested but the page itself.
        dialog: the text of a dialog (``alert``) left open, else None.
    """

    charts: str
    console: list[dict[str, Any]]
    requests: list[str]
    dialog: str | None


class Browser:
    """One headless chromium session (see the module docstring)."""

    def __init__(self, chromium: str, driver: str) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        opts = webdriver.ChromeOptions()
        opts.binary_location = chromium
        for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                  "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1280,900",
                  "--disable-background-networking", "--no-first-run", "--disable-extensions"):
            opts.add_argument(a)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        opts.set_capability("unhandledPromptBehavior", "ignore")
        self.driver = webdriver.Chrome(service=Service(driver), options=opts)

    def load(self, page: Path, timeout: float = 60) -> Loaded:
        """Open ``page`` and wait until its charts are drawn (or ``timeout`` seconds)."""
        from selenium.common.exceptions import (
            NoAlertPresentException,
            TimeoutException,
            UnexpectedAlertPresentException,
        )
        from selenium.webdriver.support.ui import WebDriverWait

        d = self.driver
        d.get_log("browser"), d.get_log("performance")  # what earlier pages left
        url = page.resolve().as_uri()
        dialog = None
        try:
            d.get(url)
            WebDriverWait(d, timeout).until(
                lambda drv: drv.find_element("tag name", "body").get_attribute("data-charts") != "pending")
        except (UnexpectedAlertPresentException, TimeoutException):
            pass
        try:
            alert = d.switch_to.alert
            dialog = alert.text
            alert.dismiss()
        except NoAlertPresentException:
            pass
        charts = d.execute_script("return document.body ? document.body.dataset.charts : null") or "pending"
        requests = []
        for e in d.get_log("performance"):
            m = json.loads(e["message"])["message"]
            if m.get("method") == "Network.requestWillBeSent" and m["params"]["request"]["url"] != url:
                requests.append(m["params"]["request"]["url"])
        return Loaded(charts, d.get_log("browser"), requests, dialog)

    def js(self, script: str, *args: Any) -> Any:
        """``execute_script``: the value of ``script`` (a function body: ``return ...``)."""
        return self.driver.execute_script(script, *args)

    def screenshot(self, css: str, path: Path) -> Path:
        """A PNG of the whole element ``css`` selects, written to ``path`` (the window is made
        tall enough to hold it for the shot: chromium shoots only what it shows)."""
        d = self.driver
        el = d.find_element("css selector", css)
        size = d.get_window_size()
        height = d.execute_script("return Math.ceil(arguments[0].getBoundingClientRect().height)", el)
        d.set_window_size(size["width"], max(size["height"], height + 200))
        try:
            d.execute_script("arguments[0].scrollIntoView()", el)
            path.write_bytes(el.screenshot_as_png)
        finally:
            d.set_window_size(size["width"], size["height"])
        return path

    def close(self) -> None:
        self.driver.quit()


def browser_session() -> Browser:
    """A :class:`Browser`; skips (fails under CI) where one cannot be started here."""
    chromium = next((p for p in map(shutil.which, CHROMIUM) if p), None)
    driver = shutil.which(DRIVER)
    try:
        import selenium  # noqa: F401
    except ImportError:
        _missing("selenium is not installed (the dev extra: pip install -e '.[dev]')")
    if chromium is None or driver is None:
        _missing("no chromium and chromium-driver here (apt-get install chromium chromium-driver; .ci/run does)")
    return Browser(chromium, driver)


def _missing(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)
