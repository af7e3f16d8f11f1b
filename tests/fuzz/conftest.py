"""The fuzz suite's Hypothesis profiles (see ``budget.py``) and its shared loopback servers."""

from __future__ import annotations

import contextlib
import gc
import warnings
from collections.abc import Iterator

import pytest

from tests.fuzz.budget import register_profiles
from tests.fuzz.rawserver import RawServer
from tests.loopback import LoopbackServer

register_profiles()

# When a property fails, Hypothesis' pytest plugin imports its patch writer, which imports
# libcst, which uses a deprecated mypy_extensions API: with warnings as errors that import
# crashes pytest (INTERNALERROR) instead of reporting the failure, or the expected failure
# of an xfail. Import it once here with that one warning silenced.
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.filterwarnings("ignore", "mypy_extensions", DeprecationWarning)
    import hypothesis.extra._patching  # noqa: F401


@pytest.fixture(autouse=True)
def collect_sockets_here() -> Iterator[None]:
    """Collect, after each fuzz test, the sockets its hostile exchanges dropped.

    A server that resets, drips or hangs can leave a client socket to the garbage
    collector; collected later, in whatever test runs then, its ResourceWarning
    would fail that unrelated test (warnings are errors). Collected here, at once.
    """
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


@pytest.fixture(scope="module")
def loopback() -> Iterator[LoopbackServer]:
    """One well-behaved loopback server per module; each example sets its routes."""
    with LoopbackServer() as server:
        yield server


@pytest.fixture(scope="module")
def raw() -> Iterator[RawServer]:
    """One misbehaving raw-socket server per module; each example sets its script."""
    with RawServer() as server:
        yield server
