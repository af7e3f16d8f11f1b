"""The sampler's named defaults (light to import: the CLI's --help shows them).

Touches: nothing.
"""

from __future__ import annotations

__all__ = ["DEFAULT_DELAY", "DEFAULT_SAMPLE"]

#: Seconds between two requests to one host unless robots.txt asks for more.
DEFAULT_DELAY = 1.0

#: Pages fetched per run by default. The scorer trusts agreement when the Wilson 95%
#: lower bound reaches 0.8: that takes 16 agreeing comparisons with none against, or
#: 25 with one against (24/25 gives 0.805). Real pages carry a credible dateModified
#: perhaps half the time and some fetches fail or are disallowed, so 50 pages give
#: about 25 comparisons: enough to reach the bar in one run when lastmod is accurate,
#: at 50 requests (under a minute at the default 1 s delay).
DEFAULT_SAMPLE = 50
