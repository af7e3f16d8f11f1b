"""The Scrapy page's spider (docs/scrapy.md) is a complete one: run as written (its site and history
swapped for a loopback site and a temp history) it crawls, and its settings table names
every setting auditor reads."""

from __future__ import annotations

import json
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


def test_the_readmes_spider_crawls_as_written(tmp_path):
    db = str(tmp_path / "history.sqlite3")
    site = SimulatedSite("shop", {"products": BEHAVIOURS["accurate-jsonld"]}, 40, seed=3)
    with SiteServer(site) as server:
        with History.open(db) as history:
            audit_site(server.origin, history, OPTIONS)
        code = _spider_code().replace("https://shop.example", server.origin)
        code = re.sub(r'"AUDITOR_DB": "[^"]*"', f'"AUDITOR_DB": {db!r}', code)
        spider = tmp_path / "shop.py"
        spider.write_text(code, encoding="utf-8")
        out = tmp_path / "items.jsonl"
        done = subprocess.run(
            [sys.executable, "-m", "scrapy", "runspider", str(spider), "-o", f"{out}:jsonlines",
             "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "TELNETCONSOLE_ENABLED=False"],
            cwd=tmp_path, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == 40
    assert {i["verdict"] for i in items} == {"trusted"} and all(i["lastmod"] for i in items)
    assert {i["reason"] for i in items} == {"never-fetched"} and all(i["title"] for i in items)


def test_the_settings_table_names_every_setting_auditor_reads():
    source = (ROOT / "auditor" / "scrapy" / "settings.py").read_text(encoding="utf-8")
    read = set(re.findall(r'"(AUDITOR_[A-Z_]+)"', source))
    documented = set(re.findall(r"`(AUDITOR_[A-Z_]+)`", SECTION))
    assert read == documented
