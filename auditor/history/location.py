"""Where a history lives: a SQLite file or a PostgreSQL database, from ``--db`` or
``AUDITOR_DB``.

``--db`` takes a path or ``sqlite:///PATH`` (SQLite, the embedded default) or
``postgresql://user@host:port/dbname`` (also ``postgres://``; any libpq URL, e.g. with
``?options=-csearch_path%3Dauditor`` to use a schema of its own)::

    sqlite:///history.sqlite3         relative path (as SQLAlchemy writes it)
    sqlite:////var/lib/auditor/h.db   absolute path

Touches: nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from auditor.errors import HistoryError

__all__ = ["Location", "default_db_path", "locate"]

_FILE_NAME = "history.sqlite3"
_POSTGRES_SCHEMES = ("postgresql", "postgres")


@dataclass(frozen=True)
class Location:
    """A history database: ``dialect`` is ``sqlite`` (with ``path``) or ``postgresql``
    (with ``url``, the libpq connection URL)."""

    dialect: str
    path: Path | None = None
    url: str | None = None

    def __str__(self) -> str:
        """What messages name: the path, or the URL with any password masked."""
        if self.path is not None:
            return str(self.path)
        return _masked(self.url or "")


def default_db_path() -> Path:
    """Where history lives when neither ``--db`` nor ``AUDITOR_DB`` says otherwise:
    ``$XDG_DATA_HOME/auditor/history.sqlite3``, by default under ``~/.local/share``."""
    data_home = os.environ.get("XDG_DATA_HOME", "")
    base = Path(data_home) if os.path.isabs(data_home) else Path.home() / ".local" / "share"
    return base / "auditor" / _FILE_NAME


def locate(db: str | os.PathLike[str] | None) -> Location:
    """The location of ``db``, else of ``AUDITOR_DB``, else :func:`default_db_path`.

    HistoryError for a URL of another kind (``mysql://``) or a ``sqlite://`` URL with a
    host or without a path."""
    chosen = db if db not in (None, "") else os.environ.get("AUDITOR_DB") or None
    if chosen is None:
        return Location("sqlite", path=default_db_path())
    if isinstance(chosen, os.PathLike):
        return Location("sqlite", path=Path(chosen).expanduser())
    scheme = chosen.split("://", 1)[0].lower() if "://" in chosen else ""
    if scheme in _POSTGRES_SCHEMES:
        return Location("postgresql", url=chosen)
    if scheme == "sqlite":
        return Location("sqlite", path=_sqlite_path(chosen))
    if scheme:
        raise HistoryError(
            f"--db {_masked(chosen)}: not a history location (a path, sqlite:///PATH or "
            "postgresql://user@host:port/dbname)"
        )
    return Location("sqlite", path=Path(chosen).expanduser())


def _sqlite_path(url: str) -> Path:
    rest = url.split("://", 1)[1]
    if not rest.startswith("/") or len(rest) == 1:
        raise HistoryError(f"--db {url}: write sqlite:///relative/path or sqlite:////absolute")
    return Path(rest[1:]).expanduser()


def _masked(url: str) -> str:
    """The URL with its password (if any) replaced by ``***``."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.netloc.rsplit("@", 1)[1]
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))
    except ValueError:
        return url.split("://", 1)[0] + "://***"
