"""``python -m pipeline.launcher.join`` (another machine lending its processes): a stale or foreign launch
pointer is not followed, and a failed training leaves it waiting for the next one instead of exiting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.common.processes import free_port
from pipeline.params import load_params
from pipeline.launcher.torchrun import POINTER, _launch, _write_atomic
from tests.params_files import write_params

pytestmark = pytest.mark.slow  # starts torchrun


def _join(tmp_path: Path, repo: Path, port: int, *args: str) -> subprocess.Popen:
    params = write_params(tmp_path / "params.yaml", {"distributed": {"nnodes": 2, "nproc_per_node": 1,
                                                                       "rdzv_endpoint": f"127.0.0.1:{port}"}})
    return subprocess.Popen([sys.executable, "-m", "pipeline.launcher.join", "--params", params, *args], cwd=tmp_path,
                            env=dict(os.environ, PYTHONPATH=str(repo)), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_a_stale_or_foreign_pointer_is_not_joined(tmp_path, repo):
    port = free_port()
    spec = tmp_path / "spec.json"
    _write_atomic(spec, b"{}")
    pointer = {"rdzv_id": "qa-000000000000", "spec": str(spec), "nnodes": 2, "rdzv_endpoint": f"127.0.0.1:{port}",
               "written": time.time() - 3600}  # left by a stage killed an hour ago
    _write_atomic(tmp_path / POINTER, json.dumps(pointer).encode())
    out, _ = _join(tmp_path, repo, port, "--once", "--timeout", "3").communicate(timeout=120)
    assert "no training run to join within 3 s" in out and "joined training" not in out, out[-2000:]
    # fresh, but writable by others: not trusted either
    (tmp_path / POINTER).write_text(json.dumps(pointer | {"written": time.time() + 30}))
    (tmp_path / POINTER).chmod(0o666)
    out, _ = _join(tmp_path, repo, port, "--once", "--timeout", "3").communicate(timeout=120)
    assert "no training run to join within 3 s" in out and "joined training" not in out, out[-2000:]


@pytest.mark.timeout(600)
def test_a_failed_training_leaves_join_waiting_for_the_next(tmp_path, repo, monkeypatch):
    port = free_port()
    monkeypatch.chdir(tmp_path)
    join = _join(tmp_path, repo, port, "--timeout", "20")
    try:
        params = load_params(tmp_path / "params.yaml")  # the join's own: nnodes 2 at this port
        with pytest.raises(RuntimeError, match=r"torchrun exited[\s\S]*unknown input variant"):
            _launch("train_quail_mc", "no-such-variant", params, tmp_path / "model")  # every rank's train() refuses it
        time.sleep(3)
        assert join.poll() is None, join.communicate()[0][-3000:]  # still waiting for the next training
        out, _ = join.communicate(timeout=120)
    finally:
        if join.poll() is None:
            join.kill()
    assert "joined training qa-" in out and "failed" in out, out[-3000:]
    assert "no training run to join within 20 s" in out  # it went on waiting, then gave up as asked


def test_a_fresh_pointer_left_by_a_killed_stage_or_dated_ahead_is_not_joined(tmp_path, repo):
    """A stage killed seconds ago leaves a pointer younger than --max-age; nothing hosts its run any more, so
    join does not start a torchrun that would wait in a dead rendezvous (and then hold the next run up)."""
    from pipeline.launcher.torchrun import RUN_KEY, bound_store

    port = free_port()
    spec = tmp_path / "spec.json"
    _write_atomic(spec, b"{}")
    pointer = {"rdzv_id": "qa-000000000000", "spec": str(spec), "nnodes": 2, "rdzv_endpoint": f"127.0.0.1:{port}",
               "written": time.time()}
    _write_atomic(tmp_path / POINTER, json.dumps(pointer).encode())
    out, _ = _join(tmp_path, repo, port, "--once", "--timeout", "3").communicate(timeout=120)
    assert "no training run to join within 3 s" in out and "joined training" not in out, out[-2000:]
    store = bound_store("127.0.0.1", port)  # a newer stage hosts another run at the same endpoint
    store.set(RUN_KEY, "qa-111111111111")
    out, _ = _join(tmp_path, repo, port, "--once", "--timeout", "3").communicate(timeout=120)
    assert "is not the run hosted" in out and "joined training" not in out, out[-2000:]
    _write_atomic(tmp_path / POINTER, json.dumps(pointer | {"rdzv_id": "qa-111111111111",
                                                            "written": time.time() + 3600}).encode())
    out, _ = _join(tmp_path, repo, port, "--once", "--timeout", "3").communicate(timeout=120)
    assert "joined training" not in out, out[-2000:]  # dated an hour ahead: not fresh
    del store
