"""The rebuild's notifications (flows/notify.py) against a real Prefect server: a failed rebuild and a moved
headline each reach a webhook receiver on 127.0.0.1, sent by the server's own automations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import prefect_server

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # a Prefect server and its automations

REPO = Path(__file__).resolve().parents[1]

FAILING_REBUILD = """
from prefect import flow

@flow(name="rebuild")
def rebuild():
    raise RuntimeError("dvc repro failed in stage split")

try:
    rebuild()
except RuntimeError:
    pass
"""

MOVED = """
from flows.notify import emit_moved, moved_figures
before = {"quail": {"pmi": {"acc": 42.03}, "random": {"acc": 24.9}}}
after = {"quail": {"pmi": {"acc": 43.2}, "random": {"acc": 24.9}, "new_system": {"acc": 30.0}}}
moved = moved_figures(after, before)
assert moved == ["quail/pmi acc: 42.03 -> 43.2"], moved
emit_moved("/work/checkout", moved)
"""


def _receiver() -> tuple[ThreadingHTTPServer, list[dict]]:
    got: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            got.append(json.loads(body))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, got


def _run(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_failed_rebuild_and_a_moved_headline_reach_the_webhook(tmp_path):
    receiver, got = _receiver()
    url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
    try:
        (tmp_path / "home").mkdir()
        with prefect_server(tmp_path / "home") as api:
            env = dict(os.environ, PREFECT_API_URL=api, PYTHONPATH=str(REPO))
            for _ in range(2):  # set up again: the automations are replaced, not doubled
                done = subprocess.run([sys.executable, "-m", "flows.notify", "--webhook", url], cwd=REPO, env=env,
                                      capture_output=True, text=True, timeout=300)
                assert done.returncode == 0 and "rebuild failed" in done.stdout, done.stderr[-2000:]
            from tests import prefect_http

            names = [a["name"] for a in prefect_http.post(f"{api}/automations/filter", json={}, timeout=60).json()]
            assert sorted(names) == ["qa-pipeline: headline moved", "qa-pipeline: rebuild failed"], names
            assert _run(FAILING_REBUILD, env).returncode == 0
            moved = _run(MOVED, env)
            assert moved.returncode == 0, moved.stderr[-2000:]
            deadline = time.monotonic() + 180
            while len(got) < 2 and time.monotonic() < deadline:
                time.sleep(1)
    finally:
        receiver.shutdown()
    subjects = sorted(m["subject"] for m in got)
    assert len(got) == 2, got
    failed = next(m for m in got if "failed" in m["subject"])
    assert "ended Failed" in failed["body"] and "dvc repro failed in stage split" in failed["body"], failed
    moved_message = next(m for m in got if "moved" in m["subject"])
    assert moved_message["subject"] == "qa-pipeline: 1 headline figure(s) moved", subjects
    assert "/work/checkout" in moved_message["body"] and "quail/pmi acc: 42.03 -> 43.2" in moved_message["body"]


def test_the_webhook_must_be_an_http_url_with_a_host():
    from flows.notify import check_url

    for bad in ("file:///etc/passwd", "ftp://host/x", "http://", "javascript:alert(1)"):
        with pytest.raises(ValueError, match="http\\(s\\) URL with a host"):
            check_url(bad)
    assert check_url("https://hooks.example.org/x") == "https://hooks.example.org/x"


def test_make_serve_refuses_a_notify_url_that_is_not_a_web_address():
    from flows.serve import argument_refusal, parse_args

    refused = argument_refusal(parse_args(["--notify", "file:///etc/passwd"]))
    assert refused is not None and refused.startswith("--notify: the webhook must be an http(s) URL")
    assert argument_refusal(parse_args(["--notify", "https://hooks.example.org/x"])) is None
