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

from tests.conftest import prefect_server

pytestmark = pytest.mark.slow  # starts Prefect servers and PostgreSQL

SECRET = "team:correct-horse-battery"


@pytest.fixture(scope="module")
def locked_server(tmp_path_factory):
    home = tmp_path_factory.mktemp("prefect-auth-home")
    with prefect_server(home, PREFECT_SERVER_API_AUTH_STRING=SECRET,
                        PREFECT_SERVER_API_CSRF_PROTECTION_ENABLED="true") as api:
        yield api, home


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


def test_a_group_server_on_postgresql_with_auth_records_runs(repo):
    """What infra/prefect/docker-compose.yml runs: the server on PostgreSQL (a real one, 127.0.0.1) with the
    auth string; a flow run by a client with the string lands in PostgreSQL's tables."""
    import shutil
    import tempfile

    from tests.local_postgres import pg_bin, postgres

    if pg_bin() is None:
        assert os.environ.get("QA_PIPELINE_REQUIRE_POSTGRES") != "1", "CI must install postgresql (.ci/run)"
        pytest.skip("PostgreSQL server binaries not installed (apt-get install postgresql; .ci/run does)")
    root = Path(tempfile.mkdtemp(prefix="qa-pg-"))  # not under pytest's 0700 tmp: the postgres user reads it
    root.chmod(0o755)
    home = root / "prefect-home"
    home.mkdir()
    try:
        with postgres(root / "pg", "pg-secret-123") as db_url:
            with prefect_server(home, PREFECT_SERVER_API_AUTH_STRING=SECRET,
                                PREFECT_API_DATABASE_CONNECTION_URL=db_url) as api:
                assert httpx.get(f"{api}/admin/version", timeout=10).status_code == 401
                code = ("from prefect import flow\n@flow(name='pg-probe')\ndef f():\n    return 7\n"
                        "print(f())\n")
                env = dict(os.environ, PREFECT_API_URL=api, PREFECT_HOME=str(home), PYTHONPATH=str(repo),
                           PREFECT_API_AUTH_STRING=SECRET)
                env.pop("PREFECT_API_DATABASE_CONNECTION_URL", None)
                ran = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                     timeout=180)
                assert ran.returncode == 0 and ran.stdout.strip().endswith("7"), ran.stderr[-2000:]
                port_db = db_url.rsplit(":", 1)[1].split("/")[0]
                rows = subprocess.run([str(pg_bin() / "psql"), "-h", "127.0.0.1", "-p", port_db, "-U", "prefect",
                                       "-d", "prefect", "-tAc",
                                       "select f.name, r.state_type from flow_run r join flow f on f.id = r.flow_id"],
                                      env=dict(os.environ, PGPASSWORD="pg-secret-123"), capture_output=True,
                                      text=True, check=True).stdout
                assert "pg-probe|COMPLETED" in rows, rows
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_serve_refuses_a_server_others_reach_unless_it_asks_for_auth(locked_server, tmp_path, monkeypatch):
    """`make serve --no-server` against a group server: refused when the server answers anonymous requests
    (anyone who reaches it could deploy code to the workers), or when this process has no auth string."""
    from flows.serve import open_server_refusal

    api, _ = locked_server
    (tmp_path / "open-home").mkdir()
    monkeypatch.delenv("PREFECT_SERVER_API_AUTH_STRING")  # the locked server's, set for this module
    with prefect_server(tmp_path / "open-home") as open_api:
        assert "answers without authentication" in open_server_refusal(open_api, others_reach_it=True)
        assert open_server_refusal(open_api) is None  # 127.0.0.1: this user's own server
    monkeypatch.delenv("PREFECT_API_AUTH_STRING", raising=False)
    assert "set PREFECT_API_AUTH_STRING" in open_server_refusal(api, others_reach_it=True)
    monkeypatch.setenv("PREFECT_API_AUTH_STRING", SECRET + "-wrong")  # found before serving, not at the first call
    assert "refuses this PREFECT_API_AUTH_STRING" in open_server_refusal(api, others_reach_it=True)
    monkeypatch.setenv("PREFECT_API_AUTH_STRING", SECRET)
    assert open_server_refusal(api, others_reach_it=True) is None


def test_serve_against_a_server_that_refuses_its_auth_string_says_so_in_one_line(locked_server, repo):
    """`make serve --no-server` against the checkout-local server with a wrong (or no) auth string: the refusal is
    one line naming the variable, exit code 2, not Prefect's 401 traceback."""
    api, home = locked_server
    for given in ("team:wrong", None):
        env = dict(os.environ, PREFECT_API_URL=api, PREFECT_HOME=str(home))
        env.pop("PREFECT_API_AUTH_STRING", None)
        if given:
            env["PREFECT_API_AUTH_STRING"] = given
        ran = subprocess.run([sys.executable, "-m", "flows.serve", "--no-server"], cwd=repo, env=env,
                             capture_output=True, text=True, timeout=180)
        assert ran.returncode == 2, (ran.stdout[-2000:], ran.stderr[-2000:])
        lines = [line for line in ran.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "refused this process's credentials (HTTP 401" in lines[0], ran.stderr[-3000:]
        assert ("is set" if given else "is not set") in lines[0]
