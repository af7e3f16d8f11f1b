"""auditor demo --serve: the demo's sites kept up on loopback for practice, printed one
line each, changed on a signal or every so often, stopped cleanly by Ctrl-C or SIGTERM.

Each test starts the command in a background process, as a user would in a terminal of
its own; every wait is bounded, so a failure never hangs the suite.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import pytest

from auditor.cli import main
from auditor.demo import demo_sites
from auditor.demo.site import BEHAVIOURS

PROJECT = str(Path(__file__).resolve().parents[2])
#: Seconds any one step may take on a loaded machine before the test gives up.
PATIENCE = 60
#: urllib without the environment's proxies: loopback only.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Served:
    """``auditor demo --serve ARGS`` in a background process, its output read by lines."""

    def __init__(self, *args: str) -> None:
        self._watch(
            subprocess.Popen(
                [sys.executable, "-m", "auditor", "demo", "--serve", *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=PROJECT,
                env={**os.environ, "PYTHONPATH": PROJECT},
            )
        )

    @classmethod
    def watching(cls, process: subprocess.Popen[str]) -> Served:
        """One started otherwise (stdout and stderr piped, as text)."""
        served = cls.__new__(cls)
        served._watch(process)
        return served

    def _watch(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        self._pumps = [
            threading.Thread(target=_pump, args=(stream, lines), daemon=True)
            for stream, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err))
        ]
        for pump in self._pumps:
            pump.start()

    def line(self, lines: queue.Queue[str], starting: str = "") -> str:
        """The next line of ``lines`` that starts with ``starting`` (fails after PATIENCE)."""
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            try:
                got = lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None and lines.empty():
                    break  # it ended: no more lines will come
                continue
            if got.startswith(starting):
                return got
        said = " | ".join(self.err.queue)
        raise AssertionError(f"no line starting {starting!r} (exit {self.process.poll()}): {said}")

    def sites(self) -> dict[str, str]:
        """Behaviour -> URL, from the lines printed at start (one per demo site)."""
        printed = [self.line(self.out).split() for _ in demo_sites()]
        return {words[1]: words[0] for words in printed}

    def stop(self) -> None:
        """Kill it if still running (a failed test's clean-up); close its pipes."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=PATIENCE)
        for pump in self._pumps:
            pump.join(timeout=PATIENCE)  # it read to the end: the pipe can close
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def _pump(stream: IO[str], lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))


@pytest.fixture
def serve() -> Iterator[type[Served]]:
    started: list[Served] = []

    def start(*args: str) -> Served:
        started.append(Served(*args))
        return started[-1]

    yield start  # type: ignore[misc]
    for served in started:
        served.stop()


def _get(url: str) -> str:
    with DIRECT.open(url, timeout=PATIENCE) as response:
        return str(response.read().decode("utf-8"))


def _closed(url: str) -> bool:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError:
        return True
    return False


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_the_practice_sites_serve_change_on_sigusr1_and_stop_cleanly(serve, stop):
    served = serve("--change-every", "0")
    sites = served.sites()
    assert sorted(sites) == sorted([*BEHAVIOURS, "mixed"])
    assert all(url.startswith("http://127.0.0.1:") for url in sites.values())
    assert len(set(sites.values())) == len(sites)  # an origin each

    url = sites["accurate-jsonld"]
    inspected = subprocess.run(
        [sys.executable, "-m", "auditor", "inspect", url],
        capture_output=True, text=True, cwd=PROJECT, timeout=PATIENCE,
        env={**os.environ, "PYTHONPATH": PROJECT},
    )  # fmt: skip
    assert inspected.returncode == 0, inspected.stderr
    assert "lastmod" in inspected.stdout and url in inspected.stdout

    before = _get(url + "/sitemap.xml")
    served.process.send_signal(signal.SIGUSR1)
    changed = served.line(served.err, "changed:")
    assert changed.endswith(f"on {len(sites)} sites")
    assert int(changed.split()[1]) > 0
    after = _get(url + "/sitemap.xml")
    assert after != before  # an accurate site's lastmods follow its pages' changes

    served.process.send_signal(stop)
    assert served.process.wait(timeout=PATIENCE) == 0
    assert all(_closed(url) for url in sites.values())


def test_the_practice_sites_change_every_so_often_on_their_own(serve):
    served = serve("--change-every", "1")
    url = served.sites()["accurate-jsonld"]
    before = _get(url + "/sitemap.xml")
    served.line(served.err, "changed:")
    assert _get(url + "/sitemap.xml") != before
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(timeout=PATIENCE) == 0


def test_the_practice_sites_never_change_with_change_every_0(serve):
    served = serve("--change-every", "0")
    url = served.sites()["accurate-jsonld"]
    before = _get(url + "/sitemap.xml")
    time.sleep(2)
    assert _get(url + "/sitemap.xml") == before
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(timeout=PATIENCE) == 0
    said = []
    while not served.err.empty():
        said.append(served.err.get())
    assert not [line for line in said if line.startswith("changed:")]


