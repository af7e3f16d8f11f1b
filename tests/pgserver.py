"""A throwaway PostgreSQL server for tests and benchmarks, started from Debian's binaries.

``PostgresServer()`` makes a cluster in a new temporary folder (``initdb``), starts it on
a free loopback port with its socket in that folder (``pg_ctl``), and ``stop()`` ends it
and deletes the folder. As root the binaries run as the ``postgres`` user (``initdb``
refuses root), through ``runuser``. :func:`unavailable` says why no server can be had
(no binaries, no ``postgres`` user, no psycopg), so tests can skip saying why.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["PostgresServer", "find_bindir", "running_server", "unavailable"]

#: The superuser of the test cluster; the tests connect as a plain role (see ``role``).
SUPERUSER = "postgres"
_RUN_AS = "postgres"


def find_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: ``$PG_BINDIR``, else the newest
    ``/usr/lib/postgresql/*/bin`` (Debian), else the PATH."""
    candidates = [Path(os.environ["PG_BINDIR"])] if os.environ.get("PG_BINDIR") else []
    debian = Path("/usr/lib/postgresql")
    if debian.is_dir():
        versions = [p for p in debian.iterdir() if p.name.isdigit()]
        candidates += [p / "bin" for p in sorted(versions, key=lambda p: -int(p.name))]
    on_path = shutil.which("pg_ctl")
    if on_path:
        candidates.append(Path(on_path).parent)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def unavailable() -> str | None:
    """Why no test server can be started here, or None when one can."""
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        return f"psycopg is not installed ({exc})"
    if find_bindir() is None:
        return "no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root without runuser: cannot start initdb as another user"
        try:
            import pwd

            pwd.getpwnam(_RUN_AS)
        except KeyError:
            return f"running as root and there is no {_RUN_AS!r} user to run initdb as"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """A running PostgreSQL cluster in a temporary folder, on 127.0.0.1."""

    def __init__(self, *, durable: bool = False) -> None:
        """Start it. ``durable`` keeps fsync on (benchmarks); tests turn it off."""
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError(unavailable() or "no PostgreSQL binaries")
        self.bindir = bindir
        # As root, under /tmp: the postgres user must reach the folder, which a private
        # TMPDIR (or pytest's 0700 base folder) would not let it.
        base = "/tmp" if os.geteuid() == 0 and os.path.isdir("/tmp") else None
        self.folder = Path(tempfile.mkdtemp(prefix="auditor-pg-", dir=base))
        self.data = self.folder / "data"
        if os.geteuid() == 0:
            shutil.chown(self.folder, _RUN_AS, _RUN_AS)
        self.port = 0
        try:
            self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust",
                      "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")  # fmt: skip
            self._start(durable)
        except BaseException:
            self.stop()
            raise

    def _command(self, program: str, *args: str) -> list[str]:
        command = [str(self.bindir / program), *args]
        return ["runuser", "-u", _RUN_AS, "--", *command] if os.geteuid() == 0 else command

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(self._command(program, *args), capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr[-2000:]}")

    def _start(self, durable: bool) -> None:
        settings = [f"-k {self.folder}", "-c listen_addresses=127.0.0.1", "-c max_connections=60"]
        if not durable:
            settings += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        self._settings = settings
        for attempt in range(5):  # the free port may be taken between the probe and the bind
            self.port = _free_port()
            try:
                self._pg_start()
                return
            except RuntimeError:
                if attempt == 4:
                    raise

    def _pg_start(self) -> None:
        options = " ".join([f"-p {self.port}", *self._settings])
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"),
                  "-o", options, "-w", "-t", "60", "start")  # fmt: skip

    def halt(self) -> None:
        """Stop the server as an administrator would for a restart (fast shutdown: every
        session is ended, ``terminating connection due to administrator command``); its
        data and port are kept for :meth:`resume`."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        """Start the halted server again, on the same port with the same data."""
        self._pg_start()

    def url(self, dbname: str = "postgres", user: str = SUPERUSER) -> str:
        """A ``postgresql://`` URL of one database on this server."""
        return f"postgresql://{user}@127.0.0.1:{self.port}/{dbname}"

    def admin(self, *statements: str, dbname: str = "postgres") -> None:
        """Run statements as the superuser, each in autocommit (CREATE DATABASE needs it)."""
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[arg-type]

    def new_database(self, owner: str) -> str:
        """A new empty database owned by ``owner`` (created if needed, a plain role with
        no other right); its URL, connecting as ``owner``."""
        name = f"h_{uuid.uuid4().hex[:12]}"
        self.role(owner)
        self.admin(f'CREATE DATABASE "{name}" OWNER "{owner}"')
        return self.url(name, owner)

    def role(self, name: str) -> None:
        """Create a login role (no superuser, no createdb) unless it exists."""
        self.admin(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = "
            f"'{name}') THEN CREATE ROLE \"{name}\" LOGIN; END IF; END $$"
        )

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its folder (idempotent)."""
        if self.data.joinpath("postmaster.pid").exists():
            subprocess.run(
                self._command("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop"),
                capture_output=True,
            )
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def running_server() -> Iterator[PostgresServer]:
    """A new server, stopped on exit; the test is skipped, saying why, where none can start
    (no server binaries, or no psycopg)."""
    import pytest

    why = unavailable()
    if why is not None:
        pytest.skip(f"PostgreSQL tests need a server: {why}")
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()
