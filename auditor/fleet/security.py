"""TLS for a fleet on a cluster a team exposes: ``--cluster tls://...``.

- **The client** (where ``auditor`` runs) proves itself to the scheduler with its own
  certificate, signed by the cluster's CA, and checks the scheduler's against that CA
  (:func:`client_security`). The files come from ``--tls-ca-file``, ``--tls-cert`` and
  ``--tls-key`` (the names ``dask scheduler`` and ``dask worker`` use), or, for what
  is not given, from Dask's own configuration (``distributed.comm.tls.ca-file``,
  ``distributed.comm.tls.client.cert`` and ``.key``), so a team's Dask config works
  as it is. Encryption is required: no connection of the client goes in clear.
- **The host table's socket** (:mod:`auditor.fleet.channel`) is TLS whenever its
  worker talks TLS, with *the workers' own* Dask certificates: the table's worker
  serves it with its certificate, a site's worker connects with its own, and each
  verifies the other's against the cluster's CA, as Dask does between workers
  (:func:`listen_context`, :func:`connect_context`). Nothing about certificates travels
  with the fleet's tasks: each worker already holds what it joined the cluster with
  (files on its machine, or PEM in memory), and the client's private key never leaves
  the client's machine.

Touches: the disk.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING, Any

from auditor.errors import UsageError

if TYPE_CHECKING:
    from distributed.security import Security

__all__ = ["client_security", "connect_context", "listen_context", "uses_tls"]

#: The client's certificate fields of :class:`distributed.security.Security`, and the
#: option that gives each.
_OPTIONS = {
    "tls_ca_file": "--tls-ca-file",
    "tls_client_cert": "--tls-cert",
    "tls_client_key": "--tls-key",
}


def uses_tls(address: str) -> bool:
    """True when the scheduler at ``address`` is reached over TLS (``tls://``, or no
    scheme and Dask's ``distributed.comm.default-scheme`` is ``tls``)."""
    from distributed.comm.addressing import parse_address

    protocol, _ = parse_address(address)
    return bool(protocol == "tls")


def client_security(
    address: str | None, *, ca_file: str | None, cert: str | None, key: str | None
) -> Security | None:
    """The client's TLS security for the scheduler at ``address``: the files given, and
    Dask's configuration for those not given; None for a plain cluster. A TLS address
    without a CA and a certificate, a file that cannot be read or used, or certificate
    options without a TLS address is a :class:`UsageError`."""
    given = {"tls_ca_file": ca_file, "tls_client_cert": cert, "tls_client_key": key}
    if address is None or not uses_tls(address):
        named = [_OPTIONS[field] for field, value in given.items() if value is not None]
        if named:
            raise UsageError(f"{', '.join(named)}: only for a --cluster tls://... address")
        return None
    from distributed.security import Security

    chosen = {field: value for field, value in given.items() if value is not None}
    security = Security(require_encryption=True, **chosen)  # type: ignore[no-untyped-call]
    _check_complete(address, security)
    _check_usable(security)
    return security


def _check_complete(address: str, security: Security) -> None:
    if getattr(security, "tls_ca_file", None) and getattr(security, "tls_client_cert", None):
        return  # (__slots__ set in __init__: mypy does not see them)
    raise UsageError(
        f"--cluster {address} is TLS: give the cluster's CA certificate (--tls-ca-file) "
        "and this client's certificate, signed by that CA (--tls-cert, and --tls-key "
        "unless the key is in the same file), or set them in Dask's configuration "
        "(distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and .key)"
    )


def _check_usable(security: Security) -> None:
    """Each file readable, the certificate and key one pair: a usage error naming the
    file rather than Dask's traceback when it first connects."""
    for field, option in _OPTIONS.items():
        value = getattr(security, field)
        if value is None or "\n" in value:  # not given, or PEM itself (Dask's config)
            continue
        try:
            with open(value, "rb"):
                pass
        except OSError as exc:
            raise UsageError(f"{option} {value}: cannot be read: {exc.strerror}") from exc
    try:
        security.get_connection_args("client")  # type: ignore[no-untyped-call]
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise UsageError(f"the TLS certificates cannot be used: {exc}") from exc


def listen_context(worker: Any) -> ssl.SSLContext | None:
    """The context ``worker`` (a :class:`distributed.Worker`) serves TLS with: its own
    certificate, peers' required and checked against the cluster's CA; None when it
    has no certificate (a plain worker)."""
    context = worker.security.get_listen_args("worker")["ssl_context"]
    return context if isinstance(context, ssl.SSLContext) else None


def connect_context() -> ssl.SSLContext | None:
    """The context the current Dask worker connects with over TLS (its certificate,
    the peer's checked against the cluster's CA), as it does to other workers; None
    outside a worker or on a plain one."""
    from distributed import get_worker

    try:
        worker = get_worker()
    except ValueError:  # not in a worker's task
        return None
    context = worker.connection_args.get("ssl_context")
    return context if isinstance(context, ssl.SSLContext) else None
