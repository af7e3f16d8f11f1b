"""Regenerate the pictures of the README and the docs from ``auditor demo`` (run by hand,
and after any change to the report's templates; a test checks they are not older).

    python3 scripts/screenshots.py

Runs the demo into a temporary folder (simulated sites on 127.0.0.1, no network), opens
the mixed site's report in headless Chromium (Debian's ``chromium`` and
``chromium-driver``, through selenium, the test extra) and saves the top of it, at a fixed
window size, as ``reports/example-report.png`` and ``docs/images/example-report.png``.

Touches: the network (loopback only), the disk.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = (ROOT / "reports" / "example-report.png", ROOT / "docs" / "images" / "example-report.png")
WINDOW = (1100, 1300)  # CSS pixels: the report's header, verdict, segments and first chart
SITE = "mixed"  # the demo site trusted for its blog and not for its products
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)


def main() -> int:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        sys.stderr.write("needs Debian's chromium and chromium-driver\n")
        return 1
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "demo"
        demo = [sys.executable, "-m", "auditor", "demo", "--out", str(out), "-q"]
        subprocess.run(demo, check=True, stdout=subprocess.DEVNULL)
        png = _screenshot((out / SITE / "index.html").as_uri(), chromium, driver, folder)
    for target in TARGETS:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(png)
        print(f"wrote {target.relative_to(ROOT)} ({len(png):,} bytes)")
    return 0


def _screenshot(url: str, chromium: str, driver_path: str, profile: str) -> bytes:
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*FLAGS, f"--user-data-dir={profile}/chromium"):
        options.add_argument(flag)
    browser = webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=driver_path), options=options
    )
    try:
        browser.set_window_size(*WINDOW)
        browser.get(url)
        width, height = browser.execute_script("return [window.innerWidth, window.innerHeight];")
        browser.set_window_size(WINDOW[0] * 2 - width, WINDOW[1] * 2 - height)  # the viewport
        png: bytes = browser.get_screenshot_as_png()
        return png
    finally:
        browser.quit()


if __name__ == "__main__":
    sys.exit(main())
