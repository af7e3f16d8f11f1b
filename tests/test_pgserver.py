"""The test server helper says why PostgreSQL tests skip, rather than failing them."""

from __future__ import annotations

import builtins

import tests.pgserver as pgserver


def test_no_server_binaries_is_a_reason_to_skip(monkeypatch):
    monkeypatch.setattr(pgserver, "find_bindir", lambda: None)
    assert "no PostgreSQL server binaries" in (pgserver.unavailable() or "")


def test_no_psycopg_is_a_reason_to_skip(monkeypatch):
    real_import = builtins.__import__

    def without_psycopg(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "psycopg":
            raise ImportError("No module named 'psycopg'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_psycopg)
    assert "psycopg is not installed" in (pgserver.unavailable() or "")


def test_pg_bindir_is_looked_at_first(monkeypatch, tmp_path):
    for program in ("initdb", "pg_ctl"):
        (tmp_path / program).write_text("#!/bin/sh\n")
    monkeypatch.setenv("PG_BINDIR", str(tmp_path))
    assert pgserver.find_bindir() == tmp_path
