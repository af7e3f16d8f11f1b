"""The Scrapy page's spider (docs/scrapy.md) is a complete one: run as written (its site and history
swapped for a loopback site and a temp history) it crawls, with auditor and with auditor
off, with no error and no deprecation warning; and its settings table names every
setting auditor reads."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("scrapy")

from auditor.audit import audit_site
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History
from tests.crawl.sites import OPTIONS

ROOT = Path(__file__).resolve().parents[2]
SECTION = (ROOT / "docs" / "scrapy.md").read_text(encoding="utf-8")


def _spider_code() -> str:
    match = re.search(r"```python\n(# shop\.py\n.*?)```", SECTION, re.S)
    assert match, "docs/scrapy.md has no complete spider"
    return match.group(1)


#: ``scrapy`` run with deprecation warnings (Python's and Scrapy's) as errors: what a coming
#: Scrapy drops fails now. (``-W`` cannot name Scrapy's category: it imports no module.)
STRICT_SCRAPY = (
    "import warnings\n"
    "from scrapy.exceptions import ScrapyDeprecationWarning\n"
    "for category in (DeprecationWarning, ScrapyDeprecationWarning):\n"
    "    warnings.simplefilter('error', category)\n"
    "from scrapy.cmdline import execute\n"
    "execute()\n"
)


def _run_spider(origin: str, db: str, tmp_path: Path, *settings: str) -> tuple[list[dict], str]:
    """The docs' spider run as written (its site and history swapped); its items and log."""
    code = _spider_code().replace("https://shop.example", origin)
    code = re.sub(r'"AUDITOR_DB": "[^"]*"', f'"AUDITOR_DB": {db!r}', code)
    spider = tmp_path / "shop.py"
    spider.write_text(code, encoding="utf-8")
    out = tmp_path / f"items-{len(list(tmp_path.glob('items-*')))}.jsonl"
    extra = [arg for setting in settings for arg in ("-s", setting)]
    done = subprocess.run(
        [sys.executable, "-c", STRICT_SCRAPY, "runspider", str(spider),
         "-o", f"{out}:jsonlines", "-s", "AUTOTHROTTLE_ENABLED=False",
         "-s", "TELNETCONSOLE_ENABLED=False", *extra],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},  # this checkout's auditor
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    for bad in ("Traceback", "Warning", "log_count/ERROR"):
        assert bad not in done.stderr, done.stderr[-3000:]
    return [json.loads(line) for line in out.read_text().splitlines()], done.stderr


def test_the_readmes_spider_crawls_as_written_with_auditor_and_without(tmp_path):
    db = str(tmp_path / "history.sqlite3")
    site = SimulatedSite("shop", {"products": BEHAVIOURS["accurate-jsonld"]}, 40, seed=3)
    with SiteServer(site) as server:
        with History.open(db) as history:
            audit_site(server.origin, history, OPTIONS)
        items, _ = _run_spider(server.origin, db, tmp_path)
        off, _ = _run_spider(server.origin, db, tmp_path, "AUDITOR_ENABLED=False")
    assert len(items) == 40
    assert {i["verdict"] for i in items} == {"trusted"} and all(i["lastmod"] for i in items)
    assert {i["reason"] for i in items} == {"never-fetched"} and all(i["title"] for i in items)
    assert sorted(i["url"] for i in off) == sorted(i["url"] for i in items)  # the same pages
    assert all(i["title"] for i in off) and {i["verdict"] for i in off} == {None}


def test_the_settings_table_names_every_setting_auditor_reads():
    source = (ROOT / "auditor" / "scrapy" / "settings.py").read_text(encoding="utf-8")
    read = set(re.findall(r'"(AUDITOR_[A-Z_]+)"', source))
    documented = set(re.findall(r"`(AUDITOR_[A-Z_]+)`", SECTION))
    assert read == documented
