"""Walker throughput and memory over loopback, against a stdlib floor and the peers.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_walk.py [--profile]

Three cases, each generated into a temporary folder and served from a loopback HTTP server
in its own process (one child of each index gzip'd):

- ``real``: 20 children x 50,000 URLs in the mix real generators write: locs of 80-120
  characters, about 4% with ``&amp;`` query strings; lastmod absent on 15%, a date on 35%
  and distinct timestamps in every W3C form on the rest (``Z``, ``+00:00``, ``+05:30``,
  ``-08:00``, fractions, minutes only); ``changefreq``/``priority`` on 30%;
- ``classic``: the earlier shape, 20 x 50,000 URLs with fewer distinct lastmods, image
  extensions and four indentation styles;
- ``long``: one file of 50,000 URLs of about 900 characters (50 MB, under the 50 MiB cap).

Each run measures, each time in a fresh process and interleaved so that drift hits all:

- the floor: the C ElementTree ``iterparse`` streaming every response (index first, then
  the children), picking ``loc`` and ``lastmod`` by tag and clearing the root, nothing else;
- ``python -m auditor walk INDEX --format jsonl > /dev/null`` (this checkout's code) end
  to end, with its peak RSS;
- the peers, as optional rows when ``--peer-python`` (default: this interpreter) can import
  them: Scrapy's ``Sitemap`` (lxml), ultimate-sitemap-parser and advertools'
  ``sitemap_to_df``, each a whole process reading the same files.

It prints per case wall seconds, URLs/s, the speed against the floor (floor wall / wall: 1.0
is as fast as the C loop, 2.0 twice as fast; best of each and the median of the runs'
paired ratios) and peak RSS, and checks once per case that the walk wrote exactly the
expected records: a count, plus an order-independent digest of (loc, lastmod, precision,
raw, sitemap) over every line.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gzip
import hashlib
import json
import os
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
INDEX_NAME = "sitemap_index.xml"
TARGET_RATIO = 1.0  # walk speed / floor speed (issue 14: at least the C loop, aim 2x)
TARGET_RSS_MB = 100.0
CASES = ("real", "classic", "long")
_MASK = (1 << 64) - 1

# -- generating the site --------------------------------------------------------------------

_WORDS = tuple(
    " ".join(
        (
            "red oak dining table chair linen cotton wool summer winter garden lamp brass steel",
            "walnut velvet sofa rug ceramic mug kettle cast iron pan knife board shelf desk",
            "office ergonomic standing mirror round square vintage modern rustic nordic outdoor",
            "patio bench guide review how-to best cheap premium eco recycled handmade organic",
            "kids travel",
        )
    ).split()
)
_CATEGORIES = (
    "furniture",
    "kitchen",
    "lighting",
    "textiles",
    "garden",
    "office",
    "decor",
    "outlet",
)
_COLORS = ("red", "blue", "black", "white", "natural", "grey", "green")
_SIZES = ("xs", "s", "m", "l", "xl")
_SECTIONS = ("products", "posts", "categories", "search", "wiki")

# lastmod forms: (name, weight when mixed in)
_FORMS = (
    ("second_utc", 30),  # 2024-03-15T10:22:33+00:00 (Yoast, most CMSs)
    ("day", 25),  # 2024-03-15
    ("second_plus2", 12),  # 2024-03-15T12:22:33+02:00
    ("second_z", 10),  # 2024-03-15T10:22:33Z
    ("minute_z", 6),  # 2024-03-15T10:22Z
    ("fraction_ms_z", 6),  # 2024-03-15T10:22:33.123Z
    ("fraction_us_plus2", 5),  # 2024-03-15T12:22:33.123456+02:00
    ("month", 1),  # 2024-03 (a few)
    ("absent", 5),  # no <lastmod> at all
)
_FORM_NAMES = tuple(name for name, _ in _FORMS)
_FORM_WEIGHTS = tuple(weight for _, weight in _FORMS)
_PLUS2 = timedelta(hours=2)
_BASE = int(datetime(2021, 1, 1, tzinfo=UTC).timestamp())
_SPAN = 5 * 365 * 86_400

# indentation of a record, as real generators write it: (url open, field indent, url close)
_STYLES = {
    "tabs": ("\t<url>\n", "\t\t", "\t</url>\n", "\n"),  # Yoast
    "two": ("  <url>\n", "    ", "  </url>\n", "\n"),
    "four": ("    <url>\n", "        ", "    </url>\n", "\n"),
    "compact": ("<url>", "", "</url>\n", ""),  # one record a line, no inner whitespace
}
_URLSET_OPEN = {
    "tabs": (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<?xml-stylesheet type="text/xsl" href="//{host}/main-sitemap.xsl"?>\n'
        '<urlset xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        f'xmlns:image="{IMAGE_NS}" '
        f'xsi:schemaLocation="{SITEMAP_NS} {SITEMAP_NS}/sitemap.xsd '
        f'{IMAGE_NS} {IMAGE_NS}/sitemap-image.xsd" '
        f'xmlns="{SITEMAP_NS}">\n'
    ),
    "two": (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="{SITEMAP_NS}" xmlns:image="{IMAGE_NS}">\n'
    ),
    "four": (
        "<?xml version='1.0' encoding='utf-8'?>\n"
        f'<urlset xmlns="{SITEMAP_NS}"\n        xmlns:image="{IMAGE_NS}">\n'
    ),
    "compact": (f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="{SITEMAP_NS}">\n'),
}


@dataclass
class Site:
    """What was generated: where, and what a correct walk must write."""

    root: Path
    index_url: str
    urls: int
    children: int
    digest: int
    bytes_on_disk: int


def _lastmod(rng: random.Random, form: str, t: int) -> tuple[str, str, str] | None:
    """(raw, expected UTC ISO 8601, precision) for the instant ``t``, or None (absent)."""
    if form == "absent":
        return None
    utc = datetime.fromtimestamp(t, UTC)
    if form == "day":
        value = utc.replace(hour=0, minute=0, second=0)
        return f"{utc:%Y-%m-%d}", value.isoformat(), "day"
    if form == "month":
        value = utc.replace(day=1, hour=0, minute=0, second=0)
        return f"{utc:%Y-%m}", value.isoformat(), "month"
    if form == "minute_z":
        return f"{utc:%Y-%m-%dT%H:%M}Z", utc.replace(second=0).isoformat(), "minute"
    if form == "second_utc":
        return f"{utc:%Y-%m-%dT%H:%M:%S}+00:00", utc.isoformat(), "second"
    if form == "second_z":
        return f"{utc:%Y-%m-%dT%H:%M:%S}Z", utc.isoformat(), "second"
    if form == "second_plus2":
        return f"{utc + _PLUS2:%Y-%m-%dT%H:%M:%S}+02:00", utc.isoformat(), "second"
    if form == "fraction_ms_z":
        ms = rng.randrange(1000)
        value = utc.replace(microsecond=ms * 1000)
        return f"{utc:%Y-%m-%dT%H:%M:%S}.{ms:03d}Z", value.isoformat(), "fraction"
    if form == "fraction_us_plus2":
        us = rng.randrange(1_000_000)
        value = utc.replace(microsecond=us)
        return f"{utc + _PLUS2:%Y-%m-%dT%H:%M:%S}.{us:06d}+02:00", value.isoformat(), "fraction"
    raise ValueError(form)


def _path(rng: random.Random, section: str, n: int) -> str:
    """A realistic, unique path (XML-escaped: ``&amp;`` in query strings)."""
    slug = "-".join(rng.sample(_WORDS, rng.randint(2, 5)))
    if section == "products":
        path = f"/shop/{rng.choice(_CATEGORIES)}/{slug}-p{n}"
        if rng.random() < 0.3:
            path += f"?variant={rng.choice(_COLORS)}&amp;size={rng.choice(_SIZES)}"
        return path
    if section == "posts":
        return f"/blog/{2015 + n % 11}/{1 + n % 12:02d}/{slug}-{n}/"
    if section == "categories":
        return f"/category/{rng.choice(_CATEGORIES)}/{slug}/page/{n}/"
    if section == "search":
        word = rng.choice(_WORDS)
        return f"/search?q={word}&amp;page={n}&amp;sort={rng.choice(('price', 'new', 'rank'))}"
    return f"/wiki/Caf%C3%A9_{slug.replace('-', '_')}_{n}"  # percent-encoded


def _entry_key(loc: str, iso: str | None, precision: str | None, raw: str | None, sm: str) -> int:
    text = f"{loc}\t{iso}\t{precision}\t{raw}\t{sm}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


def generate(
    root: Path,
    origin: str,
    children: int,
    per_child: int,
    seed: int = 20261129,
    shape: str = "classic",
) -> Site:
    """Write the index and its children into ``root``; return what a walk must produce.

    ``origin`` is the URL of ``root`` itself (it may be a folder on the server).
    """
    if shape != "classic":
        return generate_real(root, origin, children, per_child, seed, shape)
    rng = random.Random(seed)
    host = origin.split("://", 1)[1]
    digest = 0
    n = 0
    index_lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<sitemapindex xmlns="{SITEMAP_NS}">',
    ]
    styles = tuple(_STYLES)
    gz_child = min(6, children - 1)
    for c in range(children):
        section = _SECTIONS[c % len(_SECTIONS)]
        name = f"sitemap-{section}-{c + 1}.xml" + (".gz" if c == gz_child else "")
        sitemap_url = f"{origin}/{name}"
        style = styles[c % len(styles)]
        url_open, indent, url_close, nl = _STYLES[style]
        dominant = _FORM_NAMES[c % (len(_FORM_NAMES) - 2)]  # never month/absent as dominant
        # two children are stamped with the generation time, as many real sites do
        stamped = c in (3, 12)
        stamp_times = (_BASE + _SPAN - 7200, _BASE + _SPAN - 7199)
        parts = [_URLSET_OPEN[style].replace("{host}", host)]
        for _ in range(per_child):
            n += 1
            path = _path(rng, section, n)
            loc_raw = origin + path
            t = rng.choice(stamp_times) if stamped else _BASE + rng.randrange(_SPAN)
            mixed = rng.random() >= 0.7  # 30% of a file in any other form
            form = rng.choices(_FORM_NAMES, _FORM_WEIGHTS)[0] if mixed else dominant
            lastmod = _lastmod(rng, form, t)
            record = [url_open, indent, "<loc>", loc_raw, "</loc>", nl]
            if lastmod is not None:
                record += [indent, "<lastmod>", lastmod[0], "</lastmod>", nl]
            if style == "compact" and n % 3 == 0:
                record.append("<changefreq>weekly</changefreq><priority>0.6</priority>")
            if section in ("products", "posts") and style != "compact" and n % 4 == 0:
                for i in range(1 + n % 2):
                    folder = f"{origin}/wp-content/uploads/{2015 + n % 11}/{n % 12 + 1:02d}"
                    image = f"{folder}/img-{n}-{i}.jpg"
                    inner = indent + ("\t" if style == "tabs" else "  ")
                    record += [indent, "<image:image>", nl, inner, "<image:loc>", image]
                    record += ["</image:loc>", nl, indent, "</image:image>", nl]
            record.append(url_close)
            parts.append("".join(record))
            loc = loc_raw.replace("&amp;", "&")
            iso, precision, raw = (lastmod[1], lastmod[2], lastmod[0]) if lastmod else (None,) * 3
            digest = (digest + _entry_key(loc, iso, precision, raw, sitemap_url)) & _MASK
        parts.append("</urlset>\n")
        data = "".join(parts).encode()
        if name.endswith(".gz"):
            (root / name).write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
        else:
            (root / name).write_bytes(data)
        index_stamp = datetime.fromtimestamp(_BASE + _SPAN - c * 86_400, UTC)
        index_lines += [
            "  <sitemap>",
            f"    <loc>{sitemap_url}</loc>",
            f"    <lastmod>{index_stamp:%Y-%m-%dT%H:%M:%S}+00:00</lastmod>",
            "  </sitemap>",
        ]
    index_lines.append("</sitemapindex>\n")
    (root / INDEX_NAME).write_text("\n".join(index_lines), encoding="utf-8")
    size = sum(p.stat().st_size for p in root.iterdir())
    return Site(root, f"{origin}/{INDEX_NAME}", n, children, digest, size)


# -- the real-shaped mix ------------------------------------------------------------------------

# lastmod of a real-shaped entry: (form, weight); 15% absent, 35% a date, 50% a timestamp
_REAL_FORMS = (
    ("absent", 15),
    ("day", 35),
    ("second_z", 10),
    ("second_utc", 10),
    ("second_ist", 6),  # +05:30
    ("second_pst", 6),  # -08:00
    ("fraction_ms_z", 6),
    ("fraction_us_offset", 4),  # .123456-08:00 / +05:30
    ("minute_z", 4),
    ("minute_offset", 4),  # hh:mm+05:30
)
_REAL_NAMES = tuple(name for name, _ in _REAL_FORMS)
_REAL_WEIGHTS = tuple(weight for _, weight in _REAL_FORMS)
_IST = timedelta(hours=5, minutes=30)
_PST = timedelta(hours=-8)
_QUERY_SHARE = 0.04
_EXTRAS_SHARE = 0.30
_EXTRAS = (
    "<changefreq>weekly</changefreq><priority>0.8</priority>",
    "<changefreq>daily</changefreq><priority>0.5</priority>",
    "<changefreq>monthly</changefreq><priority>0.3</priority>",
)


def _offset_text(local: datetime, offset: timedelta, seconds: bool = True) -> str:
    minutes = int(offset.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    zone = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return f"{local:%Y-%m-%dT%H:%M:%S}{zone}" if seconds else f"{local:%Y-%m-%dT%H:%M}{zone}"


def _real_lastmod(rng: random.Random, form: str, t: int) -> tuple[str, str, str] | None:
    """(raw, expected UTC ISO 8601, precision) of a real-shaped lastmod, or None."""
    if form == "absent":
        return None
    utc = datetime.fromtimestamp(t, UTC)
    if form == "day":
        return f"{utc:%Y-%m-%d}", utc.replace(hour=0, minute=0, second=0).isoformat(), "day"
    if form == "second_z":
        return f"{utc:%Y-%m-%dT%H:%M:%S}Z", utc.isoformat(), "second"
    if form == "second_utc":
        return f"{utc:%Y-%m-%dT%H:%M:%S}+00:00", utc.isoformat(), "second"
    if form in ("second_ist", "second_pst"):
        offset = _IST if form == "second_ist" else _PST
        return _offset_text(utc + offset, offset), utc.isoformat(), "second"
    if form == "fraction_ms_z":
        ms = rng.randrange(1000)
        value = utc.replace(microsecond=ms * 1000)
        return f"{utc:%Y-%m-%dT%H:%M:%S}.{ms:03d}Z", value.isoformat(), "fraction"
    if form == "fraction_us_offset":
        us = rng.randrange(1_000_000)
        offset = _PST if us % 2 else _IST
        raw = _offset_text(utc + offset, offset)
        raw = f"{raw[:19]}.{us:06d}{raw[19:]}"
        return raw, utc.replace(microsecond=us).isoformat(), "fraction"
    if form == "minute_z":
        return f"{utc:%Y-%m-%dT%H:%M}Z", utc.replace(second=0).isoformat(), "minute"
    if form == "minute_offset":
        raw = _offset_text(utc + _IST, _IST, seconds=False)
        return raw, utc.replace(second=0).isoformat(), "minute"
    raise ValueError(form)


def _real_loc(rng: random.Random, origin: str, section: str, n: int, size: int) -> str:
    """A unique loc of about ``size`` characters, XML-escaped, 4% with a query string."""
    head = f"{origin}/{section}/{rng.choice(_CATEGORIES)}/"
    tail = f"-{n}"
    words: list[str] = []
    room = size - len(head) - len(tail)
    while room > 0:
        word = rng.choice(_WORDS)
        words.append(word)
        room -= len(word) + 1
    loc = head + "-".join(words)[: max(size - len(head) - len(tail), 1)] + tail
    if rng.random() < _QUERY_SHARE:
        loc += f"?utm_source=feed&amp;utm_medium={rng.choice(_COLORS)}&amp;ref={n % 97}"
    return loc


def generate_real(
    root: Path, origin: str, children: int, per_child: int, seed: int, shape: str
) -> Site:
    """The ``real`` mix (locs of 80-120 characters) or ``long`` (860-940 characters)."""
    rng = random.Random(seed + 1)
    low, high = (80, 120) if shape == "real" else (860, 940)
    digest = n = 0
    index_lines = ['<?xml version="1.0" encoding="UTF-8"?>', f'<sitemapindex xmlns="{SITEMAP_NS}">']
    styles = ("two", "tabs", "four", "compact")
    gz_child = min(6, children - 1) if children > 1 else -1
    for c in range(children):
        section = _SECTIONS[c % len(_SECTIONS)]
        name = f"{shape}-{section}-{c + 1}.xml" + (".gz" if c == gz_child else "")
        sitemap_url = f"{origin}/{name}"
        style = styles[c % len(styles)]
        url_open, indent, url_close, nl = _STYLES[style]
        parts = [f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAP_NS}">\n']
        for _ in range(per_child):
            n += 1
            loc_raw = _real_loc(rng, origin, section, n, rng.randint(low, high))
            form = rng.choices(_REAL_NAMES, _REAL_WEIGHTS)[0]
            lastmod = _real_lastmod(rng, form, _BASE + rng.randrange(_SPAN))
            record = [url_open, indent, "<loc>", loc_raw, "</loc>", nl]
            if lastmod is not None:
                record += [indent, "<lastmod>", lastmod[0], "</lastmod>", nl]
            if rng.random() < _EXTRAS_SHARE:
                record += [indent, rng.choice(_EXTRAS), nl]
            record.append(url_close)
            parts.append("".join(record))
            iso, precision, raw = (lastmod[1], lastmod[2], lastmod[0]) if lastmod else (None,) * 3
            loc = loc_raw.replace("&amp;", "&")
            digest = (digest + _entry_key(loc, iso, precision, raw, sitemap_url)) & _MASK
        parts.append("</urlset>\n")
        data = "".join(parts).encode()
        if name.endswith(".gz"):
            (root / name).write_bytes(gzip.compress(data, compresslevel=6, mtime=0))
        else:
            (root / name).write_bytes(data)
        index_lines += [
            f"  <sitemap><loc>{sitemap_url}</loc>",
            f"    <lastmod>{datetime.fromtimestamp(_BASE + _SPAN - c * 86_400, UTC):%Y-%m-%d}"
            "</lastmod></sitemap>",
        ]
    index_lines.append("</sitemapindex>\n")
    (root / INDEX_NAME).write_text("\n".join(index_lines), encoding="utf-8")
    size = sum(p.stat().st_size for p in root.iterdir())
    return Site(root, f"{origin}/{INDEX_NAME}", n, children, digest, size)


# -- the loopback server (its own process) ----------------------------------------------------


def serve_forever(folder: str) -> None:
    """Serve ``folder`` on 127.0.0.1 (HTTP/1.1, keep-alive, sendfile); print the port."""
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Handler(SimpleHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def copyfile(self, source, outputfile) -> None:  # type: ignore[no-untyped-def]
            self.connection.sendfile(source)  # zero-copy: almost no server CPU

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=folder))
    httpd.daemon_threads = True
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()


@contextlib.contextmanager
def loopback_server(folder: Path):
    proc = subprocess.Popen(
        [sys.executable, __file__, "--_serve", str(folder)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


# -- the floor (run in its own process, from walk_floor.py) ------------------------------------

# -- the peers (each run in its own process, by --peer-python) ---------------------------------

PEERS = {  # row name -> module whose import tells that the peer is installed
    "scrapy Sitemap": "scrapy",
    "ultimate-sitemap-parser": "usp",
    "advertools sitemap_to_df": "advertools",
}


def _peer_scrapy(index_url: str) -> int:
    """Scrapy's ``Sitemap`` on each whole body, as ``SitemapSpider`` uses it."""
    import requests
    from scrapy.utils.sitemap import Sitemap

    session = requests.Session()

    def body(url: str) -> bytes:
        resp = session.get(url, timeout=60)
        resp.raise_for_status()
        data = resp.content
        return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data

    children = [d["loc"] for d in Sitemap(body(index_url))]
    urls = 0
    for child in children:
        for d in Sitemap(body(child)):
            urls += "loc" in d
            d.get("lastmod")
    return urls


