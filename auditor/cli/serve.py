"""The command line of ``auditor serve``: the history in a browser and over HTTP.

Part of the CLI layer with :mod:`auditor.cli` (the only modules that read argv, print and
exit). The server binds 127.0.0.1 unless told otherwise; any other address needs a token
(``--token-file``, or ``$AUDITOR_SERVE_TOKEN``). It binds its socket itself before uvicorn
starts, so ``--port 0`` takes a free port and the line it prints names the real one.

Touches: the network, the database, the disk.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from auditor.cli.args import EXIT_FAILED, EXIT_OK, add_db_option
from auditor.cli.commands import line
from auditor.errors import UsageError

if TYPE_CHECKING:
    import socket

__all__ = ["TOKEN_ENV", "add_serve_command"]

#: Where the token is read from when no --token-file is given.
TOKEN_ENV = "AUDITOR_SERVE_TOKEN"
#: Shortest token accepted: 16 characters of a random token are ~95 bits (base64url).
MIN_TOKEN = 16
#: The port served unless --port says otherwise.
DEFAULT_PORT = 8765


def add_serve_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``serve``."""
    from auditor.report import DEFAULT_REPORTS_DIR

    serve = commands.add_parser(
        "serve",
        help=line("serve"),
        description="Serve the history, read-only: the fleet's verdicts, each site's "
        "timeline, segments, plan and report (drawn when first opened), and a JSON API "
        "under /api/v1 with a trust look-up for crawlers. Binds 127.0.0.1 unless told "
        f"otherwise; any other address needs a token (--token-file or ${TOKEN_ENV}).",
    )
    add_db_option(serve)
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to bind (default 127.0.0.1: this machine alone; any other needs a token)",
    )
    serve.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"the port to bind (default {DEFAULT_PORT}; 0: a free one, printed)",
    )
    serve.add_argument(
        "--token-file",
        metavar="FILE",
        help=f"a file holding the token every request must carry (default: ${TOKEN_ENV}); "
        "needed beyond 127.0.0.1",
    )
    serve.add_argument(
        "--reports",
        default=str(DEFAULT_REPORTS_DIR),
        metavar="DIR",
        help=f"where reports are drawn when first opened (default {DEFAULT_REPORTS_DIR}/, "
        "as `auditor report`)",
    )
    serve.add_argument(
        "--root-path",
        default="",
        metavar="PATH",
        help="the path prefix a reverse proxy serves this under (e.g. /auditor)",
    )
    serve.set_defaults(handler=_cmd_serve)


def _port(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{number} is not a port (0 to 65535)")
    return number


def read_token(path: str | None) -> str | None:
    """The token of ``path``, else of ``$AUDITOR_SERVE_TOKEN``, else None; a usage error
    when it is too short or holds characters a header or cookie cannot carry."""
    if path is not None:
        try:
            token = Path(path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--token-file {path}: cannot read it: {exc}") from None
        source = f"--token-file {path}"
    else:
        token = os.environ.get(TOKEN_ENV, "").strip()
        source = f"${TOKEN_ENV}"
        if not token:
            return None
    if len(token) < MIN_TOKEN:
        raise UsageError(f"{source}: the token is shorter than {MIN_TOKEN} characters")
    if not all(33 <= ord(c) < 127 and c not in ';,"\\' for c in token):
        raise UsageError(f"{source}: the token holds spaces, quotes, ; , \\ or non-ASCII")
    return token


def _cmd_serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from auditor.serve.app import create_app
    except ImportError as exc:
        raise UsageError(
            f"auditor serve needs Starlette and uvicorn ({exc.name} is missing): "
            "pip install 'auditor[serve]'"
        ) from None
    from auditor.history.location import locate
    from auditor.serve.guard import is_loopback
    from auditor.serve.state import ServeConfig, Served

    token = read_token(args.token_file)
    if token is None and not is_loopback(args.host):
        raise UsageError(
            f"--host {args.host} reaches beyond this machine: give a token "
            f"(--token-file FILE or ${TOKEN_ENV}), which every request must then carry"
        )
    config = ServeConfig(args.db, Path(args.reports), token=token, root_path=args.root_path)
    listening = _bound(args.host, args.port)
    try:
        served = Served.start(config)  # a history that cannot be read stops us here
    except BaseException:
        listening.close()
        raise
    host, port = listening.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(
        f"auditor: serving {locate(args.db)} at http://{shown}:{port}{args.root_path}/"
        f"{' (a token is asked)' if token else ''}; Ctrl-C stops\n"
    )
    sys.stderr.flush()
    _uvicorn_logs_to_ours()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config, served),
            log_config=None,  # the project's logging (auditor.logs), as every command
            access_log=False,  # requests are logged by auditor.serve.app, queries left out
            root_path=args.root_path,
            proxy_headers=True,
            server_header=False,
            timeout_graceful_shutdown=5,
        )
    )
    with _stopped_by_signals():
        server.run(sockets=[listening])
    return EXIT_OK if server.started else EXIT_FAILED


class _Stop(Exception):
    """SIGTERM, raised again by uvicorn once it has shut down."""


@contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """Ctrl-C and SIGTERM stop the server and the command ends with 0: uvicorn shuts down
    gracefully, then raises the signal again, which ends here."""

    def stop(_signum: int, _frame: FrameType | None) -> None:
        raise _Stop

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    except (KeyboardInterrupt, _Stop):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Forward(logging.Handler):
    """Hands uvicorn's records to auditor's logger, at auditor's level."""

    def __init__(self, target: logging.Logger) -> None:
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        if self.target.isEnabledFor(record.levelno):
            record.name = self.target.name
            self.target.handle(record)


def _uvicorn_logs_to_ours() -> None:
    """uvicorn's own messages (its start, its stop, an error inside the server) go where
    every auditor command's go: stderr, at -v/-q's level, as ``serve.uvicorn``."""
    uvicorn_log = logging.getLogger("uvicorn")
    uvicorn_log.handlers = [_Forward(logging.getLogger("auditor.serve.uvicorn"))]
    uvicorn_log.propagate = False
    uvicorn_log.setLevel(logging.DEBUG)


def _bound(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port``; a usage error when it cannot be bound."""
    import socket  # here: --help needs none

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say they are TCP;
    # without it every keep-alive answer waited out a delayed ACK (44 ms a request)
    listening = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host.strip("[]"), port))
    except OSError as exc:
        listening.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    listening.listen(2048)
    listening.set_inheritable(True)
    return listening
