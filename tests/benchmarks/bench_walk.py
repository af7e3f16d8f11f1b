"""Walker throughput and memory on 1,000,000 URLs over loopback, against a stdlib floor.

Run by hand, never by pytest:  python3 tests/benchmarks/bench_walk.py [--profile]

One run generates a sitemap index of 20 children x 50,000 URLs (one child gzip'd) into a
temporary folder, serves it from a loopback HTTP server in its own process, then measures,
each time in a fresh process:

- the floor: the C ElementTree ``iterparse`` streaming every response (index first, then
  the 20 children), picking ``loc`` and ``lastmod`` by tag and clearing the root, nothing else;
- ``auditor walk INDEX --format jsonl > /dev/null`` end to end, with its peak RSS.

It prints URLs/s (best and median of ``--repeat`` runs), the ratio walk/floor and peak RSS,
and checks once that the walk wrote exactly the expected records: a count, plus an
order-independent digest of (loc, lastmod, precision, raw, sitemap) over every line.
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
TARGET_RATIO = 0.75
TARGET_RSS_MB = 200.0
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


def generate(root: Path, origin: str, children: int, per_child: int, seed: int = 20261129) -> Site:
    """Write the index and its children into ``root``; return what a walk must produce."""
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


# -- the floor (run in its own process) -------------------------------------------------------


def floor(index_url: str) -> None:
    """Stream the index, then every child, through C iterparse; print a JSON result."""
    started = time.perf_counter()
    from xml.etree.ElementTree import iterparse

    import requests

    loc_tag, lastmod_tag = f"{{{SITEMAP_NS}}}loc", f"{{{SITEMAP_NS}}}lastmod"
    url_tag, sitemap_tag = f"{{{SITEMAP_NS}}}url", f"{{{SITEMAP_NS}}}sitemap"
    session = requests.Session()

    def stream(url: str):  # type: ignore[no-untyped-def]
        resp = session.get(url, stream=True, timeout=60)
        resp.raise_for_status()
        return resp, (gzip.GzipFile(fileobj=resp.raw) if url.endswith(".gz") else resp.raw)

    resp, source = stream(index_url)
    children = []
    events = iterparse(source, events=("start", "end"))
    _, root = next(events)
    loc = None
    for event, elem in events:
        if event == "end":
            if elem.tag == loc_tag:
                loc = elem.text
            elif elem.tag == sitemap_tag:
                children.append(loc)
                root.clear()
    resp.close()

    urls = dated = 0
    begun = time.perf_counter()
    for child in children:
        resp, source = stream(child)
        events = iterparse(source, events=("start", "end"))
        _, root = next(events)
        loc = lastmod = None
        for event, elem in events:
            if event == "end":
                tag = elem.tag
                if tag == loc_tag:
                    loc = elem.text
                elif tag == lastmod_tag:
                    lastmod = elem.text
                elif tag == url_tag:
                    urls += loc is not None
                    dated += lastmod is not None
                    loc = lastmod = None
                    root.clear()
        resp.close()
    ended = time.perf_counter()
    result = {
        "urls": urls,
        "dated": dated,
        "files": len(children) + 1,
        "parse_s": ended - begun,
        "in_process_s": ended - started,
    }
    print(json.dumps(result), flush=True)


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


def walk_command(index_url: str, *extra: str) -> list[str]:
    """The installed console script next to this interpreter, else ``python -m auditor``."""
    script = Path(sys.executable).with_name("auditor")
    if not script.is_file():
        found = shutil.which("auditor")
        script = Path(found) if found else None  # type: ignore[assignment]
    base = [str(script)] if script else [sys.executable, "-m", "auditor"]
    return [*base, "walk", index_url, "--format", "jsonl", *extra]


def floor_command(index_url: str) -> list[str]:
    return [sys.executable, __file__, "--_floor", index_url]


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


def _rate(urls: int, runs: list[Run]) -> tuple[float, float]:
    rates = [urls / r.wall for r in runs]
    return max(rates), statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=20, help="child sitemaps (default 20)")
    parser.add_argument("--per-child", type=int, default=50_000, help="URLs per child")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement")
    parser.add_argument("--profile", action="store_true", help="also profile the walk")
    parser.add_argument("--no-verify", action="store_true", help="skip the output check")
    parser.add_argument("--_serve", help=argparse.SUPPRESS)
    parser.add_argument("--_floor", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args._serve:
        serve_forever(args._serve)
        return 0
    if args._floor:
        floor(args._floor)
        return 0

    workdir = Path(tempfile.mkdtemp(prefix="bench_walk_"))
    failures: list[str] = []
    try:
        root = workdir / "site"
        root.mkdir()
        with loopback_server(root) as origin:
            started = time.perf_counter()
            site = generate(root, origin, args.children, args.per_child)
            print(
                f"generated {site.urls:,} URLs in {site.children} children + index "
                f"({site.bytes_on_disk / 1e6:.0f} MB on disk, one child gzip'd) "
                f"in {time.perf_counter() - started:.1f} s; serving {origin}"
            )
            print(f"walk command: {' '.join(walk_command(site.index_url))} > /dev/null")
            if not args.no_verify:
                failures = verify(site, workdir)
                for failure in failures:
                    print(f"VERIFY FAILED: {failure}")
            floors: list[Run] = []
            walks: list[Run] = []
            for i in range(args.repeat):  # interleaved, so drift hits both alike
                f = measure(floor_command(site.index_url), workdir / "floor.json", capture=True)
                if f.code != 0:
                    print(f"floor failed (exit {f.code}): {f.stderr.strip()[-800:]}")
                    return 1
                inner = json.loads(f.stdout)
                if inner["urls"] != site.urls:
                    print(f"floor counted {inner['urls']:,} URLs, expected {site.urls:,}")
                floors.append(f)
                w = measure(walk_command(site.index_url))
                if w.code != 0:
                    print(f"walk failed (exit {w.code}): {w.stderr.strip()[-800:]}")
                walks.append(w)
                print(
                    f"run {i + 1}: floor {f.wall:.2f} s (cpu {f.cpu:.2f} s, parse loop "
                    f"{inner['parse_s']:.2f} s, rss {f.rss_mb:.0f} MB) | "
                    f"walk {w.wall:.2f} s (cpu {w.cpu:.2f} s, rss {w.rss_mb:.0f} MB)"
                )
            if args.repeat:
                report(site, floors, walks)
            if args.profile:
                profile(site.index_url)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failures else 0


def report(site: Site, floors: list[Run], walks: list[Run]) -> None:
    floor_best, floor_median = _rate(site.urls, floors)
    walk_best, walk_median = _rate(site.urls, walks)
    ratio_best, ratio_median = walk_best / floor_best, walk_median / floor_median
    walk_rss = max(r.rss_mb for r in walks)
    floor_rss = max(r.rss_mb for r in floors)
    n = len(walks)

    def verdict(ok: bool) -> str:
        return "ok" if ok else "MISSED"

    print(f"\n== {site.urls:,} URLs, {site.children + 1} files, best / median of {n} ==")
    print(f"floor  (C iterparse) : {floor_best:>11,.0f} URLs/s  / {floor_median:>11,.0f}")
    print(f"walk   (auditor)     : {walk_best:>11,.0f} URLs/s  / {walk_median:>11,.0f}")
    print(
        f"ratio  walk/floor    : {ratio_best:>11.2f}         / {ratio_median:>11.2f}"
        f"   target >= {TARGET_RATIO} (aim 1.0): {verdict(ratio_best >= TARGET_RATIO)}"
    )
    print(
        f"walk peak RSS        : {walk_rss:>11.1f} MB (median "
        f"{statistics.median(r.rss_mb for r in walks):.1f})"
        f"   target < {TARGET_RSS_MB:.0f} MB: {verdict(walk_rss < TARGET_RSS_MB)}"
    )
    print(
        f"floor peak RSS       : {floor_rss:>11.1f} MB (median "
        f"{statistics.median(r.rss_mb for r in floors):.1f})"
    )
    print(
        f"cpu s (best)         : floor {min(r.cpu for r in floors):.2f}, "
        f"walk {min(r.cpu for r in walks):.2f}"
    )


if __name__ == "__main__":
    sys.exit(main())
