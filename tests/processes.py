"""What the start-up tests and benchmark share: a small local sitemap, and a fresh
``python -m auditor`` process that writes what the caller wants to know as JSON.

Touches: the disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def small_sitemap(folder: Path, urls: int) -> Path:
    """A local urlset of ``urls`` URLs, each with a lastmod, written to ``folder``."""
    rows = "".join(
        f"<url><loc>https://example.com/p/{i}</loc><lastmod>2024-01-{i % 28 + 1:02d}</lastmod>"
        "</url>\n"
        for i in range(urls)
    )
    path = folder / "sitemap.xml"
    path.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</urlset>\n',
        encoding="utf-8",
    )
    return path


def run_recording(tmp: Path, code: str, *args: str) -> tuple[Any, str]:
    """Run ``code`` in a fresh interpreter of this checkout (``python -c CODE OUT ARGS``)
    and return what it wrote to ``OUT`` as JSON, and its standard output."""
    out = tmp / "recorded.json"
    run = subprocess.run(
        [sys.executable, "-c", code, str(out), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert out.exists(), run.stderr
    return json.loads(out.read_text(encoding="utf-8")), run.stdout
