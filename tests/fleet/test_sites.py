"""The crawl list: sites from arguments, files and stdin, each site once."""

from __future__ import annotations

import io

import pytest

from auditor.errors import UsageError
from auditor.fleet.sites import crawl_list


def test_a_file_with_comments_blank_lines_and_repeats_gives_each_site_once(tmp_path):
    listing = tmp_path / "sites.txt"
    listing.write_text(
        "# our crawl list\n"
        "example.com\n"
        "\n"
        "https://example.com/   # the same site, written as a URL\n"
        "  http://127.0.0.2:8001  \n"
        "http://127.0.0.2:8002/news/sitemap.xml\n"
        "http://127.0.0.2:8002\n"
        "HTTPS://Example.COM\n",
        encoding="utf-8",
    )
    found = crawl_list(["other.org"], [str(listing)])

    assert found.sites == (
        "https://other.org",
        "https://example.com",
        "http://127.0.0.2:8001",
        "http://127.0.0.2:8002",
    )
    # a sitemap URL is walked as written, and audited as its origin's site
    assert found.targets[3] == "http://127.0.0.2:8002/news/sitemap.xml"
    assert found.duplicates == (
        "https://example.com/",
        "http://127.0.0.2:8002",
        "HTTPS://Example.COM",
    )
    assert len(found) == 4


def test_dash_reads_standard_input():
    found = crawl_list([], ["-"], stdin=io.StringIO("a.example\n# b.example\nc.example\n"))
    assert found.sites == ("https://a.example", "https://c.example")


def test_a_line_that_is_no_site_is_a_usage_error_naming_its_line(tmp_path):
    listing = tmp_path / "sites.txt"
    listing.write_text("example.com\nftp://example.org/\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"sites\.txt:2: not an http\(s\) URL"):
        crawl_list([], [str(listing)])


def test_a_missing_crawl_list_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read the crawl list"):
        crawl_list([], [str(tmp_path / "absent.txt")])