def _peer_usp(index_url: str) -> int:
    """ultimate-sitemap-parser's fetcher on the index, then every page of the tree."""
    from usp.fetch_parse import SitemapFetcher
    from usp.web_client.requests_client import RequestsWebClient

    tree = SitemapFetcher(index_url, recursion_level=0, web_client=RequestsWebClient()).sitemap()
    return sum(1 for _ in tree.all_pages())


def _peer_advertools(index_url: str) -> int:
    """advertools' ``sitemap_to_df`` on the index (it fetches the children itself)."""
    import logging

    import advertools

    logging.disable(logging.CRITICAL)
    return len(advertools.sitemap_to_df(index_url))


_PEER_RUNNERS = {
    "scrapy Sitemap": _peer_scrapy,
    "ultimate-sitemap-parser": _peer_usp,
    "advertools sitemap_to_df": _peer_advertools,
}


def peer(name: str, index_url: str) -> None:
    """Run one peer over the index; print a JSON result."""
    print(json.dumps({"urls": _PEER_RUNNERS[name](index_url)}), flush=True)


def installed_peers(python: str) -> list[str]:
    """The peers that ``python`` can import."""
    found = []
    for name, module in PEERS.items():
        check = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
        if check.returncode == 0:
            found.append(name)
    return found


# -- measuring child processes -----------------------------------------------------------------


