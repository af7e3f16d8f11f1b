"""One site of a fleet, as a worker runs it: audited behind the host gate, never saved.

:func:`audit_task` is what a Dask worker executes. It reads no database: the
history's owner sends the site's :class:`~auditor.audit.Previous` with the task,
and gets back an :class:`~auditor.audit.AuditBundle` to save, or a
:class:`~auditor.fleet.outcome.SiteFailure` (an exception, or the site's time
limit spent) to report, or a :class:`GateLoss` when the fleet's host table could
not be reached (the owner sends the site again). It never raises.

Touches: the network.
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass, replace

from auditor.audit import AuditBundle, AuditOptions, Clients, Previous, run_audit
from auditor.errors import Unreachable
from auditor.fleet.client import FleetPacer, GatedHttpClient, TimeLimit
from auditor.fleet.gate import GateLost, GateTable, HostGate
from auditor.fleet.outcome import SiteFailure
from auditor.http import PAGE_ACCEPT, HttpOptions

__all__ = ["LEASE_MARGIN", "GateLoss", "SiteTask", "audit_task", "fleet_lease", "turn_lease"]

#: Seconds a host's turn may be held beyond the longest a request can take.
LEASE_MARGIN = 10.0


@dataclass(frozen=True)
class SiteTask:
    """Everything a worker needs to audit one site (picklable)."""

    site: str
    target: str  # the origin, or the sitemap URL to walk
    previous: Previous
    options: AuditOptions
    site_timeout: float


@dataclass(frozen=True)
class GateLoss:
    """A site stopped because the fleet's host table could not be reached (its worker
    died): not the site's failure. Nothing of it was kept; the owner sends it again."""

    site: str
    detail: str


def turn_lease(options: HttpOptions) -> float:
    """The longest one request may hold a host: its deadline bounds it all (redirects,
    retries and their waits, the body), and a margin."""
    return options.timeout + LEASE_MARGIN


def fleet_lease(options: AuditOptions) -> float:
    """The longest any request of an audit may hold its host's turn."""
    return max(turn_lease(options.walk.http), turn_lease(options.sample.http))


def audit_task(task: SiteTask, table: GateTable) -> AuditBundle | SiteFailure | GateLoss:
    """Audit ``task.site`` with every request behind the fleet's host ``table``."""
    limit = TimeLimit.starting_now(task.site_timeout)
    options = task.options
    walk_http, page_http = options.walk.http, replace(options.sample.http, accept=PAGE_ACCEPT)
    gate = HostGate(table, f"{task.site}#{uuid.uuid4().hex[:12]}", lease=fleet_lease(options))
    walk_client = GatedHttpClient(walk_http, gate, limit)
    page_client = GatedHttpClient(page_http, gate, limit, pages=True)
    clients = Clients(walk_client, page_client, FleetPacer(options.sample.delay, gate))
    outcome: AuditBundle | SiteFailure
    lost = False
    try:
        outcome = run_audit(task.target, task.previous, options, clients=clients)
    except GateLost as exc:
        lost = True
        return GateLoss(task.site, str(exc))
    except Unreachable as exc:  # unless its time limit is why (below)
        outcome = SiteFailure(task.site, "unreachable", exc.cause)
    except Exception as exc:  # a failure of this site only: the fleet goes on
        return SiteFailure(task.site, "error", f"{type(exc).__name__}: {exc}")
    finally:
        walk_client.close()
        page_client.close()
        if not lost:  # (a lost table's turns lapse with it)
            with contextlib.suppress(GateLost):
                gate.let_go()
    if walk_client.refused or page_client.refused:
        detail = f"not finished within its time limit ({task.site_timeout:g} s)"
        return SiteFailure(task.site, "time-limit", detail)
    return outcome
