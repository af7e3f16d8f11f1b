"""The published contract's JSON Schemas (auditor/schemas) hold for what auditor writes.

Real audits on loopback (simulated sites run twice, a sitemap that mixes behaviours, a news
sitemap, the formats fixture, a site with no sitemap) give AuditResults; ``auditor walk``
over the fixture sites (sitemap extensions included) gives walk lines; ``auditor plan``
after the audits gives plan lines. Every one is validated; a wrong value is refused.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, ValidationError

from auditor.cli import main
from auditor.crawl.record import record_fetches
from auditor.demo.server import SiteServer
from auditor.demo.site import BEHAVIOURS, SimulatedSite
from auditor.dispersion.generation import ANCHORS
from auditor.history import History
from auditor.models import PRECISIONS, PROBLEM_CODES
from auditor.planner.schedule import REASONS as PLAN_REASONS
from auditor.schemas import SCHEMA_NAMES, schema, validate
from auditor.scorer.result import NOTE_CODES, REASON_CODES, VERDICTS
from tests.audit.run import audit_json
from tests.audit.test_mixed_sitemap import build_site
from tests.crawl.sites import crawl
from tests.loopback import LoopbackServer

#: Small simulated sites, audited twice with a change in between: one verdict each.
BEHAVIOURS_AUDITED = ("accurate-jsonld", "generation-time", "no-lastmod", "bumping")
SAMPLE = 8
#: The walk's extension keys, each only where an entry has it.
EXTENSION_KEYS = {
    "news_publication_date",
    "news_title",
    "news_language",
    "hreflang_count",
    "hreflang",
    "image_count",
    "first_image",
    "video_count",
}


@dataclass
class Outputs:
    """What the module's audits and plans printed, decoded."""

    results: list[dict[str, Any]] = field(default_factory=list)
    plans: list[dict[str, Any]] = field(default_factory=list)


def _plan(origin: str, db: str) -> list[dict[str, Any]]:
    """``auditor plan ORIGIN --db DB --format jsonl``, its lines decoded."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["plan", origin, "--db", db, "--format", "jsonl", "--quiet"]) == 0
    return [json.loads(line) for line in printed.getvalue().splitlines()]


def _audit_twice(origin: str, db: str, between: Callable[[], object]) -> list[dict[str, Any]]:
    first = audit_json(origin, db, SAMPLE)
    between()
    return [first, audit_json(origin, db, SAMPLE)]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outputs]:
    """Every audit of the module, run once: results and the plans made after them."""
    root = tmp_path_factory.mktemp("schemas")
    db = str(root / "history.sqlite3")
    out = Outputs()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)  # the reports land here
        for seed, behaviour in enumerate(BEHAVIOURS_AUDITED):
            site = SimulatedSite(behaviour, {"pages": BEHAVIOURS[behaviour]}, 20, seed=seed)
            with SiteServer(site) as server:
                out.results += _audit_twice(server.origin, db, site.tick)
                out.plans += _plan(server.origin, db)
        sections = {
            "products": BEHAVIOURS["generation-time"],
            "blog": BEHAVIOURS["accurate-jsonld"],
        }
        mixed = SimulatedSite("mixed", sections, 15, seed=9)
        with SiteServer(mixed) as server:
            out.results += _audit_twice(server.origin, db, mixed.tick)
            out.plans += _plan(server.origin, db)

        for build in (0, 1):  # one sitemap of two behaviours: its groups are segments
            build_site(root / f"blog-v{build + 1}", build)
        with LoopbackServer(root=root / "blog-v1") as server:

            def crawled_then_rebuilt() -> None:  # the crawler's fetches: a plan by rate
                with History.open(db) as history:
                    entries = history.latest_entries(server.origin)
                    paths = [loc.removeprefix(server.origin) for loc in entries["loc"]]
                    record_fetches(history, crawl(server.origin, paths, datetime.now(UTC)))
                server.root = root / "blog-v2"

            out.results += _audit_twice(server.origin, db, crawled_then_rebuilt)
            out.plans += _plan(server.origin, db)

        fixtures = Path(__file__).resolve().parent.parent / "fixtures" / "sites"
        with LoopbackServer(root=fixtures / "news-generation") as server:  # a note, extensions
            out.results.append(audit_json(server.url("/news-sitemap.xml"), db, SAMPLE))
        with LoopbackServer(root=fixtures / "fmt-formats") as server:  # problems, extensions
            out.results.append(audit_json(server.origin, db, SAMPLE))
            out.plans += _plan(server.origin, db)
        with LoopbackServer() as server:  # nothing to read: sitemap-unreadable
            out.results.append(audit_json(server.origin, db, SAMPLE))
    yield out


def _walk_lines(capsys: pytest.CaptureFixture[str], target: str) -> list[dict[str, Any]]:
    """``auditor walk TARGET --format jsonl``, its lines decoded."""
    assert main(["walk", target, "--format", "jsonl", "--quiet"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.fixture
def walked(site: Callable[[str], LoopbackServer], capsys: pytest.CaptureFixture[str]) -> list:
    """Walk lines of the fixture sites: every format, an index, invalid and short lastmods,
    news, hreflang, image and video extensions."""
    formats = site("fmt-formats")
    lines = _walk_lines(capsys, formats.origin)  # robots.txt names every format's file
    lines += _walk_lines(capsys, formats.url("/lastmods.xml"))
    for folder in ("basic", "fmt-invalid-lastmod", "fmt-dupes", "disp-news"):
        lines += _walk_lines(capsys, site(folder).origin)
    return lines


# -- the schemas themselves --------------------------------------------------------------------


def _objects(node: Any) -> Iterator[dict[str, Any]]:
    """Every subschema of ``node`` that describes an object's properties."""
    if isinstance(node, dict):
        if "properties" in node:
            yield node
        for value in node.values():
            yield from _objects(value)
    elif isinstance(node, list):
        for value in node:
            yield from _objects(value)