# A tiny launcher between this (large) process and the measured one. A child's ru_maxrss
# also counts the memory of the process it was forked from (Linux records the old mm's
# high-water mark at exec), so measuring a child of this process would report at least this
# process's own peak. The launcher is a bare interpreter (-S): a few MB, far below anything
# measured. It spawns the command, waits for it with wait4 (that process alone, not mixed
# with other children), and writes wall seconds, cpu seconds, peak RSS and exit code.
_LAUNCHER = """
import os, sys, time
result, cmd = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
pid = os.posix_spawnp(cmd[0], cmd, os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
scale = 1 if sys.platform == "darwin" else 1024
with open(result, "w") as handle:
    handle.write(" ".join(map(str, (
        wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * scale,
        os.waitstatus_to_exitcode(status),
    ))))
"""


@dataclass
class Run:
    wall: float  # seconds, spawn to exit
    cpu: float  # user + system seconds of the process
    rss_mb: float  # peak resident set of that process alone
    code: int
    stdout: str  # only when captured
    stderr: str


def measure(cmd: list[str], stdout: Path | None = None, capture: bool = False) -> Run:
    """Run ``cmd`` in a fresh process, stdout to ``stdout`` (None: /dev/null), and measure it.

    ``capture`` reads what it wrote to ``stdout`` back into ``Run.stdout``.
    """
    with tempfile.TemporaryDirectory(prefix="bench_run_") as tmp:
        result = Path(tmp) / "result"
        err_path = Path(tmp) / "stderr"
        with contextlib.ExitStack() as stack:
            out = (
                stack.enter_context(stdout.open("wb")) if stdout is not None else subprocess.DEVNULL
            )
            err = stack.enter_context(err_path.open("wb"))
            launcher = [sys.executable, "-S", "-c", _LAUNCHER, str(result), *cmd]
            subprocess.run(launcher, stdout=out, stderr=err, check=True)
        wall, cpu, rss, code = result.read_text().split()
        return Run(
            float(wall),
            float(cpu),
            float(rss) / 1_048_576,
            int(code),
            stdout.read_text(encoding="utf-8") if capture and stdout is not None else "",
            err_path.read_text(encoding="utf-8", errors="replace"),
        )


