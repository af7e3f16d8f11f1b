"""A generated report opened in headless Chromium: it renders, every image loads, no errors.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them when
missing); the test says why it skips when they are not there.
"""

from __future__ import annotations

import shutil

import pytest

from auditor.history import History
from auditor.report import write_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
#: As this machine's notes advise: no background connections, no first-run work.
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)


@pytest.fixture
def browser(tmp_path):
    if not CHROMIUM or not CHROMEDRIVER:
        pytest.skip(
            "headless Chromium not available: install Debian's chromium and chromium-driver "
            "(.ci/run does it) to run the browser test"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (the test extra)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_window_size(1200, 1600)
    yield driver
    driver.quit()


def test_report_renders_in_headless_chromium(audited, browser, tmp_path):
    from selenium.webdriver.common.by import By

    database, origin, _ = audited
    with History.open(database) as history:
        path = write_report(history, origin, tmp_path / "reports")

    browser.get(path.as_uri())

    assert browser.title == f"auditor report: {origin}"
    assert browser.find_element(By.CSS_SELECTOR, "#verdict .badge").text == "PARTIAL"
    assert "some sub-sitemaps only" in browser.find_element(By.CSS_SELECTOR, "#verdict").text
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'),"
        " i.complete && i.naturalWidth > 0, i.naturalWidth])"
    )
    assert len(images) == 5
    assert all(loaded for _, loaded, _ in images), images
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert browser.save_screenshot(str(tmp_path / "report.png"))

    browser.get((path.parent.parent / "index.html").as_uri())
    browser.find_element(By.LINK_TEXT, origin).click()
    assert browser.title == f"auditor report: {origin}"
