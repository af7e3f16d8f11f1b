"""A Hexo-like blog of one sitemap split into groups, built as files for a loopback server,
and a crawl log of its pages as the team's crawler would write it.

Posts (``/YYYY/MM/DD/post-N.html``) carry their own date as lastmod and as their JSON-LD
``dateModified``; the home page, pagination, tag and category pages carry the build moment
(hexo-generator-sitemap's behaviour, docs/verdicts.md "Groups within a sub-sitemap").
Build 1 is a later deploy: every list page is re-stamped with the new build moment, its
content unchanged, and some posts were edited silently (content changed, lastmod and
``dateModified`` kept: the CMS forgot to move them).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

BUILDS = ("2026-06-01T10:00:00Z", "2026-11-02T10:00:00Z")
WORDS = ("kettle", "river", "stone", "garden", "window", "harbour", "meadow", "lantern")


@dataclass(frozen=True)
class Blog:
    """How many pages of each kind, and which posts build 1 edits silently."""

    posts: int = 1200
    tags: int = 200
    categories: int = 60
    pages: int = 39  # pagination, /page/2/ onwards
    edited_every: int = 3  # one post in three is edited in build 1

    def post_path(self, i: int) -> str:
        """Post ``i``'s path (a date path)."""
        return f"/2026/0{1 + i % 5}/{1 + i % 27:02d}/post-{i}.html"

    def list_paths(self) -> list[str]:
        """The home page, pagination, tag and category pages."""
        paths = ["/index.html", *(f"/page/{n}/index.html" for n in range(2, 2 + self.pages))]
        paths += [f"/tags/tag-{j}.html" for j in range(self.tags)]
        return paths + [f"/categories/cat-{j}.html" for j in range(self.categories)]

    def edited(self) -> set[str]:
        """The paths of the posts build 1 edits."""
        return {self.post_path(i) for i in range(0, self.posts, self.edited_every)}

    def build(self, root: Path, build: int, stamp: str | None = None) -> None:
        """Write build 0 or 1 of the blog under ``root``: its pages and its sitemap, the
        list pages stamped with the build's moment (``stamp``: another)."""
        urls = []
        edited = self.edited() if build else set()
        for i in range(self.posts):
            path = self.post_path(i)
            date = f"2026-0{1 + i % 5}-{1 + i % 27:02d}T08:00:00Z"
            words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(40))
            text = f"Post {i} tells a story of its own: {words}."
            if path in edited:
                text += " It was edited with a paragraph about the harbour at dawn."
            _write(root, path, _page(f"Post {i}", text, date))
            urls.append((path, date))
        for path in self.list_paths():
            _write(root, path, _page(path, f"A list of posts under {path}, as it always was."))
            urls.append((path, stamp or BUILDS[build]))
        body = "".join(
            f"<url><loc>{{{{origin}}}}{path}</loc><lastmod>{date}</lastmod></url>"
            for path, date in urls
        )
        sitemap = f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'
        _write(root, "/sitemap.xml", sitemap)

    def crawl_log(self, root: Path, origin: str, at: datetime) -> list[str]:
        """One JSON Lines fetch of every page of the build under ``root``, made ``at``: the
        crawler's SHA-256 of each body as it was served."""
        lines = []
        for path in [self.post_path(i) for i in range(self.posts)] + self.list_paths():
            digest = hashlib.sha256((root / path.lstrip("/")).read_bytes()).hexdigest()
            row = {"url": origin + path, "fetched_at": at.isoformat(), "status": 200,
                   "sha256": digest}  # fmt: skip
            lines.append(json.dumps(row))
        return lines


def _page(title: str, text: str, date: str | None = None) -> str:
    data = ""
    if date is not None:  # a post: its dates in JSON-LD
        data = (
            '<script type="application/ld+json">{"@type": "BlogPosting", '
            f'"headline": "{title}", "datePublished": "2025-12-01T08:00:00Z", '
            f'"dateModified": "{date}"}}</script>'
        )
    return (
        f"<html><head><title>{title}</title>{data}</head><body><nav><a href='/'>Home</a>"
        f"</nav><main><article><h1>{title}</h1><p>{text}</p></article></main>"
        "<footer>Powered by Hexo</footer></body></html>"
    )


def _write(root: Path, path: str, text: str) -> None:
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
