"""A crawl log taken back, through the command line (SQLite and PostgreSQL): each
``auditor crawled`` is a batch with an id; ``auditor crawled --take-back ID`` leaves the
history as one that never saw it, table by table, and the next audit's figures the same.

Two histories audit one loopback site side by side: ``A`` is fed a batch that ``B`` never
sees, then takes it back."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from auditor.cli import main
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.history import History

#: The columns of each crawl table left out of the comparison: the moment a command ran.
_CLOCK_COLUMNS = {"crawl_log": {"recorded_at"}, "crawl_batches": {"recorded_at"}}


def _audit(db: str, origin: str, capsys, sample: int = 12) -> dict[str, Any]:
    args = ["audit", origin, "--db", db, "--delay", "0", "--sample", str(sample), "--json"]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def _log(tmp_path: Path, name: str, origin: str, site: SimulatedSite, at: datetime) -> str:
    """A JSON Lines fetch of every page at ``at``, hashed by its version."""
    rows = [
        {"url": origin + p, "fetched_at": at.isoformat(), "status": 200,
         "hash": f"v{site.pages[p].version}"}
        for p in sorted(site.pages)
    ]  # fmt: skip
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _crawled(db: str, source: str, capsys) -> dict[str, Any]:
    assert main(["crawled", "--from", source, "--db", db, "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def _table(db: str, name: str) -> list[tuple[Any, ...]]:
    """Every row of a table, sorted, its clock columns left out."""
    with History.open(db) as history:
        columns = [c for c in history._db.columns(name) if c not in _CLOCK_COLUMNS.get(name, ())]
        rows = history._db.rows(f"SELECT {', '.join(columns)} FROM {name}")
    return sorted((tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows),
                  key=repr)  # fmt: skip


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    """What an audit concluded and on what: its verdict, change figures, each segment's
    verdict and crawl counts, the batches it weighed and what a plan on it saves. Not the
    pages whose template alone changed: the demo site's boilerplate is drawn anew on each
    request, so two audits' fetches of one page differ there by chance."""
    keys = ("sitemap", "verdict", "compared", "changed", "crawled", "crawled_earlier")
    changes = {k: v for k, v in result["changes"].items() if k != "template_only"}
    return {
        "verdict": result["verdict"],
        "reasons": [r["code"] for r in result["reasons"]],
        "changes": changes,
        "segments": [tuple(s[k] for k in keys) for s in result["segments"]],
        "crawl_batches": result["crawl_batches"],
        "savings": result["savings"],
    }


def _fed_twice(a: str, b: str, site: SimulatedSite, origin: str, capsys, tmp_path) -> int:
    """Both histories audited and fed one crawl; then the site changes and ``a`` alone is
    fed a second crawl: the batch ``b`` never sees, its id."""
    for db in (a, b):
        assert _audit(db, origin, capsys)["crawl_batches"] == []
    first = _log(tmp_path, "one.jsonl", origin, site, datetime.now(UTC))
    assert [_crawled(db, first, capsys)["batch"] for db in (a, b)] == [1, 1]
    changed = site.tick()
    second = _crawled(a, _log(tmp_path, "two.jsonl", origin, site, datetime.now(UTC)), capsys)
    assert (second["batch"], second["changed"]) == (2, len(changed)) and changed
    return int(second["batch"])


def _same_crawl_tables(a: str, b: str, taken: int) -> None:
    for table in ("crawl_log", "crawl_state", "crawl_replaced"):
        assert _table(a, table) == _table(b, table), table
    assert [row for row in _table(a, "crawl_batches") if row[0] != taken] == _table(
        b, "crawl_batches"
    )


def test_a_batch_taken_back_leaves_the_history_as_one_that_never_saw_it(
    db_url, backend, new_db, capsys, tmp_path
):
    a, b = db_url, new_db(backend)
    site = SimulatedSite("taken", {"pages": BEHAVIOURS["frozen"]}, 40, seed=4)
    with SiteServer(site) as server:
        origin = server.origin
        taken = _fed_twice(a, b, site, origin, capsys, tmp_path)
        assert main(["crawled", "--take-back", str(taken), "--db", a, "--json"]) == 0
        undone = json.loads(capsys.readouterr().out)
        assert undone == {"taken_back": [taken], "fetches": 40, "restored": 40, "removed": 0}
        _same_crawl_tables(a, b, taken)
        after_a, after_b = _audit(a, origin, capsys), _audit(b, origin, capsys)

    assert _figures(after_a) == _figures(after_b)
    assert after_a["changes"]["compared"] > 0 and after_a["crawl_batches"] == []