def _properties(node: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    for found in _objects(node):
        yield from found["properties"].items()


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_each_schema_is_a_valid_draft_2020_12_schema(name):
    loaded = schema(name)
    Draft202012Validator.check_schema(loaded)
    assert loaded["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert loaded["$id"] == f"{name}.json"  # relative: no made-up host
    assert schema(f"{name}.json") == loaded


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_every_object_allows_keys_added_later_and_every_property_is_described(name):
    loaded = schema(name)
    objects = list(_objects(loaded))
    assert loaded in objects
    assert all(o.get("additionalProperties") is True for o in objects)
    assert all(set(o["required"]) <= set(o["properties"]) for o in objects)
    undescribed = [key for key, value in _properties(loaded) if not value.get("description")]
    assert not undescribed


def test_an_unknown_schema_name_is_refused():
    with pytest.raises(ValueError, match="no schema"):
        schema("../pyproject")


def test_the_closed_lists_are_the_codes():
    audit = schema("audit-result")["$defs"]
    assert audit["verdict"]["enum"] == list(VERDICTS)
    # codes are open (a version adds some): the schema lists the known ones as examples
    assert set(audit["reasonCode"]["examples"]) == REASON_CODES
    assert set(audit["noteCode"]["examples"]) == NOTE_CODES
    assert set(audit["problem"]["properties"]["code"]["examples"]) == PROBLEM_CODES
    anchors = audit["generation"]["properties"]["anchor"]["anyOf"][0]["enum"]
    assert anchors == list(ANCHORS)
    walk = schema("walk-line")["properties"]
    assert walk["lastmod_precision"]["anyOf"][0]["enum"] == list(PRECISIONS)
    plan = schema("plan-line")["properties"]
    assert set(plan["reason"]["examples"]) == set(PLAN_REASONS)
    assert plan["verdict"]["enum"] == list(VERDICTS)


# -- AuditResults ------------------------------------------------------------------------------


def test_every_audit_result_conforms(outputs):
    assert len(outputs.results) == 2 * len(BEHAVIOURS_AUDITED) + 2 + 2 + 3
    for result in outputs.results:
        validate("audit-result", result)


def test_the_results_reach_the_optional_parts_of_the_schema(outputs):
    results = outputs.results
    assert any(r["changes"] is not None for r in results)
    assert any(r["changes"] is None for r in results)
    assert any("group" in s for r in results for s in r["segments"])
    assert any(s.get("window") for r in results for s in r["segments"])
    assert any(s.get("crawled") and "group" in s for r in results for s in r["segments"])
    assert any(r["crawl_batches"] for r in results)  # the crawl's fetches name their batch
    assert any("extensions" in r["dispersion"] for r in results)
    assert any("groupings" in r["dispersion"] for r in results)
    assert any(r["problems"] for r in results)
    assert {n["code"] for r in results for n in r["notes"]} >= {"publication-date-right"}
    assert all(isinstance(r["seed"], int) and r["savings"] is not None for r in results)
    assert "sitemap-unreadable" in {c["code"] for r in results for c in r["reasons"]}
    assert len({r["verdict"] for r in results}) >= 3


def test_a_wrong_audit_result_is_refused(outputs):
    result = next(  # a rich one: changes, and segments that are groups
        r for r in outputs.results if r["changes"] and any("group" in s for s in r["segments"])
    )
    validate("audit-result", {**result, "a_key_added_later": [1, 2]})  # allowed
    for key, value in [
        ("verdict", 3),
        ("verdict", "maybe"),
        ("started_at", 1_764_700_000),
        ("segments", {}),
        ("run_id", "3"),
        ("crawl_batches", ["3"]),
        ("crawl_batches", 3),
    ]:
        with pytest.raises(ValidationError):
            validate("audit-result", {**result, key: value})
    without = dict(result)
    del without["sample"]
    with pytest.raises(ValidationError):
        validate("audit-result", without)
    nested = copy.deepcopy(result)
    nested["segments"][0]["urls"] = "many"
    with pytest.raises(ValidationError):
        validate("audit-result", nested)
    nested = copy.deepcopy(result)
    nested["reasons"].append({"code": "a-code-added-later", "detail": "", "segment": None})
    validate("audit-result", nested)  # codes are added over versions: a new one validates
    nested["reasons"][-1]["code"] = "Not A Code"
    with pytest.raises(ValidationError):
        validate("audit-result", nested)


def test_a_time_that_is_not_rfc_3339_is_refused_where_formats_are_checked(outputs):
    pytest.importorskip("rfc3339_validator")  # jsonschema checks date-time with it
    result = outputs.results[0]
    with pytest.raises(ValidationError):
        validate("audit-result", {**result, "started_at": "last tuesday"})
    with pytest.raises(ValidationError):
        validate("plan-line", {**outputs.plans[0], "due_at": "2026-12-02 18:00"})


# -- walk lines --------------------------------------------------------------------------------


def test_every_walk_line_conforms(walked):
    for line in walked:
        validate("walk-line", line)
    keys = set().union(*walked)
    assert keys >= EXTENSION_KEYS  # every extension key was checked
    assert any(line["lastmod"] is None and line["lastmod_raw"] for line in walked)
    assert {line["lastmod_precision"] for line in walked} >= set(PRECISIONS)


def test_a_wrong_walk_line_is_refused(walked):
    line = next(line for line in walked if "hreflang" in line)
    validate("walk-line", {**line, "changefreq": "daily"})  # a key added later: allowed
    for key, value in [
        ("loc", 5),
        ("lastmod", 20261001),
        ("lastmod_precision", "week"),
        ("hreflang", [{"hreflang": "de"}]),
    ]:
        with pytest.raises(ValidationError):
            validate("walk-line", {**line, key: value})
    without = dict(line)
    del without["sitemap"]
    with pytest.raises(ValidationError):
        validate("walk-line", without)


# -- plan lines --------------------------------------------------------------------------------


def test_every_plan_line_conforms(outputs):
    assert len(outputs.plans) > 50
    for line in outputs.plans:
        validate("plan-line", line)
    assert len({line["reason"] for line in outputs.plans}) >= 2
    assert len({line["verdict"] for line in outputs.plans}) >= 2


def test_a_wrong_plan_line_is_refused(outputs):
    line = outputs.plans[0]
    validate("plan-line", {**line, "budget_left": 12})  # a key added later: allowed
    for key, value in [
        ("priority", "high"),
        ("p_changed", 1.5),
        ("due_at", None),
        ("reason", "Because!"),  # not a code
    ]:
        with pytest.raises(ValidationError):
            validate("plan-line", {**line, key: value})
    without = dict(line)
    del without["url"]
    with pytest.raises(ValidationError):
        validate("plan-line", without)


def test_the_whole_suite_checks_its_outputs_against_the_schemas():
    # tests/conftest.py wraps the makers for the session (tests/contract.py)
    from auditor import audit
    from auditor.fleet import engine
    from auditor.planner.make import PlannedFetch
    from auditor.walker import output

    makers = (audit.save_audit, engine.save_audit, PlannedFetch.to_dict)
    makers += (output.write_walk_jsonl, output.write_jsonl)  # the command line's, when it runs
    assert all(maker.__name__ == "checked" for maker in makers)
