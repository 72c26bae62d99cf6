"""A shared Prefect server with API authentication and CSRF protection on, as the README tells a group to run
it: anonymous requests are refused, a client with PREFECT_API_AUTH_STRING works, a state-changing request
without a CSRF token is refused even with the password."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from flows._server import start_server
from pipeline.common.runtime import free_port, stop_process_group

SECRET = "team:correct-horse-battery"


@pytest.fixture(scope="module")
def locked_server(tmp_path_factory):
    home = tmp_path_factory.mktemp("prefect-auth-home")
    saved = {k: os.environ.get(k) for k in ("PREFECT_HOME", "PREFECT_SERVER_API_AUTH_STRING",
                                            "PREFECT_SERVER_API_CSRF_PROTECTION_ENABLED")}
    os.environ.update(PREFECT_HOME=str(home), PREFECT_SERVER_API_AUTH_STRING=SECRET,
                      PREFECT_SERVER_API_CSRF_PROTECTION_ENABLED="true")
    port = free_port()
    try:
        server = start_server("127.0.0.1", port, home / "server.log")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    try:
        yield f"http://127.0.0.1:{port}/api", home
    finally:
        stop_process_group(server)


def _basic(secret: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(secret.encode()).decode()}


def test_anonymous_and_wrong_password_are_refused(locked_server):
    api, _ = locked_server
    assert httpx.get(f"{api}/admin/version", timeout=10).status_code == 401
    assert httpx.get(f"{api}/admin/version", headers=_basic("team:wrong"), timeout=10).status_code == 401
    assert httpx.get(f"{api}/admin/version", headers=_basic(SECRET), timeout=10).status_code == 200
    assert httpx.post(f"{api}/flows/filter", json={}, timeout=10).status_code in (401, 403)


def test_state_changes_need_a_csrf_token_even_with_the_password(locked_server):
    api, _ = locked_server
    res = httpx.post(f"{api}/flows/", json={"name": "csrf-probe"}, headers=_basic(SECRET), timeout=10)
    assert res.status_code == 403 and "CSRF" in res.text


def test_the_prefect_client_with_the_auth_string_works(locked_server, repo):
    api, home = locked_server
    env = dict(os.environ, PREFECT_API_URL=api, PREFECT_HOME=str(home), PYTHONPATH=str(repo))
    env.pop("PREFECT_API_AUTH_STRING", None)
    code = ("import asyncio\nfrom prefect.client.orchestration import get_client\n"
            "async def main():\n    async with get_client() as c:\n        await c.create_flow_from_name('auth-probe')\n"
            "        print(len(await c.read_flows()))\nasyncio.run(main())\n")
    denied = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert denied.returncode != 0
    ok = subprocess.run([sys.executable, "-c", code], env=dict(env, PREFECT_API_AUTH_STRING=SECRET),
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert int(ok.stdout.strip().splitlines()[-1]) >= 1
    assert Path(home / "server.log").exists()