PROJECT = Path(__file__).resolve().parents[2]


def walk_command(index_url: str, *extra: str) -> list[str]:
    """``python -m auditor walk`` of this checkout (``main`` puts it first on PYTHONPATH).

    Not the ``auditor`` console script: that runs whichever checkout was installed.
    """
    return [sys.executable, "-m", "auditor", "walk", index_url, "--format", "jsonl", *extra]


# The floor and the peers run this file imported as a module (its bytecode cached, as the
# walk's is), not as a script, which Python compiles afresh at every start.
_HERE = str(Path(__file__).resolve().parent)
_IMPORT = f"import sys; sys.path.insert(0, {_HERE!r}); import bench_walk"
_AS_MODULE = _IMPORT + "; sys.exit(bench_walk.main(sys.argv[1:]))"


def floor_command(index_url: str) -> list[str]:
    """The floor's process: walk_floor.py alone, so that it imports what it uses and no
    more (this file's imports, cProfile, subprocess, statistics and the rest, cost the
    floor about 20 ms it does not need: 5% of the 50 MB file's walk, which flattered the
    walk's ratio until 2026-12-04)."""
    run = f"import sys; sys.path.insert(0, {_HERE!r}); import walk_floor; "
    run += "walk_floor.floor(sys.argv[1])"
    return [sys.executable, "-c", run, index_url]


