"""Every result the test suite produces is checked against the published JSON Schemas
(auditor/schemas): each AuditResult and plan line as it is turned into JSON, each walk
line the command line writes. Installed for the whole session by tests/conftest.py."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import pytest

from auditor.schemas import validate


@contextmanager
def checked_outputs() -> Iterator[None]:
    """The outputs' makers wrapped so that each output is validated as it is made."""
    from auditor import cli
    from auditor.planner.make import PlannedFetch
    from auditor.scorer.result import AuditResult
    from auditor.walker import output

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(AuditResult, "to_dict", _validated("audit-result", AuditResult.to_dict))
        patch.setattr(PlannedFetch, "to_dict", _validated("plan-line", PlannedFetch.to_dict))
        walk_writer = _lines_checked(output.write_walk_jsonl)
        patch.setattr(output, "write_walk_jsonl", walk_writer)
        patch.setattr(cli, "write_walk_jsonl", walk_writer)
        patch.setattr(output, "write_jsonl", _lines_checked(output.write_jsonl))
        yield


def _validated(name: str, to_dict: Callable[[Any], dict[str, Any]]) -> Callable[..., Any]:
    def checked(self: Any) -> dict[str, Any]:
        made = to_dict(self)
        validate(name, made)
        return made

    return checked


def _lines_checked(write: Callable[[Any, TextIO], int]) -> Callable[[Any, TextIO], int]:
    """``write`` with every line it writes validated as a walk line, passed on as it comes
    (a walk cut short keeps what it wrote)."""

    def checked(source: Any, out: TextIO) -> int:
        return write(source, _CheckedLines(out))  # type: ignore[arg-type]

    return checked


class _CheckedLines:
    """A text stream that validates each complete line written through it."""

    def __init__(self, out: TextIO) -> None:
        self._out, self._partial = out, ""

    def write(self, text: str) -> int:
        self._out.write(text)
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            validate("walk-line", json.loads(line))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._out, name)  # flush, fileno...
