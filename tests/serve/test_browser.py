"""``auditor serve`` in headless Chromium, as a person uses it: the fleet page, a filter,
a site, its report; each screenshot checked for what it shows (the verdicts' colours, a
page that is not blank), not pixel by pixel.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them); skips
saying why without them.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image

from auditor.report.charts import VERDICT_COLOURS
from auditor.serve.app import create_app
from auditor.serve.state import ServeConfig
from tests.report.test_browser import _chromium
from tests.serve.conftest import Audited
from tests.serve.live import serving


def _colours(png: bytes) -> set[tuple[int, int, int]]:
    """The colours a screenshot shows."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    return {colour for _, colour in image.getcolors(maxcolors=1 << 20) or []}


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


@pytest.fixture
def browser(tmp_path):
    driver = _chromium(tmp_path / "profile")
    yield driver
    driver.quit()


def test_fleet_then_a_filter_then_a_site_then_its_report(audited: Audited, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shows
    from selenium.webdriver.support.wait import WebDriverWait

    def until(condition):  # type: ignore[no-untyped-def]
        return WebDriverWait(browser, 30).until(condition)

    app = create_app(ServeConfig(db=str(audited.database), reports=tmp_path / "reports"))
    with serving(app) as base:
        browser.get(base + "/")
        assert browser.title == "auditor: every site"
        rows = browser.find_elements(By.CSS_SELECTOR, "#sites tbody tr")
        assert len(rows) == len(audited.origins) + 1
        fleet = browser.get_screenshot_as_png()
        (tmp_path / "fleet.png").write_bytes(fleet)
        shown = _colours(fleet)
        assert len(shown) > 20  # text, pills, a chart: not a blank page
        assert _rgb(VERDICT_COLOURS["untrusted"]) in shown
        assert _rgb(VERDICT_COLOURS["trusted"]) in shown

        browser.find_element(By.CSS_SELECTOR, 'input[name="verdict"][value="untrusted"]').click()
        browser.find_element(By.CSS_SELECTOR, 'form.filters button[type="submit"]').click()
        until(shows.url_contains("verdict=untrusted"))
        verdicts = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#sites .pill")}
        assert verdicts == {"untrusted"}
        filtered = _colours(browser.get_screenshot_as_png())
        assert _rgb(VERDICT_COLOURS["untrusted"]) in filtered

        frozen = audited.origins["frozen"]
        browser.find_element(By.LINK_TEXT, frozen).click()
        until(shows.title_is(f"auditor: {frozen}"))
        assert browser.find_element(By.CSS_SELECTOR, ".verdict .badge").text == "UNTRUSTED"
        assert "after trusted" in browser.find_element(By.CSS_SELECTOR, ".verdict").text
        site_png = browser.get_screenshot_as_png()
        (tmp_path / "site.png").write_bytes(site_png)
        site = _colours(site_png)
        assert _rgb(VERDICT_COLOURS["untrusted"]) in site

        browser.find_element(By.ID, "report").click()
        until(shows.title_is(f"auditor report: {frozen}"))
        images = browser.find_elements(By.CSS_SELECTOR, "figure img")
        assert images
        for image in images:  # every chart loaded, from the server
            assert browser.execute_script("return arguments[0].naturalWidth", image) > 100
        report = browser.get_screenshot_as_png()
        assert len(_colours(report)) > 20
        (tmp_path / "report.png").write_bytes(report)
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert not errors
