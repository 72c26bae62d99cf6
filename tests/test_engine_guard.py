"""A state the server forces on a run is data: no flow-run process of the project deserializes the result record
it names (flows/engine_guard.py). Against a real Prefect server: anyone who reaches the API creates a run, forces
it to COMPLETED with a result record whose pickle writes a file when loaded, and a process runs the flow run with
Prefect's own engine. Without the guard the pickle runs (the control: the attack is real); with it, nothing is
read and the process names the state it refused."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import prefect_http
from tests.conftest import REPO, prefect_server

pytestmark = pytest.mark.slow  # starts a Prefect server

RUN = """
import sys
{guard}
from prefect.flow_engine import load_flow_run, run_flow
from tests.forced_state_probe import probe
print("returned", run_flow(probe, flow_run=load_flow_run(sys.argv[1])))
"""


class _Payload:
    def __init__(self, mark: Path) -> None:
        self.mark = str(mark)

    def __reduce__(self):
        return (exec, (f"open({self.mark!r}, 'a').write('unpickled')",))


def pickle_record(record: Path, mark: Path) -> dict:
    """A result record at ``record`` whose pickle writes ``mark`` when loaded; returns its metadata as the API
    takes it in a state's ``data``."""
    from prefect._internal.result_records import ResultRecord, ResultRecordMetadata

    meta = ResultRecordMetadata.model_validate({"storage_key": str(record), "serializer": {"type": "pickle"}})
    record.write_bytes(ResultRecord(metadata=meta, result=_Payload(mark)).serialize())
    return meta.model_dump(mode="json")


def force_completed(api: str, run_id: str, data: dict) -> None:
    """What any API caller can do: force a run to COMPLETED with a result record of their choosing."""
    forced = prefect_http.request("POST", f"{api}/flow_runs/{run_id}/set_state", json={
        "state": {"type": "COMPLETED", "name": "Completed", "data": data}, "force": True}, timeout=30).json()
    assert forced["status"] == "ACCEPT", forced


def _forced_completed_run(api: str, data: dict) -> str:
    flow_id = prefect_http.request("POST", f"{api}/flows/", json={"name": "forced-state-probe"}, timeout=30).json()["id"]
    run = prefect_http.request("POST", f"{api}/flow_runs/", json={"flow_id": flow_id, "name": "forced",
                                                                   "state": {"type": "PENDING", "name": "Pending"}},
                               timeout=30).json()
    force_completed(api, run["id"], data)
    return run["id"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = tmp_path_factory.mktemp("prefect-home")
    with prefect_server(home) as api:
        yield api, home


@pytest.mark.parametrize("guard", ["", "import flows.rebuild  # a module defining a served flow",
                                   "from flows.engine_guard import install; install()"])
def test_a_forced_completed_state_is_not_deserialized(guard, server, tmp_path):
    pwned, body = tmp_path / "pwned", tmp_path / "body"
    api, home = server
    run_id = _forced_completed_run(api, pickle_record(tmp_path / "record.json", pwned))
    env = {**os.environ, "PREFECT_API_URL": api, "PREFECT_HOME": str(home), "PYTHONPATH": str(REPO),
           "QA_PIPELINE_PROBE_MARK": str(body)}
    proc = subprocess.run([sys.executable, "-c", RUN.format(guard=guard), run_id], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert not body.exists()  # the server said COMPLETED: the engine never runs the flow
    if not guard:  # the control: Prefect's engine reads the record the server names and unpickles it
        assert pwned.exists(), proc.stdout + proc.stderr
        return
    assert not pwned.exists(), proc.stdout + proc.stderr
    assert proc.returncode != 0 and "ServerStateRefused" in proc.stderr
    assert "the server answered with state COMPLETED" in proc.stderr and "is not read" in proc.stderr
