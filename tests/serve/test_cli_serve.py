"""``auditor serve`` from the command line, in a process: it serves, it asks a token
beyond loopback, it refuses what it cannot serve, it never writes to the history, and
Ctrl-C stops it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

import httpx
import pytest

from auditor.cli import main
from auditor.report.site import site_slug
from tests.serve.conftest import Audited
from tests.serve.live import PROJECT, serve_process

TOKEN = "Zr3Yb9-qL2x7Wn4Kc8Vt1Hs6Pd0Mf5Gj"


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_it_serves_the_history_read_only_and_stops_on_ctrl_c(audited: Audited, tmp_path):
    database = tmp_path / "history.sqlite3"
    shutil.copy(audited.database, database)
    before = _digest(database)
    slug = site_slug(audited.origins["mixed"])
    with serve_process("--db", str(database), "--reports", str(tmp_path / "r")) as (base, child):
        with httpx.Client(base_url=base, timeout=60) as client:
            for path in ("/", f"/sites/{slug}", f"/reports/{slug}/index.html",
                         f"/api/v1/sites/{slug}/plan", "/api/v1/sites?sort=-due"):  # fmt: skip
                assert client.get(path).status_code == 200, path
        child.send_signal(2)  # Ctrl-C
        assert child.wait(timeout=20) == 0
    assert _digest(database) == before  # not a byte written
    assert (tmp_path / "r" / slug / "index.html").is_file()


def test_beyond_loopback_a_token_is_required(audited: Audited, tmp_path, capsys):
    assert main(["serve", "--db", str(audited.database), "--host", "0.0.0.0"]) == 2
    assert "give a token" in capsys.readouterr().err
    short = tmp_path / "short"
    short.write_text("abc\n", encoding="utf-8")
    args = ["serve", "--db", str(audited.database), "--token-file", str(short)]
    assert main(args) == 2
    assert "shorter than 16" in capsys.readouterr().err


def test_every_request_to_a_server_beyond_loopback_carries_the_token(audited: Audited, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n", encoding="utf-8")
    args = ("--db", str(audited.database), "--host", "0.0.0.0", "--token-file", str(token_file))
    with serve_process(*args, "--reports", str(tmp_path / "r")) as (base, _):
        here = base.replace("0.0.0.0", "127.0.0.1")  # reached through loopback alone
        with httpx.Client(base_url=here, timeout=60) as client:
            for path in ("/", "/api/v1/sites", "/api/v1/trust?url=https://a.example/"):
                assert client.get(path).status_code == 401, path
            assert client.get("/healthz").status_code == 200
            bearer = {"authorization": f"Bearer {TOKEN}"}
            assert client.get("/api/v1/sites", headers=bearer).status_code == 200
            assert client.get("/", headers=bearer).status_code == 200


def test_the_token_may_come_from_the_environment(audited: Audited, tmp_path):
    env = {"AUDITOR_SERVE_TOKEN": TOKEN}
    bearer = {"authorization": f"Bearer {TOKEN}"}
    with (
        serve_process("--db", str(audited.database), env=env) as (base, _),
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        assert client.get("/").status_code == 401
        assert client.get("/", headers=bearer).status_code == 200


def test_a_history_that_does_not_exist_is_refused_and_not_made(tmp_path):
    missing = tmp_path / "nothing-here.sqlite3"
    done = subprocess.run(
        [sys.executable, "-m", "auditor", "serve", "--db", str(missing), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": PROJECT},
    )
    assert done.returncode == 1
    assert str(missing) in done.stderr and "Traceback" not in done.stderr
    assert not missing.exists()


def test_a_port_taken_is_a_usage_error(audited: Audited):
    with serve_process("--db", str(audited.database)) as (base, _):
        port = base.rsplit(":", 1)[1]
        args = ["serve", "--db", str(audited.database), "--port", port]
        done = subprocess.run(
            [sys.executable, "-m", "auditor", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": PROJECT},
        )
        assert done.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in done.stderr


@pytest.mark.parametrize("secret", ["X-Api-Key: s3cr3t-header-value-91f2"])
def test_header_secrets_given_to_audits_never_appear(tmp_path, secret):
    from auditor.demo import demo_sites
    from auditor.demo.server import SiteServer

    database = tmp_path / "history.sqlite3"
    site = demo_sites()["accurate-jsonld"]
    with SiteServer(site) as origin_server:
        origin = origin_server.origin
        for _ in range(2):
            args = ["audit", origin, "--db", str(database), "--header", secret,
                    "--sample", "8", "--delay", "0", "--out", str(tmp_path / "out")]  # fmt: skip
            assert main(args) == 0
    value = secret.split(": ", 1)[1]
    slug = site_slug(origin)
    paths = ("/", f"/sites/{slug}", f"/reports/{slug}/index.html", f"/api/v1/sites/{slug}",
             f"/api/v1/sites/{slug}/runs", f"/api/v1/sites/{slug}/segments",
             f"/api/v1/sites/{slug}/plan", f"/api/v1/trust?url={origin}/")  # fmt: skip
    with (
        serve_process("--db", str(database), "--reports", str(tmp_path / "r")) as (base, _),
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        for path in paths:
            answer = client.get(path)
            assert answer.status_code == 200, path
            assert value not in answer.text


def test_the_socket_served_says_it_is_tcp():
    """asyncio sets TCP_NODELAY only on a socket that names its protocol: without it each
    answer on a keep-alive connection waited out the client's delayed ACK (44 ms)."""
    import socket

    from auditor.cli.serve import _bound

    listening = _bound("127.0.0.1", 0)
    try:
        assert listening.proto == socket.IPPROTO_TCP
    finally:
        listening.close()
