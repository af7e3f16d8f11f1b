"""The fuzz budget: Hypothesis profiles, and each property's share of them.

Two profiles, registered here and chosen with the ``HYPOTHESIS_PROFILE``
environment variable (``ci`` when unset):

- ``ci``: what every test run spends. Seeded (``derandomize``: the same cases on
  every run, so a failure in CI fails again on a laptop), no example database,
  no per-example deadline (the machine is shared and noisy; the properties bound
  time themselves where time is the point).
- ``long``: fifty times the cases, freshly random each run, failures kept in
  ``.hypothesis/`` to be replayed first next time.

Each property asks for its share of the ``ci`` budget with :func:`fuzz` (a cheap
parser property many cases, a loopback walk a few); the chosen profile scales
it. The profiles apply to the fuzz suite only: the rest of the suite keeps
Hypothesis' defaults and its own settings.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

PROFILE_VARIABLE = "HYPOTHESIS_PROFILE"
#: ``max_examples`` of the ci profile: the unit each property's share is counted in.
CI_EXAMPLES = 100
LONG_FACTOR = 50
_SLOW_IS_FINE = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.large_base_example,
    HealthCheck.filter_too_much,
]


def register_profiles() -> None:
    """Register the ``ci`` and ``long`` profiles (idempotent)."""
    settings.register_profile(
        "ci",
        derandomize=True,
        database=None,
        max_examples=CI_EXAMPLES,
        deadline=None,
        suppress_health_check=_SLOW_IS_FINE,
        print_blob=True,
    )
    settings.register_profile(
        "long",
        derandomize=False,
        max_examples=CI_EXAMPLES * LONG_FACTOR,
        deadline=None,
        suppress_health_check=_SLOW_IS_FINE,
        print_blob=True,
    )


def profile_name() -> str:
    """The profile chosen for this run: ``$HYPOTHESIS_PROFILE``, else ``ci``."""
    return os.environ.get(PROFILE_VARIABLE, "ci")


def fuzz(examples: int, *, shrink: bool = True) -> settings:
    """Settings for one property: ``examples`` cases under ``ci``, scaled under other profiles.

    ``shrink=False`` for a property marked xfail (a known defect fixed elsewhere): its
    failure is expected, and shrinking it to the simplest case would only spend the budget.
    """
    register_profiles()
    profile = settings.get_profile(profile_name())
    scaled = max(1, examples * profile.max_examples // CI_EXAMPLES)
    if shrink:
        return settings(profile, max_examples=scaled)
    return settings(profile, max_examples=scaled, phases=[Phase.explicit, Phase.generate])
