"""The fleet index at 5,000 sites in headless Chromium: file size, load, filter, sort, search.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_fleet_index.py

Writes a real history of ``--sites`` generated sites (tests/report/fleet_history.py: one to
three runs each, every verdict and trend) and its index into a temp dir, opens it in Debian's
headless chromium (chromedriver), and times each action in the page itself
(``performance.now()``): the handler with the layout it forces, and to the next frame (a
requestAnimationFrame, then a task). Prints the median of ``--repeat`` runs of each; sorting
toggles the direction each time. Targets (issue 12): every action well under a second. No
assertion: the machine is shared, quote the load (``uptime``) beside the numbers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.report.fleet_history import main as write_index
from tests.report.test_browser import CHROMEDRIVER, CHROMIUM, FLAGS

#: One action, timed in the page: to the end of the handler plus the layout it forces, and
#: to the next frame.
_TIMED = """
const [action, done] = [arguments[0], arguments[arguments.length - 1]];
const t0 = performance.now();
new Function(action)();
document.body.offsetHeight;
const sync = performance.now() - t0;
requestAnimationFrame(() => setTimeout(() => done([sync, performance.now() - t0]), 0));
"""
_NAVIGATION = (
    "const n = performance.getEntriesByType('navigation')[0];"
    " return [n.domContentLoadedEventEnd, n.loadEventEnd]"
)


def _click(selector: str) -> str:
    return f"document.querySelector('{selector}').click();"


def _type(text: str) -> str:
    return (
        "const q = document.querySelector('#filters input[name=q]');"
        f" q.value = '{text}'; q.dispatchEvent(new Event('input', {{bubbles: true}}));"
    )


ACTIONS = (
    ("filter: click the 'untrusted' count", _click("#counts button[data-verdict=untrusted]")),
    ("filter: click 'all'", _click('#counts button[data-verdict=""]')),
    ("search: type '0042'", _type("0042")),
    ("search: clear", _type("")),
    ("sort by site", _click("button[data-sort=site]")),
    ("sort by last run", _click("button[data-sort=last]")),
    ("sort by verdict", _click("button[data-sort=verdict]")),
    ("sort by trend", _click("button[data-sort=trend]")),
)


def _browser(profile: Path):  # type: ignore[no-untyped-def]
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options
    )
    driver.set_window_size(1200, 1600)
    driver.set_script_timeout(120)
    return driver


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--screenshot", type=Path, help="save the index as first shown here")
    args = parser.parse_args(argv)
    if not CHROMIUM or not CHROMEDRIVER:
        print("needs Debian's chromium and chromium-driver", file=sys.stderr)
        return 1
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        write_index(args.sites, Path(folder))
        print(f"history and index written in {time.perf_counter() - started:.1f} s")
        uri = (Path(folder) / "index.html").as_uri()
        driver = _browser(Path(folder) / "profile")
        try:
            driver.get(uri)
            ready, loaded = driver.execute_script(_NAVIGATION)
            print(f"load: DOMContentLoaded {ready:.0f} ms, load event {loaded:.0f} ms")
            print(f"{'action':40s} {'handler+layout ms':>18s} {'next frame ms':>14s}  rows shown")
            for label, action in ACTIONS:
                runs = [driver.execute_async_script(_TIMED, action) for _ in range(args.repeat)]
                shown = driver.execute_script("return document.getElementById('shown').textContent")
                sync = statistics.median(r[0] for r in runs)
                frame = statistics.median(r[1] for r in runs)
                print(f"{label:40s} {sync:18.1f} {frame:14.1f}  {shown}")
            severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
            print(f"console errors: {len(severe)}")
            if args.screenshot:
                driver.get(uri)
                driver.save_screenshot(str(args.screenshot))
                print(f"screenshot: {args.screenshot}")
        finally:
            driver.quit()
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
