"""The commands ``auditor --help`` lists, in its order: each one's line there and the
group that adds it to the parser (a group's module adds all its commands at once).

``auditor --help`` is built from this table alone, without importing any command's
module; ``auditor NAME ...`` builds the parser of NAME's group alone. Each module takes
its commands' lines from here, so that the two parsers say the same.

Touches: nothing.
"""

from __future__ import annotations

__all__ = ["COMMANDS", "line"]

#: Each command: (its group, its line in ``auditor --help``), in the order listed there.
COMMANDS: dict[str, tuple[str, str]] = {
    "walk": ("walk", "list every URL of a site's sitemaps with its lastmod"),
    "inspect": ("inspect", "first look at a site's lastmod values, without fetching a page"),
    "page": ("page", "what one page says about its own changes (dates, fingerprints)"),
    "audit": ("audit", "audit sites: walk, analyse, sample pages, score against history, save"),
    "reverify": ("audit", "re-audit the sites in history that are due"),
    "report": ("audit", "write sites' HTML reports (and the fleet index) from the history"),
    "export": (
        "audit",
        "export the history (sites, runs, sub-sitemap verdicts, pages) for notebooks",
    ),
    "demo": (
        "audit",
        "audit embedded demo sites on 127.0.0.1 twice and write their reports "
        "(--serve: keep them up to practise on)",
    ),
    "history": ("audit", "the audits kept in the history"),
    "changed": ("audit", "the recrawl list since a moment, from a site's latest audit"),
    "plan": ("plan", "what the crawler should fetch and when, within a budget per host"),
    "crawled": (
        "plan",
        "record what the crawler fetched: its last fetches, and evidence for verdicts",
    ),
    "coverage": (
        "coverage",
        "the sitemaps' URLs against what was crawled: missing, orphans, non-indexable",
    ),
    "db": ("db", "the history database itself: copy a whole history, bring it up to date"),
    "serve": (
        "serve",
        "the history in a browser and over HTTP (pages, a JSON API, trust look-ups)",
    ),
}


def line(command: str) -> str:
    """``command``'s line in ``auditor --help``."""
    return COMMANDS[command][1]
