"""The OpenAPI 3.1 document of ``auditor serve``'s API, served at ``/api/v1/openapi.json``
and rendered into the docs' API reference.

Its schemas are the project's own JSON Schemas (:mod:`auditor.schemas`: ``site-row``,
``trust-answer``, ``plan-line``), as OpenAPI 3.1 takes JSON Schema 2020-12 as it is;
the few shapes only the API has (a page of sites, a run, a segment, a refusal) are
written here.

Touches: the disk.
"""

from __future__ import annotations

from typing import Any

from auditor import __version__
from auditor.schemas import schema
from auditor.scorer.result import VERDICTS
from auditor.serve.api import MAX_BATCH, MAX_URL
from auditor.serve.fleet import DEFAULT_PER_PAGE, MAX_PER_PAGE, SORTS
from auditor.serve.params import MAX_HOST_TEXT

__all__ = ["openapi_document"]

_JSON = "application/json"


def openapi_document(root: str = "") -> dict[str, Any]:
    """The API's OpenAPI document; ``root``: the path prefix it is served under."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "auditor serve",
            "version": __version__,
            "description": "The history of sitemap lastmod audits, read-only: the fleet's "
            "verdicts, each site's runs, segments and plan, and a trust look-up for crawlers.",
        },
        "servers": [{"url": root or "/"}],
        "security": [{}, {"token": []}],
        "paths": _paths(),
        "components": {"schemas": _schemas(), "securitySchemes": _security()},
    }


def _paths() -> dict[str, Any]:
    slug = {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"},
            "description": "The site's slug (`slug` of its row)."}  # fmt: skip
    return {
        "/api/v1/sites": {"get": _op("The fleet's sites, filtered, sorted and paginated.",
                                     "FleetPage", _fleet_parameters())},
        "/api/v1/sites/{slug}": {"get": _op("One site's row, and where the rest of it is.",
                                            "SiteRow", [slug], found=True)},
        "/api/v1/sites/{slug}/runs": {"get": _op("Every run of the site, oldest first.",
                                                 "Runs", [slug], found=True)},
        "/api/v1/sites/{slug}/segments": {"get": _op(
            "The latest run's segments (sub-sitemaps, and their groups of URLs).",
            "Segments", [slug], found=True)},
        "/api/v1/sites/{slug}/plan": {"get": _plan_operation(slug)},
        "/api/v1/trust": {
            "get": _op("May a crawler schedule this URL on its lastmod?", "TrustAnswer",
                       [_url_parameter()]),
            "post": _batch_operation(),
        },
        "/healthz": {"get": {
            "summary": "Whether the server reads its history (no token asked).",
            "security": [{}],
            "responses": {"200": {"description": "It does."},
                          "503": {"description": "It does not."}},
        }},
    }  # fmt: skip


def _op(
    summary: str, answer: str, parameters: list[dict[str, Any]], found: bool = False
) -> dict[str, Any]:
    responses: dict[str, Any] = {
        "200": {"description": "The answer.", "content": {_JSON: {"schema": _ref(answer)}}},
        "400": _refusal("A parameter is not right."),
        "401": _refusal("A token is needed and was not given (or is wrong)."),
    }
    if found:
        responses["404"] = _refusal("The history holds no such site.")
    return {"summary": summary, "parameters": parameters, "responses": responses}


def _plan_operation(slug: dict[str, Any]) -> dict[str, Any]:
    return {
        "summary": "Today's plan of the site: the lines of `auditor plan SITE --no-walk "
        "--format jsonl`, one JSON object a line.",
        "parameters": [slug],
        "responses": {
            "200": {
                "description": "One PlanLine a line.",
                "content": {"application/x-ndjson": {"itemSchema": _ref("PlanLine")}},
            },
            "401": _refusal("A token is needed."),
            "404": _refusal("The history holds no such site."),
        },
    }


def _batch_operation() -> dict[str, Any]:
    body = {
        "type": "object",
        "properties": {"urls": {"type": "array", "maxItems": MAX_BATCH,
                                "items": {"type": "string", "maxLength": MAX_URL}}},
        "required": ["urls"],
    }  # fmt: skip
    answers = {"type": "object", "properties": {"answers": {"type": "array",
               "items": _ref("TrustAnswer")}}}  # fmt: skip
    return {
        "summary": f"The trust look-up of up to {MAX_BATCH:,} URLs, answered in their order.",
        "requestBody": {"required": True, "content": {_JSON: {"schema": body}}},
        "responses": {
            "200": {"description": "The answers.", "content": {_JSON: {"schema": answers}}},
            "400": _refusal("The body is not right."),
            "401": _refusal("A token is needed."),
            "413": _refusal("Too many URLs, or too large a body."),
        },
    }


def _fleet_parameters() -> list[dict[str, Any]]:
    def query(name: str, described: str, kind: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "in": "query", "description": described, "schema": kind}

    return [
        query("verdict", "Only these verdicts (repeat it, or comma-separate them).",
              {"type": "array", "items": {"type": "string", "enum": list(VERDICTS)}}),
        query("degraded", "Only the sites whose verdict got worse (1).",
              {"type": "boolean"}),
        query("changed_since", "Only the sites whose verdict changed at or after this "
              "date or instant (ISO 8601, UTC unless it says otherwise).",
              {"type": "string"}),
        query("host", "Only the sites whose origin contains this text (any case).",
              {"type": "string", "maxLength": MAX_HOST_TEXT}),
        query("sort", "The column to sort by; `-` before it for descending. Default: worst "
              "verdict first.", {"type": "string",
                                 "enum": [*SORTS, *(f"-{s}" for s in SORTS)]}),
        query("page", "The page, from 1.", {"type": "integer", "minimum": 1}),
        query("per_page", "Sites a page.", {"type": "integer", "minimum": 1,
              "maximum": MAX_PER_PAGE, "default": DEFAULT_PER_PAGE}),
    ]  # fmt: skip


def _url_parameter() -> dict[str, Any]:
    return {"name": "url", "in": "query", "required": True, "description": "The URL.",
            "schema": {"type": "string", "maxLength": MAX_URL}}  # fmt: skip


def _refusal(described: str) -> dict[str, Any]:
    return {"description": described, "content": {_JSON: {"schema": _ref("Refusal")}}}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _project_schema(name: str) -> dict[str, Any]:
    loaded = schema(name)
    loaded.pop("$schema", None)
    loaded.pop("$id", None)
    return loaded


def _schemas() -> dict[str, Any]:
    number_or_null = {"anyOf": [{"type": "number"}, {"type": "null"}]}
    return {
        "SiteRow": _project_schema("site-row"),
        "TrustAnswer": _project_schema("trust-answer"),
        "PlanLine": _project_schema("plan-line"),
        "FleetPage": {"type": "object", "properties": {
            "sites": {"type": "array", "items": _ref("SiteRow")},
            "total": {"type": "integer", "description": "Sites matching the filters."},
            "page": {"type": "integer"}, "per_page": {"type": "integer"},
            "pages": {"type": "integer"},
            "counts": {"type": "object", "description": "The whole fleet by verdict.",
                       "additionalProperties": {"type": "integer"}},
            "next": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "previous": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        }},
        "Runs": {"type": "object", "properties": {
            "site": {"type": "string"},
            "runs": {"type": "array", "items": {"type": "object", "properties": {
                "run_id": {"type": "integer"},
                "started_at": {"type": "string", "format": "date-time"},
                "finished_at": {"type": "string", "format": "date-time"},
                "verdict": {"type": "string", "enum": list(VERDICTS)},
                "recheck_days": number_or_null}}},
        }},
        "Segments": {"type": "object", "properties": {
            "site": {"type": "string"},
            "segments": {"type": "array", "items": {"type": "object", "properties": {
                "sitemap": {"type": "string"},
                "group_pattern": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "verdict": {"type": "string", "enum": list(VERDICTS)},
                "reasons": {"type": "array", "items": {"type": "string"}},
                "urls": {"type": "integer"}, "compared": {"type": "integer"},
                "changed": {"type": "integer"}, "lastmod_advanced": {"type": "integer"},
                "precision": number_or_null, "recall": number_or_null,
                "recheck_days": number_or_null}}},
        }},
        "Refusal": {"type": "object", "properties": {
            "error": {"type": "string", "description": "What is wrong, in words."},
            "status": {"type": "integer"}}, "required": ["error", "status"]},
    }  # fmt: skip


def _security() -> dict[str, Any]:
    return {
        "token": {
            "type": "http",
            "scheme": "bearer",
            "description": "Asked when the server was given a token (always beyond "
            "127.0.0.1): `Authorization: Bearer TOKEN`.",
        }
    }
