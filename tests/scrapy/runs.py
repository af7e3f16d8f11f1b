"""Runs one real Scrapy crawl of a loopback site in a process of its own
(tests/scrapy/crawl.py) and reads what it did: its items, its stats, the paths the site
saw Scrapy ask for. Every crawl runs with deprecation warnings as errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from auditor.demo.server import SiteServer

ROOT = Path(__file__).resolve().parents[2]


class Crawl:
    """What one crawl did: the pages it got (with their meta), Scrapy's stats, and the
    paths the site's server saw Scrapy request (the plan's own walk of the sitemaps, by
    auditor's User-Agent, left out); its log (stderr)."""

    def __init__(
        self, items: list[dict[str, Any]], stats: dict[str, Any], paths: list[str], log: str
    ) -> None:
        self.items = items
        self.stats = stats
        self.paths = paths
        self.log = log

    @property
    def pages(self) -> set[str]:
        """Page paths requested (sitemaps and robots.txt left out)."""
        return {p for p in self.paths if not p.startswith(("/sitemap", "/robots.txt"))}


def crawl_config(server: SiteServer, db: str, tmp_path: Path, mode: str, **extra: Any) -> dict:
    """The crawl script's configuration; AUDITOR_* settings from ``extra`` (the spool in
    ``tmp_path/spool`` unless given)."""
    out = tmp_path / f"items-{len(list(tmp_path.glob('items-*.jsonl')))}.jsonl"
    return {
        "origin": server.origin,
        "out": str(out),
        "mode": mode,
        "paths": extra.pop("paths", []),
        "settings": {"AUDITOR_DB": db, "AUDITOR_SPOOL_DIR": str(tmp_path / "spool"), **extra},
    }


def crawl_command(config: dict) -> list[str]:
    """The command that runs one crawl."""
    return [sys.executable, "-m", "tests.scrapy.crawl", json.dumps(config)]


CRAWL_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def run_crawl(
    server: SiteServer, db: str, tmp_path: Path, mode: str = "planned", **extra: Any
) -> Crawl:
    """One crawl of the server's site, which must end well: no traceback, no warning."""
    config = crawl_config(server, db, tmp_path, mode, **extra)
    seen = len(server.log)
    done = subprocess.run(
        crawl_command(config), cwd=ROOT, env=CRAWL_ENV, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
    assert "Warning" not in done.stderr, done.stderr[-4000:]
    out = Path(config["out"])
    items = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    stats = json.loads(Path(str(out) + ".stats").read_text())
    scrapy = [
        r.path for r in server.log[seen:] if r.headers.get("User-Agent", "").startswith("Scrapy")
    ]
    return Crawl(items, stats, scrapy, done.stderr)
