"""What the add-on's components share: blocking work (the history, the disk) run from
Scrapy's coroutines on a thread, with whichever reactor the crawl runs (asyncio's or
Twisted's own); counts written as plain English in their messages.

Touches: nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.threads import deferToThread

from auditor.words import counted

__all__ = ["counted", "in_thread"]

T = TypeVar("T")


async def in_thread(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` run on the reactor's thread pool; its result (or its exception)."""
    result: T = await maybe_deferred_to_future(deferToThread(work, *args))
    return result
