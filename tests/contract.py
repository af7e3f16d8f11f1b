"""Every result the test suite's audits produce is checked against the published JSON
Schemas (auditor/schemas): each AuditResult as an audit saves it (``save_audit``: every
audit, one site's, the command line's or a fleet's, passes there), each plan line as it is
turned into JSON, each walk line the command line writes. Results that unit tests build
by hand from fakes (an inventory of ``{"urls": 1}``) are not the pipeline's and are not
checked. Installed for the whole session by tests/conftest.py."""

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
    from auditor import audit
    from auditor.fleet import engine
    from auditor.planner.make import PlannedFetch
    from auditor.walker import output

    with pytest.MonkeyPatch.context() as patch:
        saved = _saved_checked(audit.save_audit)
        patch.setattr(audit, "save_audit", saved)  # audit_site's
        patch.setattr(engine, "save_audit", saved)  # a fleet's
        patch.setattr(PlannedFetch, "to_dict", _validated("plan-line", PlannedFetch.to_dict))
        walk_writer = _lines_checked(output.write_walk_jsonl)
        patch.setattr(output, "write_walk_jsonl", walk_writer)  # the command line's too
        patch.setattr(output, "write_jsonl", _lines_checked(output.write_jsonl))
        yield


def _validated(name: str, to_dict: Callable[[Any], dict[str, Any]]) -> Callable[..., Any]:
    def checked(self: Any) -> dict[str, Any]:
        made = to_dict(self)
        validate(name, made)
        return made

    return checked


def _saved_checked(save: Callable[..., Any]) -> Callable[..., Any]:
    """``save_audit`` with the AuditResult it returns validated."""

    def checked(*args: Any, **kwargs: Any) -> Any:
        result = save(*args, **kwargs)
        validate("audit-result", result.to_dict())
        return result

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
