"""``auditor audit --json`` run in process, its AuditResult read back as a dict."""

from __future__ import annotations

import contextlib
import io
import json

from auditor.cli import main


def audit_json(origin: str, db: str, sample: int) -> dict:
    """One audit of ``origin`` into the history ``db`` at ``--sample``, without delay."""
    printed = io.StringIO()
    command = ["audit", origin, "--db", db, "--delay", "0", "--sample", str(sample), "--json"]
    with contextlib.redirect_stdout(printed):
        main(command)
    return json.loads(printed.getvalue())