def peer_command(python: str, name: str, index_url: str) -> list[str]:
    return [python, "-c", _AS_MODULE, "--_peer", name, index_url]


def cache_bytecode(pythons: list[str]) -> None:
    """Let every reader start as an installed package does: from cached bytecode.

    A sandbox may set PYTHONDONTWRITEBYTECODE: the walk, run from this checkout, then
    compiled its modules at every start (about 35 ms of a 0.8 s run) while the peers
    read theirs from site-packages. The children run without it, once before timing.
    """
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    for python in dict.fromkeys(pythons):
        subprocess.run([python, "-c", _IMPORT], check=False)
    subprocess.run([sys.executable, "-m", "auditor", "walk", "--help"], capture_output=True)


# -- verification -------------------------------------------------------------------------------


def verify(site: Site, workdir: Path) -> list[str]:
    """Walk once into a file; compare the count and digest with what was generated."""
    out = workdir / "walk.jsonl"
    problems = workdir / "problems.jsonl"
    run = measure(walk_command(site.index_url, "--problems", str(problems)), stdout=out)
    failures = []
    if run.code != 0:
        failures.append(f"exit code {run.code}: {run.stderr.strip()[-500:]}")
    lines = digest = 0
    bad = 0
    with out.open(encoding="utf-8") as handle:
        for line in handle:
            lines += 1
            try:
                r = json.loads(line)
                key = _entry_key(
                    r["loc"], r["lastmod"], r["lastmod_precision"], r["lastmod_raw"], r["sitemap"]
                )
            except (ValueError, KeyError):
                bad += 1
                continue
            digest = (digest + key) & _MASK
    out.unlink()
    print(f"verify: {lines:,} lines written (expected {site.urls:,}); {run.wall:.2f} s")
    if lines != site.urls:
        failures.append(f"{lines:,} lines, expected exactly {site.urls:,}")
    if bad:
        failures.append(f"{bad:,} lines are not JSON objects with the contract keys")
    if digest != site.digest:
        failures.append(
            "records differ from the generated ones (loc, lastmod, precision, raw or sitemap)"
        )
    reported = problems.read_text(encoding="utf-8").splitlines() if problems.exists() else []
    if reported:
        failures.append(f"{len(reported)} problem(s) reported on a clean site, e.g. {reported[0]}")
    return failures


