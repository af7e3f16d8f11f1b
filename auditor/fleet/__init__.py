"""Fleet audits: many sites at once, politely, on this machine or a Dask cluster.

::

    from auditor import History, audit_fleet
    with History.open() as history:
        for outcome in audit_fleet(["example.com", "example.org"], history, concurrency=8):
            print(outcome.site, getattr(outcome, "verdict", None))

``client=distributed.Client("tcp://scheduler:8786")`` runs the sites on a Dask
cluster; without it a local cluster of worker processes is started. Each result
is saved in ``history`` before it is yielded; a site that could not be audited is
yielded as a :class:`SiteFailure` and nothing of it is saved.

Touches: nothing.
"""

import typing

import auditor._lazy as _lazy

if typing.TYPE_CHECKING:
    from auditor.fleet.defaults import DEFAULT_SITE_TIMEOUT, SITES_PER_CORE, default_concurrency
    from auditor.fleet.engine import audit_fleet
    from auditor.fleet.gate import HostGate, HostTable
    from auditor.fleet.outcome import FleetProgress, SiteFailure
    from auditor.fleet.sites import CrawlList, crawl_list

_EXPORTS = {
    "DEFAULT_SITE_TIMEOUT": "auditor.fleet.defaults",
    "SITES_PER_CORE": "auditor.fleet.defaults",
    "default_concurrency": "auditor.fleet.defaults",
    "audit_fleet": "auditor.fleet.engine",
    "HostGate": "auditor.fleet.gate",
    "HostTable": "auditor.fleet.gate",
    "FleetProgress": "auditor.fleet.outcome",
    "SiteFailure": "auditor.fleet.outcome",
    "CrawlList": "auditor.fleet.sites",
    "crawl_list": "auditor.fleet.sites",
}
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_SITE_TIMEOUT",
    "SITES_PER_CORE",
    "CrawlList",
    "FleetProgress",
    "HostGate",
    "HostTable",
    "SiteFailure",
    "audit_fleet",
    "crawl_list",
    "default_concurrency",
]