@pytest.mark.parametrize(
    "args",
    [
        ["demo", "--serve", "--out", "somewhere"],
        ["demo", "--serve", "--db", "h.sqlite3"],
        ["demo", "--change-every", "5"],
    ],
)
def test_options_that_do_not_go_together_are_a_usage_error(args, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert capsys.readouterr().err.startswith("auditor: ")
    assert list(tmp_path.iterdir()) == []  # nothing served, nothing written


def _codes(result) -> set[str]:  # type: ignore[no-untyped-def]
    return {r.code for r in result.reasons} | {
        r.code for segment in result.segments for r in segment.reasons
    }


def test_a_change_right_away_reads_as_a_change_not_as_render_time(tmp_path):
    """A user audits, changes the sites (SIGUSR1) and re-audits within seconds: every
    change landed in the past, well before auditor's render-time window, one after the
    other on each page, so the frozen site is condemned for its lastmods alone and an
    accurate one stays trusted."""
    from auditor.audit import AuditOptions, audit_site
    from auditor.demo.serve import PracticeSites
    from auditor.evidence import RENDER_TIME_WINDOW
    from auditor.history import History
    from auditor.sampler import SampleOptions

    options = AuditOptions(sample=SampleOptions(sample=50, delay=0.0))
    with PracticeSites() as practice, History.open(tmp_path / "h.sqlite3") as history:
        origins = {site.name: site.origin for site in practice.served}
        first = {n: audit_site(origins[n], history, options) for n in ("frozen", "accurate-jsonld")}
        modified = {n: dict(_modified(practice, n)) for n in origins}
        for _ in range(3):  # changes in quick succession
            change = practice.change()
            assert change.pages > 0 and change.sites == len(origins)
        now = datetime.now(UTC)
        for name in origins:
            for path, moment in _modified(practice, name):
                assert moment >= modified[name][path]  # never back in time
                assert moment < now - RENDER_TIME_WINDOW
        second = {n: audit_site(origins[n], history, options) for n in first}

    assert first["frozen"].verdict == "trusted" and second["frozen"].verdict == "untrusted"
    assert first["accurate-jsonld"].verdict == second["accurate-jsonld"].verdict == "trusted"
    for result in second.values():
        assert not _codes(result) & {"render-time-date-modified", "shared-date-modified"}


def _modified(practice, name):  # type: ignore[no-untyped-def]
    """(path, when its content last changed) of each page of the practice site ``name``."""
    site = practice.sites[name]
    return [(page.path, page.modified) for page in site.pages.values()]


GETTING_STARTED = Path(PROJECT) / "docs" / "getting-started.md"


def _practice_blocks() -> list[list[tuple[str, str]]]:
    """The shell blocks of getting-started's practice section: (command, comment) lines."""
    text = GETTING_STARTED.read_text(encoding="utf-8")
    section = text.split("## Practise on the demo's sites", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return [
        [(line.split("#", 1)[0].strip(), line.partition("#")[2]) for line in block.splitlines()]
        for block in blocks
    ]


def test_getting_started_s_practice_runs_as_written(serve, tmp_path):
    """Its first block starts the sites; the next run in a second 'terminal' (a shell in
    an empty folder) on the URL of the site it names, a change between the two; each
    command exits 0 and prints the verdicts its comment announces in capitals."""
    start, before, after = _practice_blocks()
    assert [command for command, _ in start] == ["auditor demo --serve"]
    served = serve()
    sites = served.sites()
    env = {**os.environ, "PYTHONPATH": PROJECT}
    for n, (command, comment) in enumerate(before + after):
        if n == len(before):  # "after a change or two": two (one leaves the frozen site
            for _ in range(2):  # trusted about 1 time in 40, two never did in 160 trials)
                served.process.send_signal(signal.SIGUSR1)  # kill -USR1 PID
                served.line(served.err, "changed:")
        if command.startswith("SITE="):
            assert "frozen site" in comment
            env["SITE"] = sites["frozen"]
            continue
        if command.startswith("export "):
            name, value = command.removeprefix("export ").split("=", 1)
            env[name] = value
            continue
        assert command.startswith("auditor "), command
        shell = f"{shlex.quote(sys.executable)} -m {command}"
        ran = subprocess.run(
            ["bash", "-c", shell], capture_output=True, text=True, cwd=tmp_path, env=env,
            timeout=PATIENCE,
        )  # fmt: skip
        assert ran.returncode == 0, (command, ran.stderr)
        for word in re.findall(r"\b[A-Z]{4,}\b", comment):
            assert re.search(rf"\b{word}\b", ran.stdout), (command, word, ran.stdout)
    assert (tmp_path / "practice.sqlite3").is_file()
    served.process.send_signal(signal.SIGINT)  # Ctrl-C
    assert served.process.wait(timeout=PATIENCE) == 0


def _terminal_of_its_own() -> None:
    """In the child: a session of its own, whose controlling terminal is its stdin (a
    pty), and it in the foreground there: as a command typed in a terminal."""
    import fcntl
    import termios

    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_enter_in_the_serving_terminal_changes_the_sites(tmp_path):
    import pty

    keyboard, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "auditor", "demo", "--serve", "--change-every", "0"],
        stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=PROJECT, env={**os.environ, "PYTHONPATH": PROJECT},
        preexec_fn=_terminal_of_its_own,
    )  # fmt: skip
    os.close(terminal)
    served = Served.watching(process)
    try:
        url = served.sites()["accurate-jsonld"]
        assert "Enter" in served.line(served.err, "auditor: serving")
        before = _get(url + "/sitemap.xml")
        os.write(keyboard, b"\n")
        served.line(served.err, "changed:")
        assert _get(url + "/sitemap.xml") != before
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=PATIENCE) == 0
    finally:
        served.stop()
        os.close(keyboard)
