"""Verdicts that evidence cannot carry, audited twice through ``auditor audit``.

- posts whose lastmod, ``dateModified`` and ``datePublished`` all repeat the publish
  date: their agreement says nothing of whether lastmod follows an update;
- an honest site whose re-fetched pages changed only in their template, or in a line
  (a byline under :data:`~auditor.scorer.changes.MARGINAL_SHARE` of their words): no
  verdict against lastmod on that alone.
"""

from __future__ import annotations

from pathlib import Path

from tests.audit.run import audit_json
from tests.history.conftest import backend, db_url
from tests.loopback import LoopbackServer

__all__ = ["backend", "db_url"]

POSTS = 40
EDITED = range(0, POSTS, 3)  # 14 posts rewritten between the two builds


def _post(i: int, date: str, text: str, footer: str, modified: str | None = None) -> str:
    data = (
        '<script type="application/ld+json">{"@type": "BlogPosting", "headline": "Post '
        f'{i}", "datePublished": "{date}", "dateModified": "{modified or date}"}}</script>'
    )
    crumbs = f"<a href='/posts/'>Posts</a> › Post {i}" if modified else ""
    return (
        f"<html><head><title>Post {i}</title>{data}</head><body><nav><a href='/'>Home</a>"
        f"{crumbs}</nav><main><article><h1>Post {i}</h1><p>{text}</p></article></main>"
        f"<footer>{footer}</footer></body></html>"
    )


def build(
    root: Path, *, edited: bool, footer: str = "Built with Hugo", moved: range = range(0)
) -> None:
    """A blog whose every date is the publish date; ``edited``: some posts rewritten;
    ``moved``: posts whose page frame gained breadcrumbs, their lastmod (and dateModified)
    moved with the commit, their words not."""
    urls = []
    for i in range(POSTS):
        date = f"2026-0{1 + i % 9}-{1 + i % 28:02d}T09:00:00Z"
        text = f"Post {i} says what it said the day it was published, at some length."
        if edited and i in EDITED:
            text = f"Post {i} was rewritten since: a new argument, and a new conclusion."
        modified = "2026-11-20T09:00:00Z" if i in moved else None
        path = f"/posts/post-{i}.html"
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_post(i, date, text, footer, modified))
        lastmod = modified or date
        urls.append(f"<url><loc>{{{{origin}}}}{path}</loc><lastmod>{lastmod}</lastmod></url>")
    sitemap = (
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{"".join(urls)}</urlset>'
    )
    (root / "sitemap.xml").write_text(sitemap)


def _audit(origin: str, db: str) -> dict:
    return audit_json(origin, db, 40)


def _twice(tmp_path: Path, db: str, second: Path) -> tuple[dict, dict]:
    with LoopbackServer(root=tmp_path / "v1") as server:
        first = _audit(server.origin, db)
        server.root = second
        return first, _audit(server.origin, db)


def test_dates_that_repeat_the_publish_date_prove_nothing(tmp_path, db_url):
    build(tmp_path / "v1", edited=False)
    build(tmp_path / "v2", edited=True)
    first, second = _twice(tmp_path, db_url, tmp_path / "v2")

    assert first["verdict"] == "inconclusive"  # every date agrees: and proves nothing
    (why,) = [r for r in first["reasons"] if r["code"] == "unverified"]
    assert "publication date" in why["detail"] and "changes observed" in why["detail"]
    assert second["verdict"] == "untrusted"
    assert "changed-without-lastmod" in {r["code"] for r in second["reasons"]}


def test_template_churn_alone_condemns_nothing(tmp_path, db_url):
    build(tmp_path / "v1", edited=False)
    build(tmp_path / "v2", edited=False, footer="Built with Hugo 0.140, theme updated")
    _, second = _twice(tmp_path, db_url, tmp_path / "v2")

    assert second["verdict"] != "untrusted"
    assert second["changes"]["changed"] == 0 and second["changes"]["template_only"] > 0


def test_a_page_whose_frame_alone_moved_is_no_evidence_either_way(tmp_path, db_url):
    # four pages' lastmod moved with a commit that touched their breadcrumbs only
    build(tmp_path / "v1", edited=False)
    build(tmp_path / "v2", edited=False, moved=range(4))
    _, second = _twice(tmp_path, db_url, tmp_path / "v2")

    assert second["verdict"] != "untrusted"
    assert second["changes"]["ambiguous"] == 4
    assert "lastmod-without-change" not in {r["code"] for r in second["reasons"]}


def _essay(i: int, byline: str) -> str:
    """A 1,200-word essay dated by its own update (published earlier), with a byline."""
    paragraphs = "".join(
        "<p>" + " ".join(f"w{i}x{k}y{n}" for n in range(60)) + ".</p>" for k in range(20)
    )
    date = f"2026-0{1 + i % 9}-{1 + i % 28:02d}T09:00:00Z"
    data = (
        '<script type="application/ld+json">{"@type": "BlogPosting", '
        f'"datePublished": "2025-01-01T09:00:00Z", "dateModified": "{date}"}}</script>'
    )
    return (
        f"<html><head><title>Essay {i}</title>{data}</head><body><main><article>"
        f"<h1>Essay {i}</h1><p>{byline}</p>{paragraphs}</article></main></body></html>"
    )


def build_essays(root: Path, retouched: range = range(0)) -> None:
    """An honest blog of long essays; ``retouched``: essays whose byline was corrected,
    lastmod left as it was."""
    urls = []
    for i in range(POSTS):
        byline = "Filed under essays by Jane" + (" Doe, editor" if i in retouched else "")
        (root / "essays").mkdir(parents=True, exist_ok=True)
        (root / "essays" / f"e-{i}.html").write_text(_essay(i, byline))
        date = f"2026-0{1 + i % 9}-{1 + i % 28:02d}T09:00:00Z"
        urls.append(
            f"<url><loc>{{{{origin}}}}/essays/e-{i}.html</loc><lastmod>{date}</lastmod></url>"
        )
    (root / "sitemap.xml").write_text(
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{"".join(urls)}</urlset>'
    )


def test_a_marginal_change_lastmod_did_not_follow_condemns_nothing(tmp_path, db_url):
    build_essays(tmp_path / "v1")
    build_essays(tmp_path / "v2", retouched=range(0, POSTS, 4))  # 10 bylines corrected
    first, second = _twice(tmp_path, db_url, tmp_path / "v2")

    assert first["verdict"] == "trusted"
    assert second["verdict"] != "untrusted"
    assert second["changes"]["ambiguous"] > 0 and second["changes"]["changed"] == 0
    assert "changed-without-lastmod" not in {r["code"] for r in second["reasons"]}