def test_runs_that_weighed_a_batch_taken_back_say_so_and_the_next_one_does_not_weigh_it(
    db_url, backend, new_db, capsys, tmp_path
):
    a, b = db_url, new_db(backend)
    site = SimulatedSite("cited", {"pages": BEHAVIOURS["frozen"]}, 40, seed=4)
    with SiteServer(site) as server:
        origin = server.origin
        taken = _fed_twice(a, b, site, origin, capsys, tmp_path)
        fed, unfed = _audit(a, origin, capsys), _audit(b, origin, capsys)
        assert fed["crawl_batches"] == [taken] and unfed["crawl_batches"] == []
        crawled = [s["crawled"] for s in fed["segments"]]
        assert crawled[0]["compared"] == 40 and crawled[0]["changed"] > 0
        assert main(["report", origin, "--db", a, "--out", str(tmp_path / "before")]) == 0
        said = next((tmp_path / "before").glob("*/index.html")).read_text()
        assert f"auditor crawled</code> as batch {taken}." in said
        assert main(["crawled", "--take-back", str(taken), "--db", a]) == 0
        assert f"took back batch {taken}: 40 fetches removed" in capsys.readouterr().out
        assert main(["report", origin, "--db", a, "--out", str(tmp_path / "taken")]) == 0
        said = next((tmp_path / "taken").glob("*/index.html")).read_text()
        assert f"as batch {taken} (taken back). Taken back since: the next audit" in said
        capsys.readouterr()
        _same_crawl_tables(a, b, taken)
        after_a, after_b = _audit(a, origin, capsys), _audit(b, origin, capsys)
        assert main(["history", origin, "--db", a, "--json"]) == 0
        runs = json.loads(capsys.readouterr().out)
        assert main(["history", origin, "--db", a]) == 0
        table = capsys.readouterr().out
        assert main(["report", origin, "--db", a, "--out", str(tmp_path / "reports")]) == 0
    html = next((tmp_path / "reports").glob("*/index.html")).read_text()

    # the runs made while the batch was in the history keep their own samples, so only
    # the crawl's share of the next audit is compared: none now, in both
    assert after_a["crawl_batches"] == after_b["crawl_batches"] == []
    for key in ("crawled", "crawled_earlier"):
        assert [s[key] for s in after_a["segments"]] == [s[key] for s in after_b["segments"]]
    assert [r["crawl_batches"] for r in runs] == [[], [taken], []]
    assert [r["crawl_batches_taken_back"] for r in runs] == [[], [taken], []]
    assert f"{taken} (taken back)" in table
    assert f"<td>batch {taken} (taken back)</td>" in html
    assert "this verdict weighed" not in html  # the latest run weighed none


def test_a_batch_a_later_one_built_on_is_refused_unless_both_go(db_url, capsys, tmp_path):
    site = SimulatedSite("chain", {"pages": BEHAVIOURS["accurate-jsonld"]}, 6, seed=2)
    with SiteServer(site) as server:
        origin = server.origin
        _audit(db_url, origin, capsys, sample=6)
        one = _crawled(db_url, _log(tmp_path, "1.jsonl", origin, site, datetime.now(UTC)), capsys)
        site.tick()
        two = _crawled(db_url, _log(tmp_path, "2.jsonl", origin, site, datetime.now(UTC)), capsys)
        before = _table(db_url, "crawl_state")

        assert main(["crawled", "--take-back", str(one["batch"]), "--db", db_url]) == 2
        err = capsys.readouterr().err
        assert f"batch {two['batch']}" in err and f"--take-back {two['batch']}" in err
        assert _table(db_url, "crawl_state") == before  # nothing was touched

        both = [str(one["batch"]), str(two["batch"])]  # in any order
        assert main(["crawled", "--take-back", *both, "--db", db_url, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["taken_back"] == [2, 1]
    assert _table(db_url, "crawl_state") == _table(db_url, "crawl_log") == []


def test_the_batch_id_is_printed_and_the_batches_listed(tmp_path, capsys):
    db = str(tmp_path / "history.sqlite3")
    site = SimulatedSite("printed", {"pages": BEHAVIOURS["accurate-jsonld"]}, 4, seed=1)
    with SiteServer(site) as server:
        _audit(db, server.origin, capsys, sample=4)
        log = _log(tmp_path, "crawl.jsonl", server.origin, site, datetime.now(UTC))
        assert main(["crawled", "--from", log, "--db", db]) == 0
        out = capsys.readouterr().out
        assert "batch 1" in out and "auditor crawled --take-back 1" in out
        assert main(["crawled", "--batches", "--db", db, "--json"]) == 0
        (listed,) = json.loads(capsys.readouterr().out)
        assert main(["crawled", "--batches", "--db", db]) == 0
        table = capsys.readouterr().out

    assert listed["id"] == 1 and listed["sources"] == [log] and listed["fetches"] == 4
    assert listed["taken_back_at"] is None
    assert log in table and "1" in table


@pytest.mark.parametrize("ids", [["9"], ["1", "9"]])
def test_taking_back_an_unknown_batch_is_a_usage_error(tmp_path, capsys, ids):
    db = str(tmp_path / "history.sqlite3")
    site = SimulatedSite("unknown", {"pages": BEHAVIOURS["accurate-jsonld"]}, 4, seed=1)
    with SiteServer(site) as server:
        _audit(db, server.origin, capsys, sample=4)
        log = _log(tmp_path, "crawl.jsonl", server.origin, site, datetime.now(UTC))
        assert main(["crawled", "--from", log, "--db", db]) == 0
        capsys.readouterr()
        assert main(["crawled", "--take-back", *ids, "--db", db]) == 2
        assert "no batch 9" in capsys.readouterr().err
        assert len(_table(db, "crawl_state")) == 4  # batch 1 stays whole


def test_a_batch_taken_back_twice_is_a_usage_error(tmp_path, capsys):
    db = str(tmp_path / "history.sqlite3")
    site = SimulatedSite("twice", {"pages": BEHAVIOURS["accurate-jsonld"]}, 4, seed=1)
    with SiteServer(site) as server:
        _audit(db, server.origin, capsys, sample=4)
        log = _log(tmp_path, "crawl.jsonl", server.origin, site, datetime.now(UTC))
        assert main(["crawled", "--from", log, "--db", db]) == 0
        assert main(["crawled", "--take-back", "1", "--db", db]) == 0
        capsys.readouterr()
        assert main(["crawled", "--take-back", "1", "--db", db]) == 2
    assert "batch 1 was taken back" in capsys.readouterr().err
