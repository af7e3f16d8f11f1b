"""The fleet's filters, sort and page as a request's query string says them, for the
pages and the API alike: each value checked, and a clear 400 for one that is not right.

``verdict`` (repeatable, or comma-separated), ``degraded`` (``1``/``true``), ``changed_since``
(an ISO 8601 date or instant, UTC unless it says otherwise), ``host`` (text the site
contains), ``sort`` (a column of :data:`~auditor.serve.fleet.SORTS`, ``-`` before it for
descending), ``page`` (from 1) and ``per_page`` (1 to :data:`MAX_PER_PAGE`).

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import urlencode

from auditor.scorer.result import VERDICTS
from auditor.serve.fleet import DEFAULT_PER_PAGE, MAX_PER_PAGE, SORTS, FleetQuery

__all__ = ["MAX_HOST_TEXT", "BadParameter", "Params", "fleet_query"]

#: Longest text the host filter takes: longer than any host name (253).
MAX_HOST_TEXT = 256
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


class BadParameter(ValueError):
    """A query parameter that is not right: its name and why (answered with 400)."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"{name}: {why}")
        self.name = name


class Params(Protocol):
    """A request's query parameters: each name's values (Starlette's ``QueryParams``)."""

    def getlist(self, key: Any) -> list[Any]:
        """The values given for ``key``, in order (none: empty)."""
        ...


def fleet_query(params: Params) -> FleetQuery:
    """The :class:`FleetQuery` the query parameters ``params`` ask for;
    :class:`BadParameter` for the first one that is not right."""
    return FleetQuery(
        verdicts=_verdicts(params.getlist("verdict")),
        degraded=_flag(params, "degraded"),
        changed_since=_instant(params, "changed_since"),
        host=_host(params),
        sort=_sort(params),
        page=_number(params, "page", 1, 1, 10**9),
        per_page=_number(params, "per_page", DEFAULT_PER_PAGE, 1, MAX_PER_PAGE),
    )


def query_string(query: FleetQuery, **changes: object) -> str:
    """The query string of ``query`` with ``changes`` (e.g. ``page=2``), defaults left out:
    the stable address of a fleet page, for links and pagination."""
    values: dict[str, object] = {
        "verdict": ",".join(query.verdicts),
        "degraded": "1" if query.degraded else "",
        "changed_since": query.changed_since.isoformat() if query.changed_since else "",
        "host": query.host,
        "sort": "" if query.sort == "verdict" else query.sort,
        "page": "" if query.page == 1 else query.page,
        "per_page": "" if query.per_page == DEFAULT_PER_PAGE else query.per_page,
    }
    values.update(changes)
    kept = [(name, str(value)) for name, value in values.items() if value not in ("", None)]
    return urlencode(kept)


def _one(params: Params, name: str) -> str | None:
    values = params.getlist(name)
    if len(values) > 1:
        raise BadParameter(name, "given more than once")
    return values[0] if values else None


def _verdicts(values: Sequence[str]) -> tuple[str, ...]:
    named = [v.strip() for value in values for v in value.split(",") if v.strip()]
    for verdict in named:
        if verdict not in VERDICTS:
            raise BadParameter(
                "verdict", f"not a verdict: {verdict[:40]!r} (one of {', '.join(VERDICTS)})"
            )
    return tuple(dict.fromkeys(named))


def _flag(params: Params, name: str) -> bool:
    value = (_one(params, name) or "").lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise BadParameter(name, f"not a yes or no: {value[:40]!r} (1 or 0)")


def _instant(params: Params, name: str) -> datetime | None:
    value = (_one(params, name) or "").strip()
    if not value:
        return None
    try:
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise BadParameter(name, f"not an ISO 8601 date or time: {value[:40]!r}") from None
    return instant.replace(tzinfo=UTC) if instant.tzinfo is None else instant.astimezone(UTC)


def _host(params: Params) -> str:
    value = (_one(params, "host") or "").strip()
    if len(value) > MAX_HOST_TEXT:
        raise BadParameter("host", f"longer than {MAX_HOST_TEXT} characters")
    return value


def _sort(params: Params) -> str:
    value = (_one(params, "sort") or "verdict").strip()
    if value.removeprefix("-") not in SORTS:
        raise BadParameter("sort", f"not a column: {value[:40]!r} (one of {', '.join(SORTS)})")
    return value


def _number(params: Params, name: str, default: int, low: int, high: int) -> int:
    value = _one(params, name)
    if value is None or not value.strip():
        return default
    try:
        number = int(value)
    except ValueError:
        raise BadParameter(name, f"not a whole number: {value[:40]!r}") from None
    if not low <= number <= high:
        raise BadParameter(name, f"{number} is not between {low} and {high}")
    return number