# -- profile ------------------------------------------------------------------------------------


def profile(index_url: str, top: int = 25) -> None:
    """The walk command in this process under cProfile; top functions by cumulative and own."""
    from auditor import cli

    prof = cProfile.Profile()
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        started = time.perf_counter()
        prof.enable()
        code = cli.main(["walk", index_url, "--format", "jsonl"])
        prof.disable()
        elapsed = time.perf_counter() - started
    print(f"\n== profile: cli.main walk, exit {code}, {elapsed:.2f} s under cProfile ==")
    stats = pstats.Stats(prof, stream=sys.stdout).strip_dirs()
    print(f"-- top {top} by cumulative time --")
    stats.sort_stats("cumulative").print_stats(top)
    print(f"-- top {top} by own (total) time --")
    stats.sort_stats("tottime").print_stats(top)


# -- the benchmark ------------------------------------------------------------------------------


@dataclass
class Row:
    """One reader's runs on one case."""

    name: str
    runs: list[Run]
    urls: list[int]  # what each run counted (the walk: not counted, the expected number)


def _case_sizes(case: str, children: int, per_child: int) -> tuple[int, int]:
    return (1, 50_000) if case == "long" else (children, per_child)


def run_case(case: str, origin: str, root: Path, args: argparse.Namespace) -> bool:
    """Generate, verify and measure one case; print its table. True when verification passed."""
    folder = root / case
    folder.mkdir()
    children, per_child = _case_sizes(case, args.children, args.per_child)
    started = time.perf_counter()
    site = generate(folder, f"{origin}/{case}", children, per_child, shape=case)
    print(
        f"\n### case {case}: {site.urls:,} URLs in {site.children} children + index "
        f"({site.bytes_on_disk / 1e6:.0f} MB on disk) in {time.perf_counter() - started:.1f} s"
    )
    ok = True
    if not args.no_verify:
        failures = verify(site, folder)
        for failure in failures:
            print(f"VERIFY FAILED: {failure}")
        ok = not failures
    peers = installed_peers(args.peer_python) if not args.no_peers else []
    rows = [Row("C iterparse loop (floor)", [], []), Row("auditor walk --format jsonl", [], [])]
    rows += [Row(name, [], []) for name in peers]
    for i in range(args.repeat):  # interleaved, so drift hits every reader alike
        for row in rows:
            if row is rows[1]:
                run = measure(walk_command(site.index_url))
                counted = site.urls
            else:
                cmd = (
                    floor_command(site.index_url)
                    if row is rows[0]
                    else peer_command(args.peer_python, row.name, site.index_url)
                )
                run = measure(cmd, folder / "result.json", capture=True)
                counted = json.loads(run.stdout)["urls"] if run.code == 0 else -1
            if run.code != 0:
                print(f"{row.name} failed (exit {run.code}): {run.stderr.strip()[-800:]}")
            elif counted != site.urls:
                print(f"{row.name} counted {counted:,} URLs, expected {site.urls:,}")
            row.runs.append(run)
            row.urls.append(counted)
        print(
            f"run {i + 1}: "
            + " | ".join(f"{r.name.split()[0]} {r.runs[-1].wall:.2f} s" for r in rows)
        )
    if args.repeat:
        report(case, site, rows)
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES)
    )
    parser.add_argument("--children", type=int, default=20, help="child sitemaps (default 20)")
    parser.add_argument("--per-child", type=int, default=50_000, help="URLs per child")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement")
    parser.add_argument("--peer-python", default=sys.executable, help="interpreter for the peers")
    parser.add_argument("--no-peers", action="store_true", help="skip the peers' rows")
    parser.add_argument("--profile", action="store_true", help="also profile the walk")
    parser.add_argument("--no-verify", action="store_true", help="skip the output check")
    parser.add_argument("--_serve", help=argparse.SUPPRESS)
    parser.add_argument("--_floor", help=argparse.SUPPRESS)
    parser.add_argument("--_peer", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._serve:
        serve_forever(args._serve)
        return 0
    if args._floor:
        from walk_floor import floor

        floor(args._floor)
        return 0
    if args._peer:
        peer(*args._peer)
        return 0
    cases = [c for c in args.cases.split(",") if c]
    unknown = set(cases) - set(CASES)
    if unknown:
        parser.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(PROJECT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    cache_bytecode([sys.executable] if args.no_peers else [sys.executable, args.peer_python])
    workdir = Path(tempfile.mkdtemp(prefix="bench_walk_"))
    ok = True
    try:
        root = workdir / "site"
        root.mkdir()
        with loopback_server(root) as origin:
            print(f"serving {origin}; walk command: {' '.join(walk_command('INDEX'))} > /dev/null")
            for case in cases:
                ok &= run_case(case, origin, root, args)
                if args.profile:
                    profile(f"{origin}/{case}/{INDEX_NAME}")
                shutil.rmtree(root / case, ignore_errors=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if ok else 1


def report(case: str, site: Site, rows: list[Row]) -> None:
    """The case's table: wall, URLs/s, speed against the floor, peak RSS."""
    floor_runs = rows[0].runs
    n = len(floor_runs)
    print(f"\n== {case}: {site.urls:,} URLs, {site.children + 1} files, best / median of {n} ==")
    print(
        f"{'reader':<30} {'wall s':>13} {'URLs/s (best)':>14} "
        f"{'speed vs floor':>16} {'cpu s':>6} {'cpu vs floor':>12} {'peak RSS MB':>12}"
    )
    floor_cpu = min(r.cpu for r in floor_runs)
    floor_best = min(r.wall for r in floor_runs)
    for row in rows:
        walls = [r.wall for r in row.runs]
        paired = [f.wall / r.wall for f, r in zip(floor_runs, row.runs, strict=True)]
        speed_best = floor_best / min(walls)
        failed = any(r.code != 0 for r in row.runs) or any(u != site.urls for u in row.urls)
        speed_median = statistics.median(paired)
        cpu = min(r.cpu for r in row.runs)
        print(
            f"{row.name:<30} {min(walls):>6.2f} / {statistics.median(walls):<5.2f}"
            f" {site.urls / min(walls):>14,.0f} {speed_best:>7.2f} / {speed_median:<6.2f}"
            f" {cpu:>6.2f} {floor_cpu / cpu:>12.2f}"
            f" {max(r.rss_mb for r in row.runs):>12.1f}"
            + ("  (FAILED or miscounted)" if failed else "")
        )
    walk = rows[1].runs
    speed = floor_best / min(r.wall for r in walk)
    rss = max(r.rss_mb for r in walk)
    print(
        f"auditor: speed {speed:.2f} (target >= {TARGET_RATIO}, aim 2.0): "
        f"{'ok' if speed >= TARGET_RATIO else 'MISSED'}; peak RSS {rss:.1f} MB "
        f"(target <= {TARGET_RSS_MB:.0f}): {'ok' if rss <= TARGET_RSS_MB else 'MISSED'}; "
        f"cpu s (best) floor {min(r.cpu for r in floor_runs):.2f}, "
        f"walk {min(r.cpu for r in walk):.2f}"
    )


if __name__ == "__main__":
    sys.exit(main())
