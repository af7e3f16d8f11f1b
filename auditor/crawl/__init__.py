"""The crawl log: the team's crawler's own fetches, taken in as evidence and as the
last-fetch dates that plans are made on.

Touches: nothing.
"""
