"""Plain `dvc repro` without PREFECT_API_URL: the first stage starts one local Prefect server, later stages
reuse it, a running stage keeps it up, and it stops itself (by PID) once idle."""

from __future__ import annotations

import pytest

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

pytestmark = pytest.mark.slow  # starts Prefect servers

STAGE_LIKE = """
import sys, time
from flows._server import shared_api_url, stage_lease
url = shared_api_url()
print(url, flush=True)
with stage_lease():
    time.sleep(float(sys.argv[1]))
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_one_server_is_shared_kept_up_by_a_running_stage_and_stopped_when_idle(repo, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(repo), PREFECT_HOME=str(tmp_path / ".prefect"),
               QA_PIPELINE_PREFECT_IDLE_S="4")
    env.pop("PREFECT_API_URL", None)

    def stage(seconds: float) -> str:
        out = subprocess.run([sys.executable, "-c", STAGE_LIKE, str(seconds)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=240)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.strip()

    first = stage(0)
    state = json.loads((tmp_path / ".prefect/shared-server.json").read_text())
    assert first == state["api_url"] and first.startswith("http://127.0.0.1:")
    stage_that_outlives_the_idle_time = stage(8)  # 8 s > 4 s idle: the lease keeps the server up
    assert stage_that_outlives_the_idle_time == first  # the same server, not a second one
    assert _alive(state["supervisor_pid"]) and _alive(state["server_pid"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (_alive(state["server_pid"]) or _alive(state["supervisor_pid"])):
        time.sleep(1)
    assert not _alive(state["server_pid"]) and not _alive(state["supervisor_pid"])  # stopped once idle
    assert not (tmp_path / ".prefect/shared-server.json").exists()


def test_the_ui_of_a_server_on_another_port_talks_to_that_server(repo, tmp_path):
    """The UI reads the API address from the server's /ui-settings: it must be the server's own, not
    127.0.0.1:4200 (another checkout's server, or nothing)."""
    import urllib.request

    from pipeline.common.processes import free_port

    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(repo), PREFECT_HOME=str(tmp_path / ".prefect"),
               QA_PIPELINE_PREFECT_IDLE_S="2", QA_PIPELINE_PREFECT_PORT=str(port))
    env.pop("PREFECT_API_URL", None)
    out = subprocess.run([sys.executable, "-c", STAGE_LIKE, "0"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    api = out.stdout.strip()
    assert api == f"http://127.0.0.1:{port}/api"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui-settings", timeout=10) as r:
        settings = json.loads(r.read())
    assert settings["api_url"] == api, settings
    state = json.loads((tmp_path / ".prefect/shared-server.json").read_text())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _alive(state["supervisor_pid"]):
        time.sleep(0.5)


def test_a_port_left_in_time_wait_counts_as_free(tmp_path):
    """A stopped server leaves its accepted connections in TIME_WAIT for a minute; the server binds with
    SO_REUSEADDR, so the check must too, or a quick restart moves to a random port."""
    import socket

    from flows._server import _port_free

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = listener.accept()
    accepted.close()  # the server side closes first: its end of the connection goes to TIME_WAIT
    client.recv(1)
    client.close()
    listener.close()
    states = subprocess.run(["ss", "-tan", f"sport = :{port}"], capture_output=True, text=True).stdout
    assert "TIME-WAIT" in states, states  # the situation of a quick restart
    assert _port_free(port)
    with socket.socket() as busy:  # a port something listens on is still taken
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        assert not _port_free(busy.getsockname()[1])



def test_an_experiment_copy_reports_to_its_checkouts_server_and_a_deleted_checkout_stops_it(repo, tmp_path):
    """DVC runs `dvc exp run --queue`/`--temp` in a copy under the checkout's .dvc/tmp/exps/ and deletes it after.
    Its stages use the checkout's server (state, leases, database), so its runs show in the checkout's UI and
    outlive the copy; a supervisor whose checkout is gone stops its server instead of leaking it."""
    checkout = tmp_path / "checkout"
    copies = [checkout / ".dvc/tmp/exps/tmpa1b2", checkout / ".dvc/tmp/exps/standalone/tmpc3d4"]
    for copy in copies:
        copy.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=str(repo), PREFECT_HOME=str(checkout / ".prefect"),
               QA_PIPELINE_PREFECT_IDLE_S="600")
    env.pop("PREFECT_API_URL", None)
    urls = []
    for copy in copies:
        out = subprocess.run([sys.executable, "-c", STAGE_LIKE, "0"], cwd=copy, env=env, capture_output=True,
                             text=True, timeout=240)
        assert out.returncode == 0, out.stderr[-3000:]
        urls.append(out.stdout.strip())
        assert not (copy / ".prefect").exists()
    state = json.loads((checkout / ".prefect/shared-server.json").read_text())
    assert urls == [state["api_url"]] * 2 and state["checkout"] == str(checkout.resolve())
    import shutil

    shutil.rmtree(checkout / ".dvc")  # DVC removes the copies: the checkout's server goes on
    time.sleep(2)
    assert _alive(state["supervisor_pid"]) and _alive(state["server_pid"])
    shutil.rmtree(checkout)  # the checkout itself is gone: nothing is left running
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (_alive(state["server_pid"]) or _alive(state["supervisor_pid"])):
        time.sleep(0.5)
    assert not _alive(state["server_pid"]) and not _alive(state["supervisor_pid"])


def test_checkout_root_sees_through_dvcs_experiment_copies():
    from pathlib import Path

    from flows import checkout_root

    assert checkout_root(Path("/w/repo/.dvc/tmp/exps/tmpab12")) == Path("/w/repo")
    assert checkout_root(Path("/w/repo/.dvc/tmp/exps/standalone/tmpab12/sub")) == Path("/w/repo")
    assert checkout_root(Path("/w/repo")) == Path("/w/repo")
    assert checkout_root(Path("/w/repo/.dvc/tmp")) == Path("/w/repo/.dvc/tmp")


@pytest.mark.timeout(900)
def test_two_queued_experiments_leave_one_idle_server_that_stops_itself(repo, tmp_path):
    """As the README shows it: two `dvc exp run --queue`, then `dvc queue start -j 2`, in a clone with no
    PREFECT_API_URL. Both experiments finish; their stages ran in DVC's copies under .dvc/tmp/exps and reported
    to the clone's own server (one server, its state in the clone's .prefect, none in a copy), and once idle
    that server and its supervisor stop: no Prefect process is left running from the clone or its copies."""
    import psutil

    from tests.shell import run, user_env

    env = user_env(QA_PIPELINE_PREFECT_IDLE_S="20")
    env.pop("PREFECT_API_URL", None)
    env.pop("PREFECT_HOME", None)
    clone = tmp_path / "clone"
    run(["git", "clone", "-q", repo, clone], tmp_path, env)
    (clone / ".venv").symlink_to(Path(sys.executable).parent.parent)
    (tmp_path / "shared").symlink_to((repo.parent / "shared").resolve())  # params name ../shared
    run(["make", "-s", "exp-links"], clone, env)
    run(["dvc", "repro", "sample"], clone, env)

    def prefect_processes() -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["cmdline", "cwd", "environ"]):
            with contextlib.suppress(psutil.Error):
                cmd = " ".join(proc.info["cmdline"] or [])
                home = (proc.info["environ"] or {}).get("PREFECT_HOME", "")
                if ("prefect server start" in cmd or "flows._server" in cmd) and str(clone) in home:
                    found.append(proc)
        return found

    for seed in (1, 2):
        run(["dvc", "exp", "run", "--queue", "-S", f"sample.seed={seed}", "sample"], clone, env)
    run(["dvc", "queue", "start", "-j", "2"], clone, env)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        status = run(["dvc", "queue", "status"], clone, env).stdout
        if "Queued" not in status and "Running" not in status:
            break
        time.sleep(5)
    assert status.count("Success") == 2, status
    servers = prefect_processes()
    homes = {(p.info["environ"] or {}).get("PREFECT_HOME") for p in servers}
    assert homes <= {str(clone / ".prefect")}, f"a server of an experiment copy: {homes}"
    # one server: at most one supervisor and the one `prefect server start` it runs (both may still be up)
    kinds = ["supervisor" if "flows._server" in " ".join(p.info["cmdline"]) else "server" for p in servers]
    assert kinds.count("server") <= 1 and kinds.count("supervisor") <= 1, [p.info["cmdline"] for p in servers]
    deadline = time.monotonic() + 240  # idle 20 s, then the supervisor stops its server and itself
    while time.monotonic() < deadline and prefect_processes():
        time.sleep(2)
    left = prefect_processes()
    for proc in left:  # never leave one behind, even when failing
        with contextlib.suppress(psutil.Error):
            proc.kill()
    assert not left, f"Prefect servers still running from the clone: {[p.pid for p in left]}"
