"""Write the dispersion fixture sites under fixtures/sites/disp-* (run by hand, seeded).

    python3 tests/dispersion/make_fixtures.py

Each site shows one lastmod behaviour; tests/dispersion/test_patterns.py says which
flags each must raise and, as much, which it must not. ``{{now}}`` and ``{{today}}``
fields are filled by the loopback server at request time (tests/loopback.py).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

SITES = Path(__file__).resolve().parents[2] / "fixtures" / "sites"
RUNS = Path(__file__).resolve().parents[2] / "fixtures" / "dispersion"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
NEWS_NS = 'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
BASE = datetime(2026, 11, 1, tzinfo=UTC)


def urlset(
    items: Iterable[tuple[str, str | None]], extra: str = "", origin: str = "{{origin}}"
) -> str:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<urlset {NS}{extra}>"]
    for path, lastmod in items:
        tag = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
        lines.append(f"  <url><loc>{origin}{path}</loc>{tag}</url>")
    lines.append("</urlset>\n")
    return "\n".join(lines)


def index(children: Iterable[str]) -> str:
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', f"<sitemapindex {NS}>"]
    lines += [f"  <sitemap><loc>{{{{origin}}}}{c}</loc></sitemap>" for c in children]
    lines.append("</sitemapindex>\n")
    return "\n".join(lines)


def numbered(values: Iterable[str]) -> list[tuple[str, str]]:
    return [(f"/p/{i}", v) for i, v in enumerate(values)]


def one_file(items: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    return {"sitemap.xml": urlset(items)}


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def spread(rng: random.Random, count: int, days: int, *, date_only: bool = False) -> list[str]:
    """Distinct moments spread over the ``days`` before BASE."""
    seconds = rng.sample(range(days * 86_400), count)
    moments = [BASE - timedelta(seconds=s) for s in seconds]
    return [m.strftime("%Y-%m-%d") if date_only else iso(m) for m in moments]


def write_site(
    name: str, files: dict[str, str], sitemaps: Iterable[str] = ("/sitemap.xml",)
) -> None:
    folder = SITES / name
    folder.mkdir(parents=True, exist_ok=True)
    robots = "User-agent: *\nAllow: /\n\n" + "".join(
        f"Sitemap: {{{{origin}}}}{s}\n" for s in sitemaps
    )
    (folder / "robots.txt").write_text(robots)
    for path, text in files.items():
        (folder / path.lstrip("/")).write_text(text)


def main() -> None:
    rng = random.Random(20261129)
    # Generation time: every entry carries one of two stamps a second apart, at request time.
    stamps = ["{{now}}", "{{now-1s}}"]
    write_site(
        "disp-generation", {"sitemap.xml": urlset((f"/p/{i}", stamps[i % 2]) for i in range(40))}
    )
    # Build jitter: a static build stamping each entry with its own millisecond clock.
    jitter = [f"2025-08-16T06:45:2{1 + i // 30}.{(i * 37) % 1000:03d}Z" for i in range(60)]
    write_site(
        "disp-build-jitter", {"sitemap.xml": urlset((f"/p/{i}", j) for i, j in enumerate(jitter))}
    )
    # Date-only generation time: every entry carries the day of the request.
    write_site("disp-date-generation", one_file((f"/p/{i}", "{{today}}") for i in range(30)))
    # A plain sitemap of the last three days' articles, date-only: recent, not generated.
    recent = ["{{today}}"] * 12 + ["{{today-1d}}"] * 10 + ["{{today-2d}}"] * 8
    write_site("disp-recent-days", one_file(numbered(recent)))
    # Absent: no lastmod at all.
    write_site("disp-absent", {"sitemap.xml": urlset((f"/p/{i}", None) for i in range(30))})
    # Accurate and widely spread: timed posts over 3 years, date-only pages over 5 years.
    posts = spread(rng, 150, 3 * 365)
    pages = spread(rng, 50, 5 * 365, date_only=True)
    write_site(
        "disp-accurate",
        {
            "sitemap_index.xml": index(["/posts.xml", "/pages.xml"]),
            "posts.xml": urlset((f"/posts/{i}", v) for i, v in enumerate(posts)),
            "pages.xml": urlset((f"/pages/{i}", v) for i, v in enumerate(pages)),
        },
        ["/sitemap_index.xml"],
    )
    # A small date-only site where several pages truly changed the same day.
    days = ["2026-10-14"] * 4 + spread(rng, 8, 400, date_only=True)
    write_site(
        "disp-date-only", {"sitemap.xml": urlset((f"/p/{i}", d) for i, d in enumerate(days))}
    )
    # A news sitemap: today's and yesterday's items, date-only, as many publishers write them.
    news_items = "\n".join(
        f"  <url><loc>{{{{origin}}}}/news/{i}</loc>"
        f"<lastmod>{'{{today}}' if i % 3 else '{{today-1d}}'}"
        f"</lastmod><news:news><news:publication><news:name>Daily</news:name>"
        f"<news:language>en</news:language></news:publication><news:publication_date>"
        f"{{{{now-{i * 3000}s}}}}</news:publication_date><news:title>Item {i}</news:title>"
        f"</news:news></url>"
        for i in range(30)
    )
    prolog = '<?xml version="1.0" encoding="UTF-8"?>'
    news = f"{prolog}\n<urlset {NS} {NEWS_NS}>\n{news_items}\n</urlset>\n"
    write_site("disp-news", {"news-sitemap.xml": news}, ["/news-sitemap.xml"])
    # An old bulk migration: 200 pages imported on one day, 100 edited since, each on its own.
    migrated = ["2019-03-01T00:00:00Z"] * 200 + spread(rng, 100, 2 * 365)
    write_site(
        "disp-migration", {"sitemap.xml": urlset((f"/p/{i}", v) for i, v in enumerate(migrated))}
    )
    # Future dates: a fifth of the entries in 2099.
    future = spread(rng, 40, 365) + ["2099-01-01T00:00:00Z"] * 10
    write_site("disp-future", {"sitemap.xml": urlset((f"/p/{i}", v) for i, v in enumerate(future))})
    # A tiny sitemap: five pages written at the same moment, which proves nothing.
    write_site("disp-tiny", {"sitemap.xml": urlset((f"/p/{i}", "{{now}}") for i in range(5))})
    # Unreadable and implausible dates among good ones.
    bad = [
        *spread(rng, 35, 365),
        "15/10/2026",
        "yesterday",
        "2026-13-01",
        "1970-01-01",
        "1970-01-01T00:00:00Z",
    ]
    write_site("disp-invalid", {"sitemap.xml": urlset((f"/p/{i}", v) for i, v in enumerate(bad))})
    # One generating sub-sitemap beside an accurate one.
    write_site(
        "disp-mixed",
        {
            "sitemap_index.xml": index(["/products.xml", "/blog.xml"]),
            "products.xml": urlset((f"/products/{i}", "{{now}}") for i in range(60)),
            "blog.xml": urlset((f"/blog/{i}", v) for i, v in enumerate(spread(rng, 40, 700))),
        },
        ["/sitemap_index.xml"],
    )
    write_runs(rng)


def write_runs(rng: random.Random) -> None:
    """Two walks of one site: before, and after either a regeneration or real edits."""
    RUNS.mkdir(parents=True, exist_ok=True)
    origin = "https://runs.example"
    before = spread(rng, 50, 700)
    regenerated = ["2026-11-20T04:00:00Z"] * 25 + ["2026-11-20T04:00:01Z"] * 25
    edited = list(before)
    for i, moment in zip(rng.sample(range(50), 6), spread(rng, 6, 10), strict=True):
        edited[i] = moment
    for name, values in (
        ("before", before),
        ("after-regenerated", regenerated),
        ("after-edited", edited),
    ):
        text = urlset(((f"/p/{i}", v) for i, v in enumerate(values)), origin=origin)
        (RUNS / f"{name}.xml").write_text(text)


if __name__ == "__main__":
    main()
