"""Plans: what the team's crawler should fetch and when, within a budget per host: on
lastmod where it is trusted, on measured change rates elsewhere, on lastmod as a noisy
indicator where it is informative but below the trust bar.

::

    for fetch in auditor.plan(history, now=now, budget=5_000):
        crawler.enqueue(fetch.url, priority=fetch.priority)
    auditor.record_fetches(history, crawler.log())   # the fetches, back as evidence

:mod:`~auditor.planner.rates` estimates rates and allocates revisits,
:mod:`~auditor.planner.signal` reads lastmod, :mod:`~auditor.planner.schedule` is the
policy, :mod:`~auditor.planner.make` gathers a site's figures and walks its sitemaps,
:mod:`~auditor.planner.figures` says what a plan costs and keeps fresh.

Touches: nothing.
"""

import typing

import auditor._lazy as _lazy

if typing.TYPE_CHECKING:
    from auditor.planner.figures import PlanFigures, site_figures
    from auditor.planner.make import PlannedFetch, default_budget, plan

_EXPORTS = {
    "PlanFigures": "auditor.planner.figures",
    "PlannedFetch": "auditor.planner.make",
    "default_budget": "auditor.planner.make",
    "plan": "auditor.planner.make",
    "site_figures": "auditor.planner.figures",
}
__getattr__, __dir__ = _lazy.lazy_exports(__name__, _EXPORTS)

__all__ = ["PlanFigures", "PlannedFetch", "default_budget", "plan", "site_figures"]
