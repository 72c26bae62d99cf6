"""The server chooses nothing about where results go: any API caller can name a default result storage
(``PUT /api/admin/storage``), and Prefect persists a top-level flow's return value there unless the flow says
otherwise. Against a real Prefect server whose default storage is an S3 block pointing at a listener on
127.0.0.1: a plain flow connects to it (the control: the attack is real); a stage's flow of this project runs to
Completed and the listener sees no connection. Every flow and task the project defines says where its result
goes (``flows._common.own_results``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests import prefect_http
from tests.conftest import REPO, prefect_server

pytestmark = pytest.mark.slow  # starts a Prefect server

SAVE_BLOCK = """
from prefect.filesystems import RemoteFileSystem
block = RemoteFileSystem(basepath="s3://results/runs", settings={
    "key": "k", "secret": "s", "client_kwargs": {"endpoint_url": "http://127.0.0.1:%d"}})
print(block.save("planted", overwrite=True))
"""
PLAIN_FLOW = """
from prefect import flow

@flow(name="plain")
def plain():
    return {"a": 1}

plain()
"""


class Listener:
    """Accepts and closes every connection on a free 127.0.0.1 port, counting them."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


def _env(api: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PREFECT_"))}
    return {**env, "PREFECT_API_URL": api, "PREFECT_HOME": str(home), "PYTHONPATH": str(REPO),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1", "AWS_MAX_ATTEMPTS": "1"}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A Prefect server whose default result storage is an S3 block aimed at a local listener."""
    home = tmp_path_factory.mktemp("prefect-home")
    listener = Listener()
    with prefect_server(home) as api:
        env = _env(api, home)
        saved = subprocess.run([sys.executable, "-c", SAVE_BLOCK % listener.port], env=env, capture_output=True,
                               text=True, timeout=120, check=True).stdout.split()[-1]
        answer = prefect_http.request("PUT", f"{api}/admin/storage",
                                      json={"default_result_storage_block_id": saved}, timeout=30)
        assert answer.status_code < 300, answer.text
        assert prefect_http.get(f"{api}/admin/storage").json()["default_result_storage_block_id"] == saved
        yield api, home, env, listener
    listener.sock.close()


def test_a_plain_flow_persists_its_result_where_the_server_says(planted, tmp_path):
    api, _, env, listener = planted
    before = listener.connections
    subprocess.run([sys.executable, "-c", PLAIN_FLOW], env=env, cwd=tmp_path, capture_output=True, text=True,
                   timeout=300)
    assert listener.connections > before  # the control: the planted storage is contacted


def test_a_stage_flow_runs_to_completed_and_never_contacts_the_planted_storage(planted, tmp_path):
    api, _, env, listener = planted
    before = listener.connections
    res = subprocess.run([sys.executable, "-m", "flows.stage", "check_params", "--params", str(REPO / "params.yaml")],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    assert listener.connections == before
    runs = prefect_http.request("POST", f"{api}/flow_runs/filter",
                                json={"flows": {"name": {"any_": ["check_params"]}}}, timeout=30).json()
    assert runs and all(r["state_type"] == "COMPLETED" for r in runs), [r["state_type"] for r in runs]


def test_every_flow_and_task_of_the_project_says_where_its_result_goes():
    from prefect import Flow, Task

    import flows.rebuild
    import flows.sweep
    from flows._common import RESULTS_PATH
    from flows.stage import stage_flow

    from pipeline.stage_table import STAGES

    found = [obj for module in (flows.rebuild, flows.sweep) for obj in vars(module).values()
             if isinstance(obj, (Flow, Task))]
    found += [stage_flow(name) for name in ("check_params", "discover", "index")]  # two with a retried task
    assert len(found) >= 8
    for obj in found:
        assert obj.persist_result is False and Path(obj.result_storage) == RESULTS_PATH, obj.name
    assert all(name in STAGES for name in ("discover", "index")) and STAGES["index"].retry_delays_s
