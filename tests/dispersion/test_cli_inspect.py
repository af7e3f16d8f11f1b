"""`auditor inspect`: the table, the summary, the JSON contract and the exit codes."""

from __future__ import annotations

import json

import pytest

from auditor.cli import main


def test_table_has_a_row_per_sub_sitemap_and_one_for_the_site(site, capsys):
    assert main(["inspect", site("disp-mixed").origin]) == 0
    out = capsys.readouterr().out.splitlines()

    assert out[0].split() == [
        "sub-sitemap",
        "URLs",
        "dated",
        "distinct",
        "top",
        "value",
        "top",
        "share",
        "flags",
    ]
    rows = {line.split()[0]: line for line in out[2:-1]}
    assert set(rows) == {"/products.xml", "/blog.xml", "(all)"}
    assert "shared-timestamp, generation-time" in rows["/products.xml"]
    assert rows["/blog.xml"].rstrip().endswith("-")
    assert " 60 " in rows["/products.xml"] and "100%" in rows["/products.xml"]
    assert out[-1].startswith(
        site("disp-mixed").origin + ": 100 URLs in 3 sitemap files, 100% with lastmod"
    )


def test_json_follows_the_contract(site, capsys):
    server = site("disp-mixed")
    assert main(["inspect", server.origin, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)

    assert {"site", "inventory", "dispersion", "flags", "segments"} <= set(result)
    assert result["site"] == server.origin
    assert result["inventory"] == {
        "sitemaps": 3,
        "unreadable": 0,
        "urls": 100,
        "with_lastmod": 100,
        "problems": 0,
    }
    assert result["flags"] == ["shared-timestamp", "generation-time"]
    segments = {s["sitemap"]: s for s in result["segments"]}
    products = segments[server.url("/products.xml")]
    assert (products["urls"], products["flags"]) == (60, ["shared-timestamp", "generation-time"])
    assert segments[server.url("/blog.xml")]["flags"] == []
    detail = products["flag_details"][1]
    assert (detail["code"], detail["figure"], detail["threshold"]) == ("generation-time", 1.0, 0.5)
    figures = result["dispersion"]
    assert figures["urls"] == 100 and figures["top_share"] == 0.6
    assert 0.0 <= figures["entropy"] <= 1.0


def test_no_readable_sitemap_exits_1(serve, capsys):
    server = serve()  # 404 for robots.txt and /sitemap.xml
    code = main(["inspect", server.origin, "--json"])
    captured = capsys.readouterr()

    assert code == 1
    assert json.loads(captured.out)["inventory"]["sitemaps"] == 0
    assert "no sitemap could be read" in captured.err


def test_a_local_file(capsys):
    assert main(["inspect", "fixtures/demo/shop-sitemap.xml"]) == 0
    assert "fixtures/demo/shop-sitemap.xml: " in capsys.readouterr().out


def test_usage_errors_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["inspect", "x", "--timeout", "0"])
    assert exited.value.code == 2
    assert main(["inspect", "x", "--previous", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read entries" in capsys.readouterr().err


def test_problems_are_listed_under_the_table(site, capsys):
    assert main(["inspect", site("fmt-errors").origin]) == 0
    out = capsys.readouterr().out

    assert "\nproblems:\n  http-error: /missing.xml: HTTP 404" in out
