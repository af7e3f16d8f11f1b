"""The published contract as JSON Schemas (draft 2020-12): the room of the schemas of what
other programs read, shipped in the package beside this module.

- ``audit-result``: the AuditResult of ``auditor audit --json`` (one a line for a fleet);
- ``walk-line``: one line of ``auditor walk --format jsonl``;
- ``plan-line``: one line of ``auditor plan --format jsonl``;
- ``site-row``: a site of the fleet as ``auditor serve``'s API lists it;
- ``trust-answer``: the answer of ``auditor serve``'s trust look-up for one URL.

Keys are added, never renamed or removed: every object of the schemas allows keys it does
not name, so a consumer validating with an older schema keeps working. :func:`schema`
loads one; :func:`validate` checks an instance against it (with ``jsonschema``, a test
dependency, not a runtime one). The disk is touched only to read the room's own JSON files,
through :mod:`importlib.resources` (so they are found in a wheel or a zip as well).

Touches: the disk.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["SCHEMA_NAMES", "schema", "validate"]

#: The schemas shipped, by name (``auditor/schemas/<name>.json``).
SCHEMA_NAMES = ("audit-result", "walk-line", "plan-line", "site-row", "trust-answer")


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema ``auditor/schemas/<name>.json`` as a dict (a fresh copy each call,
    which the caller may change); ``name`` is one of :data:`SCHEMA_NAMES`, with or without
    its ``.json``. Raises ValueError for any other name."""
    loaded: dict[str, Any] = json.loads(_text(name.removesuffix(".json")))
    return loaded


def validate(name: str, instance: Any) -> None:
    """Check ``instance`` (a decoded JSON value) against the schema ``name``; raises
    ``jsonschema.ValidationError`` (the best-matching error) when it does not conform.

    Formats are checked where jsonschema can (``date-time`` with ``rfc3339-validator``
    installed). jsonschema is imported here, not at the top of the module: it is a test
    dependency (the ``test`` extra), not one of auditor's, so importing this module needs
    nothing beyond the standard library.
    """
    import jsonschema  # a test extra (types-jsonschema for mypy)

    validator = _validator(name.removesuffix(".json"))
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is not None:
        raise error


@cache
def _validator(name: str) -> Any:
    """A draft 2020-12 validator of the schema ``name``, formats checked (made once)."""
    import jsonschema

    cls = jsonschema.Draft202012Validator
    return cls(schema(name), format_checker=cls.FORMAT_CHECKER)


@cache
def _text(name: str) -> str:
    """The text of a shipped schema (read once)."""
    if name not in SCHEMA_NAMES:
        raise ValueError(f"no schema {name!r}: one of {', '.join(SCHEMA_NAMES)}")
    return resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")
