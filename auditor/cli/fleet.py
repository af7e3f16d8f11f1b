"""The command line of fleets: ``audit``/``reverify`` with many sites, ``--sites``,
``--concurrency``, ``--cluster``; JSON Lines as sites finish, a progress display, a
summary. Part of the CLI layer (reads argv, prints, exits).

Interruption: SIGINT (Ctrl-C) or SIGTERM stops the fleet. Sites already finished
are saved (each was saved as it came back), sites in flight are dropped unsaved,
the fleet index is refreshed, the summary says so, and the exit status is 130
(SIGINT) or 143 (SIGTERM). A fault that stops the fleet (its Dask scheduler lost, the
history unreachable past its reconnect window) ends it the same way, with an
``auditor:`` line saying why and exit status 1. ``audit --resume`` then audits only the
sites of the crawl list that have no run of the fleet yet.

Touches: the network, the database, the disk.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from contextlib import closing, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from auditor.cli.args import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    no_site_listed,
    non_negative_float,
    positive_float,
    positive_int,
)
from auditor.errors import AuditorError, HistoryError, UsageError
from auditor.fleet.defaults import DEFAULT_SITE_TIMEOUT, SITES_PER_CORE, default_concurrency
from auditor.history.backend import RECONNECT_SECONDS
from auditor.words import counted

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from auditor.audit import AuditOptions
    from auditor.fleet import CrawlList, FleetProgress, SiteFailure
    from auditor.fleet.reports import ReportWriter
    from auditor.history import History
    from auditor.history.fleets import FleetPlan
    from auditor.scorer.result import AuditResult

__all__ = [
    "REPORT_POLICIES",
    "add_fleet_options",
    "is_fleet",
    "report_path",
    "run_fleet",
    "sites_of",
    "wants_report",
]

EXIT_SIGINT, EXIT_SIGTERM = EXIT_INTERRUPTED, 143  # 128 + the signal, as shells report it
#: What ``--reports`` may ask a fleet to draw; the first is the default.
REPORT_POLICIES = ("changed", "all", "none")


#: Said once on stderr by a fleet run without ``--contact``: its User-Agent names auditor
#: alone, and the sites it crawls cannot reach whoever runs it.
NO_CONTACT = (
    "auditor: no --contact given (nor $AUDITOR_CONTACT): the User-Agent names auditor"
    " alone, and the sites cannot reach whoever runs this crawl\n"
)


def add_fleet_options(parser: argparse.ArgumentParser, *, crawl_list: bool = True) -> None:
    """--sites (for audit), --concurrency, --cluster (and its TLS certificates) and
    --site-timeout."""
    if crawl_list:
        parser.add_argument(
            "--sites",
            action="append",
            default=[],
            metavar="FILE",
            help="a crawl list: one site a line, # comments, - for stdin (may be repeated)",
        )
        parser.add_argument(
            "--resume",
            action="store_true",
            help="take up this crawl list's last fleet if it was cut short: audit only its "
            "sites that have no run of it yet (else a new fleet of every site)",
        )
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        metavar="N",
        help=f"sites in flight at once (default: {SITES_PER_CORE} per core here, "
        f"{default_concurrency()}; on a cluster, its worker threads); politeness per host "
        "holds whatever N",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run the sites on this Dask scheduler (e.g. tcp://10.0.0.5:8786); the "
        "history stays here",
    )
    for option, what in (
        ("--tls-ca-file", "the cluster's CA certificate"),
        ("--tls-cert", "this client's certificate, signed by that CA"),
        ("--tls-key", "this client's private key (unless it is in the --tls-cert file)"),
    ):
        parser.add_argument(
            option,
            metavar="FILE",
            help=f"for --cluster tls://...: {what}, PEM (default: Dask's "
            "distributed.comm.tls configuration)",
        )
    parser.add_argument(
        "--site-timeout",
        type=positive_float,
        default=DEFAULT_SITE_TIMEOUT,
        metavar="S",
        help=f"in a fleet, a site not finished after S seconds is recorded as failed "
        f"(default {DEFAULT_SITE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--reports",
        choices=REPORT_POLICIES,
        default=REPORT_POLICIES[0],
        help="in a fleet, the site reports drawn as sites finish: those whose verdict "
        "changed since their previous run, a first audit's included (default), all, or "
        "none; the fleet index links every site, and `auditor report --all` draws the rest",
    )
    parser.add_argument(
        "--db-reconnect",
        type=non_negative_float,
        default=RECONNECT_SECONDS,
        metavar="S",
        help="seconds a PostgreSQL history whose connection was lost (a restart) keeps "
        f"connecting again before the command stops (default {RECONNECT_SECONDS:g})",
    )


def sites_of(args: argparse.Namespace) -> CrawlList:
    """The crawl list of ``audit``: SITE arguments, then ``--sites`` files."""
    from auditor.fleet import crawl_list

    found = crawl_list(args.site, args.sites)
    if not found.sites and args.sites:
        raise no_site_listed("audit", args.sites)
    if not found.sites:
        raise UsageError("no site to audit: give SITE arguments or --sites FILE")
    return found


def is_fleet(args: argparse.Namespace, sites: int) -> bool:
    """True when the sites run as a fleet: more than one, or fleet options given."""
    fleet_options = args.concurrency is not None or args.cluster is not None
    return sites > 1 or fleet_options or getattr(args, "resume", False)


def run_fleet(
    args: argparse.Namespace, found: CrawlList, options: AuditOptions, history: History
) -> int:
    """Audit ``found`` as a fleet; print each result as it is saved, then a summary.

    The reports ``--reports`` asks for are drawn by a pool of processes
    (:class:`ReportWriter`) while the fleet goes on. Only what the summary needs of each
    site is kept, so a long crawl list costs no memory here."""
    from auditor.fleet import audit_fleet
    from auditor.fleet.heap import collector_for_fleet
    from auditor.fleet.reports import (
        DRAWING_NICENESS,
        ReportWriter,
        reports_coming,
        started_with_first_sent,
    )
    from auditor.fleet.security import client_security

    security = client_security(  # a usage error before the fleet is planned
        args.cluster, ca_file=args.tls_ca_file, cert=args.tls_cert, key=args.tls_key
    )
    plan = _planned(args, found, history)
    if plan is not None:
        found = found.only(plan.todo)
    if not args.contact:
        sys.stderr.write(NO_CONTACT)
    from auditor.cli.progress import fleet_display
    from auditor.cli.summary import Tally, summary

    display = fleet_display(len(found), args)
    small = _all_in_flight(args, found)  # its results all come at its end
    outcomes: list[Any] = []  # what the summary reads of each site done
    status, stopped = EXIT_OK, None
    out = Path(args.out)
    with (
        collector_for_fleet(),  # the command runs the scheduler and saves every site
        _dask_logs(getattr(args, "verbose", 0)),
        _connected(args.cluster, security) as client,
        ReportWriter(history, out, niceness=0 if small else DRAWING_NICENESS) as reports,
    ):
        shown: Callable[[FleetProgress], None] = display.show
        if small and reports_coming(args.reports, found.sites, history):
            shown = started_with_first_sent(reports, display.show)
        with _signals() as stops:
            fleet = audit_fleet(
                found,
                history,
                options,
                concurrency=args.concurrency,
                client=client,
                site_timeout=args.site_timeout,
                on_progress=shown,
                fleet=None if plan is None else plan.fleet_id,
            )
            try:
                with closing(fleet):
                    for outcome in fleet:  # saved: it counts as done from now on
                        with _signals_held():
                            _saved(outcome, outcomes, args, reports)
                        _stop_if_signalled(stops)
                    _stop_if_signalled(stops)
                    reports.drain()
            except KeyboardInterrupt:
                status = EXIT_SIGINT
            except _Terminated:
                status = EXIT_SIGTERM
            except AuditorError as exc:  # a fault the fleet cannot go on through
                status, stopped = EXIT_FAILED, exc
            finally:
                display.close()
        reachable = not isinstance(stopped, HistoryError)
        if status != EXIT_OK:  # the reports of the sites saved before the stop, those
            reports.drain(queued=reachable)  # whose data can still be read
        reports.take()
        drawn = reports.written
    if plan is not None and status == EXIT_OK:
        history.end_fleet(plan.fleet_id)  # every site had its turn: no resume of it
    if stopped is not None:
        sys.stderr.write(f"auditor: the fleet stopped early: {stopped}\n")
    index = _refresh_index(history, out) if reachable else None
    tally = Tally.of(outcomes, display.last, len(found), status, stopped, plan)
    summary(replace(tally, reports=drawn, report_policy=args.reports), index, args,
            pages=display.pages)  # fmt: skip
    if status == EXIT_OK and tally.failed:
        status = EXIT_FAILED
    return status


def _all_in_flight(args: argparse.Namespace, found: CrawlList) -> bool:
    """True for a small fleet: every site in flight at once (on a local cluster, or with
    ``--concurrency`` as large), so its results all come at its end. Its report pool
    then draws at the fleet's priority, and starts with the fleet when it will draw
    (:mod:`auditor.fleet.reports`)."""
    slots = args.concurrency or (default_concurrency() if args.cluster is None else 0)
    return len(found) <= slots


def _planned(args: argparse.Namespace, found: CrawlList, history: History) -> FleetPlan | None:
    """For ``audit``: the fleet's plan recorded in the history (its sites, so ``reverify``
    knows those never audited), or the plan of its cut-short fleet taken up (--resume)."""
    if not hasattr(args, "resume"):
        return None  # reverify: its sites are known to the history already
    plan = history.plan_fleet(found.sites, resume=args.resume)
    if plan.resumed and not getattr(args, "quiet", False):
        sys.stderr.write(
            f"auditor: resuming fleet {plan.fleet_id} of {plan.started_at:%Y-%m-%d %H:%M} "
            f"UTC: {plan.done_before} of {counted(plan.total, 'site')} already done, "
            f"{len(plan.todo)} to audit\n"
        )
    return plan


def _saved(
    outcome: AuditResult | SiteFailure,
    outcomes: list[Any],
    args: argparse.Namespace,
    reports: ReportWriter,
) -> None:
    """A site is saved: print its line (JSON Lines with --json) and keep in ``outcomes``
    what the summary needs of it, then send its report to be drawn if ``--reports``
    asks for it (the line names the report's file, written by the end of the command)."""
    from auditor.fleet import SiteFailure

    drawn = False
    if isinstance(outcome, SiteFailure):
        outcomes.append(outcome)
        line = f"{outcome.site}: FAILED ({outcome.code}): {outcome.detail}\n"
    else:
        outcomes.append(_Done(outcome.site, outcome.verdict))
        drawn = wants_report(outcome, args.reports)
        if drawn:
            outcome = replace(outcome, report=str(report_path(Path(args.out), outcome.site)))
        line = f"{outcome.site}: {outcome.verdict}\n"
    if args.json:
        line = json.dumps(outcome.to_dict(), ensure_ascii=False) + "\n"
    sys.stdout.write(line)
    sys.stdout.flush()  # a line a write: a buffer filling mid-line never splits one
    if drawn:
        reports.add(outcome.site)
    reports.take()  # forget those drawn meanwhile (counted)


def wants_report(result: AuditResult, policy: str) -> bool:
    """Whether a fleet draws ``result``'s report under ``--reports policy``: ``all``,
    ``none``, or ``changed`` (the default): the sites whose verdict is not the one of
    their previous run, a site's first run included (its verdict is new)."""
    if policy == "all":
        return True
    if policy == "none":
        return False
    return result.previous_verdict != result.verdict


def report_path(out: Path, site: str) -> Path:
    """Where ``site``'s report is written under ``out``."""
    from auditor.report import site_slug

    return out / site_slug(site) / "index.html"


@dataclass(frozen=True)
class _Done:
    """What the summary keeps of a site with a result."""

    site: str
    verdict: str


def _refresh_index(history: History, out: Path) -> Path:
    """The fleet index of every site, whether or not its report is drawn."""
    from auditor.report import refresh_fleet_index

    return refresh_fleet_index(history, out)


@contextmanager
def _connected(address: str | None, security: Any) -> Iterator[Any]:
    """A Dask client of the scheduler at ``address`` (None: no client, a local cluster),
    with ``security`` (:func:`auditor.fleet.security.client_security`) for TLS."""
    if address is None:
        yield None
        return
    from distributed import Client

    try:
        client = Client(address, security=security, timeout=30)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as exc:
        raise AuditorError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc
    try:
        yield client
    finally:
        with _quiet_if_lost(client):
            client.close()  # type: ignore[no-untyped-call]


@contextmanager
def _dask_logs(verbose: int) -> Iterator[None]:
    """Dask's own log lines at WARNING and above for the fleet's length (INFO with -v):
    its INFO lines (connections opened and closed, a lost scheduler's comms closing,
    with their tracebacks) are not the user's business; what matters, the fleet says."""
    import logging

    import distributed  # noqa: F401 - it sets its loggers' levels when first imported

    with _logger_at("distributed", logging.INFO if verbose else logging.WARNING):
        yield


@contextmanager
def _quiet_if_lost(client: Any) -> Iterator[None]:
    """A client that lost its scheduler is still trying to connect again; closing it
    cancels that, which Dask logs as an error with a traceback. The fleet already said
    what happened (an ``auditor:`` line): that log is left out."""
    import logging

    if str(client.status) == "running":
        yield
        return
    with _logger_at("distributed.client", logging.CRITICAL):
        yield


@contextmanager
def _logger_at(name: str, level: int) -> Iterator[None]:
    """The logger ``name`` at ``level`` inside, at its own level again after."""
    import logging

    logger = logging.getLogger(name)
    before = logger.level
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.setLevel(before)


class _Terminated(BaseException):
    """SIGTERM arrived: stop the fleet as for Ctrl-C."""


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM arriving inside take effect once it is left: a finished site
    is printed whole and kept for the summary, whatever the moment of a Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    handlers = {
        number: signal.signal(number, lambda got, _frame: held.append(got))
        for number in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        if held:
            signal.raise_signal(held[0])  # as it would have been, now


@contextmanager
def _signals() -> Iterator[list[int]]:
    """While the fleet runs, SIGINT raises KeyboardInterrupt and SIGTERM
    :class:`_Terminated`, and each is kept in the list yielded: raised inside a finalizer
    or a garbage collector's callback (a Dask future let go, distributed's GC diagnosis),
    the exception is printed and dropped by Python, so the fleet's loop checks the list
    too (:func:`_stop_if_signalled`). The handlers are given back after."""
    got: list[int] = []

    def stop(signum: int, _frame: FrameType | None) -> None:
        got.append(signum)
        raise KeyboardInterrupt if signum == signal.SIGINT else _Terminated

    previous = {number: signal.signal(number, stop) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield got
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _stop_if_signalled(got: list[int]) -> None:
    """Raise what the first signal that arrived raises (KeyboardInterrupt for SIGINT,
    :class:`_Terminated` for SIGTERM), whether or not its own raise was dropped on the
    way."""
    if got:
        raise KeyboardInterrupt if got[0] == signal.SIGINT else _Terminated
