"""``auditor serve``: the team's history in a browser and over HTTP, read-only.

An ASGI application (Starlette, on uvicorn) with server-rendered pages (the fleet, a site,
its report drawn on demand) and a JSON API under ``/api/v1`` (sites, runs, segments,
plans, and the trust look-up a crawler asks before scheduling a URL on its lastmod).

Touches: nothing.
"""
