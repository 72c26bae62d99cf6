"""The Prefect side: a real local server on 127.0.0.1, the scheduled ``rebuild`` deployment, and its failures."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest
from filelock import FileLock

from pipeline.common.processes import free_port, stop_process_group
from tests import prefect_http
from tests.conftest import prefect_server, venv_bin
from tests.params_files import PROJECT_PARAMS, project_benchmark_sources, write_params

pytestmark = pytest.mark.slow  # starts a Prefect server, serve and stages


def _tiny_dvc_repo(root: Path, fail: bool = False) -> Path:
    root.mkdir(parents=True)
    env = dict(os.environ)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([venv_bin("dvc"), "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run([venv_bin("dvc"), "config", "core.analytics", "false"], cwd=root, check=True)
    code = ("import sys; sys.exit(3)" if fail else
            "import json, os; os.makedirs('metrics/quail', exist_ok=True); "
            "json.dump({'acc': 42.5}, open('metrics/quail/demo.json', 'w'))")
    (root / "make.py").write_text(code + "\n")
    (root / "dvc.yaml").write_text(textwrap.dedent(f"""\
        stages:
          make:
            cmd: {sys.executable} make.py
            deps:
              - make.py
            metrics:
              - metrics/quail/demo.json:
                  cache: false
        """))
    return root


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory):
    with prefect_server(tmp_path_factory.mktemp("prefect-home")) as api:
        yield api


def _env(api: str) -> dict[str, str]:
    return dict(os.environ, PREFECT_API_URL=api, PYTHONPATH=str(Path(__file__).resolve().parents[1]))


def _flow_runs(api: str, state: str) -> list[dict]:
    body = {"flows": {"name": {"any_": ["rebuild"]}}, "flow_runs": {"state": {"type": {"any_": [state]}}}}
    return prefect_http.post(f"{api}/flow_runs/filter", json=body, timeout=60).json()


def _scheduled_runs(api: str, deployment_id: str) -> list[dict]:
    body = {"deployments": {"id": {"any_": [deployment_id]}}, "flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}}}
    return prefect_http.post(f"{api}/flow_runs/filter", json=body, timeout=60).json()


def _serve(tmp_path: Path, repo: Path, env: dict, cwd: Path, *args: str) -> tuple[subprocess.Popen, object]:
    """``python -m flows.serve ARGS`` with its output in ``serve.log`` (a file, not a pipe: an unread pipe
    fills and blocks the runner)."""
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "flows.serve", *args, "--params", str(PROJECT_PARAMS)],
                            cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return proc, log


def test_serve_runs_rebuild_on_a_schedule_and_the_server_records_it(prefect_api, tmp_path, repo):
    tiny = _tiny_dvc_repo(tmp_path / "tiny")
    before = {r["id"] for r in _flow_runs(prefect_api, "COMPLETED")}
    proc, log = _serve(tmp_path, repo, _env(prefect_api), repo, "--no-server", "--interval", "5",
                       "--repo-dir", str(tiny))
    try:
        deadline = time.monotonic() + 180
        done: list[dict] = []
        while time.monotonic() < deadline and not done:
            time.sleep(2)
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            done = [r for r in _flow_runs(prefect_api, "COMPLETED") if r["id"] not in before]
        assert done, "no completed rebuild run within 180 s:\n" + (tmp_path / "serve.log").read_text()[-3000:]
        assert json.loads((tiny / "metrics/quail/demo.json").read_text()) == {"acc": 42.5}
        deployment = prefect_http.get(f"{prefect_api}/deployments/{done[0]['deployment_id']}", timeout=60).json()
        assert deployment["name"] == "scheduled"
        assert deployment["global_concurrency_limit"]["limit"] == 1
        arts = prefect_http.post(f"{prefect_api}/artifacts/filter",
                                 json={"artifacts": {"key": {"any_": ["metrics-quail"]}}}, timeout=60).json()
        assert any("| demo" in a["data"] and "42.5" in a["data"] for a in arts), arts

    finally:
        stop_process_group(proc, signal.SIGINT)  # SIGINT: the runner pauses its deployments
        log.close()


def test_failing_repro_fails_the_flow_run(prefect_api, tmp_path, repo):
    bad = _tiny_dvc_repo(tmp_path / "bad", fail=True)
    res = subprocess.run([sys.executable, "-m", "flows.rebuild", "--repo-dir", str(bad)], cwd=repo,
                         env=_env(prefect_api), capture_output=True, text=True, timeout=300)
    assert res.returncode != 0
    assert "dvc repro failed" in res.stdout + res.stderr
    assert _flow_runs(prefect_api, "FAILED")


def test_second_rebuild_is_refused_while_one_holds_the_lock(prefect_api, tmp_path, repo):
    tiny = _tiny_dvc_repo(tmp_path / "locked")
    lock = tiny / ".dvc" / "tmp" / "rebuild.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock)):
        res = subprocess.run([sys.executable, "-m", "flows.rebuild", "--repo-dir", str(tiny)], cwd=repo,
                             env=_env(prefect_api), capture_output=True, text=True, timeout=300)
    assert res.returncode != 0
    assert "another rebuild holds" in res.stdout + res.stderr
    assert not (tiny / "metrics/quail/demo.json").exists()


def _served_deployment(api: str, proc: subprocess.Popen, log: Path, checkout: Path) -> dict:
    """The deployment that the serve of ``checkout`` started by :func:`_serve` registered (``scheduled``, not
    paused, tagged with that checkout), within 120 s. The tag matters: the module's server also holds the
    deployments of earlier tests' serves, and one of them may not be paused yet."""
    tag = f"checkout:{checkout.resolve()}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(2)
        assert proc.poll() is None, log.read_text()[-3000:]
        found = prefect_http.post(f"{api}/deployments/filter", json={}, timeout=60).json()
        deployment = next((d for d in found if d["name"] == "scheduled" and not d.get("paused")
                           and tag in d.get("tags", [])), None)
        if deployment:
            return deployment
    raise AssertionError("serve registered no deployment:\n" + log.read_text()[-3000:])


def test_an_api_caller_cannot_choose_which_checkout_runs(prefect_api, tmp_path, repo):
    """Anyone who reaches the Prefect API can start a run of the deployment; the checkout is fixed when the
    runner starts (flows.serve --repo-dir), not a run parameter, and targets must be stage names."""
    tiny = _tiny_dvc_repo(tmp_path / "tiny")
    evil = _tiny_dvc_repo(tmp_path / "evil")
    proc, log = _serve(tmp_path, repo, _env(prefect_api), repo, "--no-server", "--interval", "86400",
                       "--repo-dir", str(tiny))
    try:
        deployment = _served_deployment(prefect_api, proc, tmp_path / "serve.log", tiny)
        # the command serve prints runs as printed, in a shell without PREFECT_API_URL
        printed = next(line for line in (tmp_path / "serve.log").read_text().splitlines()
                       if line.startswith("Run one now: "))
        shell_env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
        res = subprocess.run(printed.removeprefix("Run one now: "), shell=True, env=shell_env, capture_output=True,
                             text=True, timeout=120)
        assert res.returncode == 0 and "Created flow run" in res.stdout, res.stdout[-2000:] + res.stderr[-2000:]
        assert "temporary server" not in res.stdout + res.stderr
        create = f"{prefect_api}/deployments/{deployment['id']}/create_flow_run"
        for params in ({"repo_dir": str(evil)}, {"targets": [f"{evil}/dvc.yaml:make"]}):
            res = prefect_http.post(create, json={"parameters": params}, timeout=60)
            if res.status_code >= 400:  # refused outright by the server's parameter schema: as good
                assert not (evil / "metrics/quail/demo.json").exists(), params
                continue
            run = res.json()
            deadline = time.monotonic() + 150
            state = None
            while time.monotonic() < deadline and state not in ("FAILED", "COMPLETED", "CRASHED"):
                time.sleep(2)
                state = prefect_http.get(f"{prefect_api}/flow_runs/{run['id']}", timeout=60).json()["state"]["type"]
            assert state in ("FAILED", "CRASHED"), (params, state, (tmp_path / "serve.log").read_text()[-2000:])
            assert not (evil / "metrics/quail/demo.json").exists(), params
    finally:
        stop_process_group(proc, signal.SIGINT)
        log.close()


def test_editing_the_served_deployment_through_the_api_runs_no_other_code(prefect_api, tmp_path, repo):
    """Anyone who reaches the API can PATCH the deployment ``make serve`` runs: a ``run_shell_script`` pull
    step, another entrypoint. ``make serve`` runs the rebuild flow it loaded from its own checkout, never what
    the server describes, so the run does the checkout's rebuild and the attacker's script never runs."""
    tiny = _tiny_dvc_repo(tmp_path / "tiny")
    marker = tmp_path / "pwned"
    proc, log = _serve(tmp_path, repo, _env(prefect_api), repo, "--no-server", "--interval", "86400",
                       "--repo-dir", str(tiny))
    try:
        deployment = _served_deployment(prefect_api, proc, tmp_path / "serve.log", tiny)
        shell = [{"prefect.deployments.steps.run_shell_script": {"script": f"touch {marker}"}}]
        patched = prefect_http.request("PATCH", f"{prefect_api}/deployments/{deployment['id']}", timeout=60,
                                       json={"pull_steps": shell, "entrypoint": "flows/stage.py:stage_flow",
                                             "path": str(tmp_path)})
        assert patched.status_code < 300, patched.text[:300]
        run = prefect_http.post(f"{prefect_api}/deployments/{deployment['id']}/create_flow_run",
                                json={"parameters": {"targets": []}}, timeout=60).json()
        deadline = time.monotonic() + 150
        state = None
        while time.monotonic() < deadline and state not in ("FAILED", "COMPLETED", "CRASHED", "CANCELLED"):
            time.sleep(2)
            state = prefect_http.get(f"{prefect_api}/flow_runs/{run['id']}", timeout=60).json()["state"]["type"]
        text = (tmp_path / "serve.log").read_text()
        assert state == "COMPLETED", (state, text[-3000:])  # the checkout's rebuild ran, as served
        assert (tiny / "metrics/quail/demo.json").exists()
        assert not marker.exists(), text[-3000:]
    finally:
        stop_process_group(proc, signal.SIGINT)
        log.close()


def test_make_serve_with_its_own_server_completes_a_scheduled_run(tmp_path, repo):
    """What `make serve` runs (flows.serve starting its own server on 127.0.0.1), not --no-server: one
    server only (no temporary one beside it), and a scheduled run completes."""
    tiny = _tiny_dvc_repo(tmp_path / "tiny")
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = dict(os.environ, PREFECT_HOME=str(tmp_path / "home"), PYTHONPATH=str(repo))
    env.pop("PREFECT_API_URL", None)
    (tmp_path / "run").mkdir()
    proc, log = _serve(tmp_path, repo, env, tmp_path / "run", "--port", str(port), "--interval", "10",
                       "--repo-dir", str(tiny))
    try:
        deadline = time.monotonic() + 240
        done: list[dict] = []
        while time.monotonic() < deadline and not done:
            time.sleep(3)
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            with contextlib.suppress(httpx.HTTPError):
                done = _flow_runs(api, "COMPLETED")
        text = (tmp_path / "serve.log").read_text()
        assert done, "no completed rebuild run within 240 s:\n" + text[-3000:]
        assert (tiny / "metrics/quail/demo.json").exists()
        assert "temporary server" not in text.lower(), text[-3000:]
        # what it says about its server is what it does: up while it serves (no idle stop under a lease)
        assert f": http://127.0.0.1:{port} (every run of this checkout" in text and "stops after" not in text, text[:2000]
        assert "Prefect UI of " in text  # which checkout this UI belongs to
        assert "up while this serves, then stopped" in text
        assert "Serving rebuild/scheduled (every 10 s)" in text and "is being served" not in text  # no Prefect banner
    finally:
        stop_process_group(proc, signal.SIGINT)
        log.close()
    assert "Stopped the Prefect server this make serve started" in (tmp_path / "serve.log").read_text()


def test_a_stage_run_is_named_after_its_stage_and_tagged_with_its_rebuild(prefect_api, tmp_path, repo, shared):
    """What a rebuild's `dvc repro` starts: `python -m flows.stage NAME [VARIANT]` with the rebuild's run id in
    QA_PIPELINE_PARENT_RUN. The run is named `stage` (or `stage@variant`), not a random name, tagged
    `rebuild:<id>`, so the UI lists one rebuild's stages with one filter, and is a subflow of the rebuild's run:
    its parent task run belongs to that run and mirrors the stage's final state. Without a rebuild run of that
    id on the server, the stage runs all the same, unnested."""
    flow = prefect_http.post(f"{prefect_api}/flows/", json={"name": "rebuild"}, timeout=60).json()
    parent = prefect_http.post(f"{prefect_api}/flow_runs/", json={"flow_id": flow["id"], "name": "rebuild test"},
                               timeout=60).json()["id"]
    params = write_params(tmp_path / "params.yaml", {"benchmark_sources": project_benchmark_sources()})
    for parent_id in (parent, "0f0f-no-such-run"):
        res = subprocess.run([sys.executable, "-m", "flows.stage", "benchmark_sources", "--params", params],
                             cwd=tmp_path, env=dict(_env(prefect_api), QA_PIPELINE_PARENT_RUN=parent_id),
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
        body = {"flow_runs": {"tags": {"all_": [f"rebuild:{parent_id}"]}}}
        runs = prefect_http.post(f"{prefect_api}/flow_runs/filter", json=body, timeout=60).json()
        assert [r["name"] for r in runs] == ["benchmark_sources"], runs
        assert set(runs[0]["tags"]) >= {"dvc-stage", f"rebuild:{parent_id}"}
        assert runs[0]["state_type"] == "COMPLETED"
        if parent_id == parent:
            tracker = prefect_http.get(f"{prefect_api}/task_runs/{runs[0]['parent_task_run_id']}", timeout=60).json()
            assert tracker["flow_run_id"] == parent and tracker["name"] == "benchmark_sources", tracker
            assert tracker["state_type"] == "COMPLETED", tracker
        else:
            assert runs[0]["parent_task_run_id"] is None


def _deployments(api: str) -> dict[str, dict]:
    found = prefect_http.post(f"{api}/deployments/filter", json={}, timeout=60).json()
    return {d["name"]: d for d in found if d["name"] in ("scheduled", "pool")}


def _serve_until_registered(tmp_path: Path, repo: Path, api: str) -> None:
    proc, log = _serve(tmp_path, repo, _env(api), repo, "--no-server", "--interval", "86400",
                       "--repo-dir", str(tmp_path))
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            time.sleep(2)
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            if not _deployments(api).get("scheduled", {"paused": True}).get("paused", True):
                return
        raise AssertionError("serve registered nothing:\n" + (tmp_path / "serve.log").read_text()[-3000:])
    finally:
        stop_process_group(proc, signal.SIGINT)
        log.close()
    # Ctrl-C is a stop, not a crash: one line, no asyncio traceback
    text = (tmp_path / "serve.log").read_text()
    assert "Stopped serving rebuild/" in text and "Traceback" not in text, text[-3000:]


def test_a_second_serve_on_a_shared_server_takes_nothing_from_the_first(prefect_api, tmp_path, repo):
    """Two make serve on one group server (two checkouts): the second used to take the deployment and mark the
    first's live rebuild Cancelled as an orphan. Now it refuses while the first serves, and starts once the first
    has stopped."""
    first_dir, second_dir = tmp_path / "alice", tmp_path / "bob"
    first_dir.mkdir()
    second_dir.mkdir()
    args = ("--no-server", "--interval", "86400", "--repo-dir", str(tmp_path))
    first, log = _serve(first_dir, repo, _env(prefect_api), first_dir, *args)
    try:
        deadline = time.monotonic() + 120
        # the first's own tag: an earlier test's serve on this server leaves a served-by tag of a dead process
        first_tag = f"served-by:{socket.gethostname()}:{first.pid}"
        while first_tag not in _deployments(prefect_api).get("scheduled", {}).get("tags", []):
            assert time.monotonic() < deadline and first.poll() is None, (first_dir / "serve.log").read_text()[-3000:]
            time.sleep(1)
        owner = _deployments(prefect_api)["scheduled"]
        assert f"checkout:{tmp_path.resolve()}" in owner["tags"] and str(tmp_path.resolve()) in owner["description"]
        while not _scheduled_runs(prefect_api, owner["id"]):  # the server's scheduler fills the days ahead
            assert time.monotonic() < deadline + 120, "no run was scheduled"
            time.sleep(2)
        second = subprocess.run([sys.executable, "-m", "flows.serve", *args, "--params", str(PROJECT_PARAMS)],
                                cwd=second_dir, env=_env(prefect_api), capture_output=True, text=True,
                                timeout=300)  # a loaded CI machine: importing Prefect alone took over a minute
        assert second.returncode == 2 and "served by another make serve" in second.stderr, second.stderr[-2000:]
        after = _deployments(prefect_api)["scheduled"]
        assert (after["id"], after["tags"]) == (owner["id"], owner["tags"]) and first.poll() is None
    finally:
        stop_process_group(first, signal.SIGINT)
        log.close()
    # a stopped serve leaves no future run behind, Scheduled and then Late with nothing to run it
    # (Prefect's pause on shutdown deletes them; where it could not, the stop deletes them itself and says so)
    assert _scheduled_runs(prefect_api, owner["id"]) == []
    again, log = _serve(second_dir, repo, _env(prefect_api), second_dir, *args)
    try:
        deadline = time.monotonic() + 120
        while f"served-by:{socket.gethostname()}:{again.pid}" not in _deployments(prefect_api)["scheduled"]["tags"]:
            assert time.monotonic() < deadline and again.poll() is None, (second_dir / "serve.log").read_text()[-3000:]
            time.sleep(1)
    finally:
        stop_process_group(again, signal.SIGINT)
        log.close()


def test_serve_and_prefect_deploy_keep_their_own_deployments_in_either_order(prefect_api, tmp_path, repo):
    """make serve's rebuild/scheduled and prefect.yaml's rebuild/pool, registered in both orders on one real
    server: each stays what it is (a served deployment has no work pool; the pool's keeps its pool). A
    prefect.yaml that still names its rebuild deployment like the served one makes serve refuse to start."""
    env = dict(_env(prefect_api), QA_PIPELINE_CHECKOUT=str(repo))
    prefect_bin = venv_bin("prefect")
    subprocess.run([prefect_bin, "work-pool", "create", "qa-pipeline", "--type", "process", "--base-job-template",
                    str(repo / "infra/prefect/process-job-template.json"), "--overwrite"], cwd=repo, env=env,
                   check=True, capture_output=True)

    def deploy(cwd: Path) -> None:
        res = subprocess.run([prefect_bin, "--no-prompt", "deploy", "--all"], cwd=cwd, env=env, capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]

    deploy(repo)  # deploy, then serve
    pool_id = _deployments(prefect_api)["pool"]["id"]
    _serve_until_registered(tmp_path, repo, prefect_api)
    both = _deployments(prefect_api)
    assert both["pool"]["id"] == pool_id and both["pool"]["work_pool_name"] == "qa-pipeline"
    assert both["scheduled"]["work_pool_name"] in (None, "") and both["scheduled"]["id"] != pool_id
    deploy(repo)  # serve, then deploy
    both = _deployments(prefect_api)
    assert both["pool"]["id"] == pool_id and both["pool"]["work_pool_name"] == "qa-pipeline"
    assert both["scheduled"]["work_pool_name"] in (None, "")

    # the old prefect.yaml: the pool's rebuild deployment named like the served one
    old = tmp_path / "old-checkout"
    old.mkdir()
    for name in ("flows", "pipeline"):
        (old / name).symlink_to(repo / name)
    (old / "prefect.yaml").write_text((repo / "prefect.yaml").read_text().replace("- name: pool ", "- name: scheduled ", 1))
    prefect_http.delete(f"{prefect_api}/deployments/{both['scheduled']['id']}", timeout=60).raise_for_status()
    deploy(old)
    taken = _deployments(prefect_api)["scheduled"]
    assert taken["work_pool_name"] == "qa-pipeline"
    res = subprocess.run([sys.executable, "-m", "flows.serve", "--no-server", "--interval", "86400", "--repo-dir",
                          str(tmp_path), "--params", str(PROJECT_PARAMS)], cwd=repo, env=_env(prefect_api),
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "work pool 'qa-pipeline'" in res.stderr, res.stdout[-2000:] + res.stderr[-2000:]
    after = _deployments(prefect_api)["scheduled"]
    assert (after["id"], after["work_pool_name"]) == (taken["id"], "qa-pipeline")


SLOW_STAGE = """
import sys, time
from prefect import flow, task
from flows._common import record_this_run, run_flow

@task(name="slow_work")
def slow_work() -> None:
    print("started", flush=True)
    time.sleep(300)

@flow(name="slow_stage")
def slow_stage_flow(params_file: str = "params.yaml") -> None:
    record_this_run()
    slow_work()

sys.exit(run_flow(slow_stage_flow, "slow_stage", params_file=sys.argv[1]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stage_stopped_by_a_signal_is_cancelled_not_crashed(prefect_api, tmp_path, repo, sig):
    """What a cancelled rebuild, or Ctrl-C on `make serve` or `dvc repro`, does to the stage that is running:
    its run ends Cancelled (Prefect's own reading of a signal is Crashed, "Crash detected!"), and the console
    says so in one line."""
    env = dict(_env(prefect_api), QA_PIPELINE_PARENT_RUN=f"stop-{sig.name}", DVC_STAGE="slow_stage")
    # SIGINT as a terminal's Ctrl-C delivers it: a test run started in the background by a shell without job
    # control (CI) ignores SIGINT, and an ignored signal stays ignored across exec, so Python in the child would
    # never raise KeyboardInterrupt and the stage would sleep on. (A stage run in such a background job is
    # meant to ignore Ctrl-C; DVC starts stages with SIGINT at its default.)
    proc = subprocess.Popen([sys.executable, "-c", SLOW_STAGE, str(PROJECT_PARAMS)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "started" in line:
                break
        proc.send_signal(sig)
        # read on while it stops: a child whose output fills the pipe would block on its next write
        try:
            output, _ = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired as exc:
            import psutil  # what the stage and its threads were doing, for the next reader of this failure

            threads = psutil.Process(proc.pid).threads() if psutil.pid_exists(proc.pid) else []
            raise AssertionError(f"the stage did not stop within 120 s of {sig.name} ({len(threads)} threads); "
                                 f"its output:\n{(exc.output or b'').decode('utf-8', 'replace')[-4000:]}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0, output[-3000:]
    # the console says what happened, once: no "Crash detected!", no traceback
    assert "Crash detected" not in output and "Traceback" not in output, output[-3000:]
    if sig == signal.SIGINT:
        assert "slow_stage: stopped by Ctrl-C; its run is Cancelled" in output, output[-3000:]
        # under dvc repro (DVC_STAGE), stopped on its first build (no dvc.lock here): the command that goes on
        assert "slow_stage had not finished a build here" in output and "`dvc repro slow_stage`" in output, \
            output[-3000:]
    body = {"flow_runs": {"tags": {"all_": [f"rebuild:stop-{sig.name}"]}}}
    runs = prefect_http.post(f"{prefect_api}/flow_runs/filter", json=body, timeout=60).json()
    assert [(r["name"], r["state_type"]) for r in runs] == [("slow_stage", "CANCELLED")], runs
    # the task it was running ends Cancelled with it, not Crashed inside a Cancelled run
    tasks = _task_runs(prefect_api.removesuffix("/"), [runs[0]["id"]])
    assert [(t["name"].split("-")[0], t["state_type"]) for t in tasks] == [("slow_work", "CANCELLED")], tasks


def test_a_stage_killed_with_sigkill_ends_crashed_not_running(prefect_api, tmp_path, repo):
    """SIGKILL leaves a stage no moment to report: its run would stay Running for good (holding a deployment's
    slot). Its lease names the run, and the next stage of the checkout to start marks it Crashed."""
    env = dict(_env(prefect_api), QA_PIPELINE_PARENT_RUN="kill9")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_STAGE, str(PROJECT_PARAMS)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "started" in line:
                break
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    body = {"flow_runs": {"tags": {"all_": ["rebuild:kill9"]}}}
    runs = prefect_http.post(f"{prefect_api}/flow_runs/filter", json=body, timeout=60).json()
    assert [r["state_type"] for r in runs] == ["RUNNING"], runs  # what Prefect alone leaves
    quick = SLOW_STAGE.replace("time.sleep(300)", "pass").replace("slow_stage", "quick_stage")
    done = subprocess.run([sys.executable, "-c", quick, str(PROJECT_PARAMS)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    runs = prefect_http.post(f"{prefect_api}/flow_runs/filter", json=body, timeout=60).json()
    states = {r["name"]: (r["state_type"], r["state"]["message"]) for r in runs}
    assert states["slow_stage"][0] == "CRASHED" and "killed" in states["slow_stage"][1], states
    assert states["quick_stage"][0] == "COMPLETED", states


SLOW_STAGE_SCRIPT = """
import os, sys, time
from pathlib import Path
from prefect import flow
from flows._common import record_this_run, run_flow

@flow(name="slow_stage")
def slow_stage_flow(params_file: str = "params.yaml") -> None:
    record_this_run()
    Path("started.part").write_text(str(os.getpid()))
    os.replace("started.part", "started")  # whole or absent: the test reads the pid the moment it appears
    if Path("slow").exists():
        time.sleep(600)
    Path("out.txt").write_text("done")

sys.exit(run_flow(slow_stage_flow, "slow_stage", params_file=sys.argv[1]))
"""


def _slow_dvc_repo(root: Path, repo: Path) -> Path:
    """A checkout whose one stage is a Prefect stage flow that sleeps while the file ``slow`` exists."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([venv_bin("dvc"), "init", "-q"], cwd=root, check=True)
    subprocess.run([venv_bin("dvc"), "config", "core.analytics", "false"], cwd=root, check=True)
    (root / "stage.py").write_text(SLOW_STAGE_SCRIPT)
    (root / "dvc.yaml").write_text(textwrap.dedent(f"""\
        stages:
          slow:
            cmd: {sys.executable} stage.py {repo / 'params.yaml'}
            deps: [stage.py]
            outs: [out.txt]
            always_changed: true
        """))
    (root / "slow").touch()
    return root


def test_a_stage_killed_under_a_rebuild_ends_crashed_with_it(prefect_api, tmp_path, repo):
    """The last stage of a rebuild killed with SIGKILL: no later stage starts to reap it, so the rebuild does,
    once its dvc repro has ended."""
    work = _slow_dvc_repo(tmp_path / "slow", repo)
    body = {"flows": {"name": {"any_": ["slow_stage"]}}}
    before = {r["id"] for r in prefect_http.post(f"{prefect_api}/flow_runs/filter", json=body, timeout=60).json()}
    rebuild = subprocess.Popen([sys.executable, "-m", "flows.rebuild", "--repo-dir", str(work)], cwd=tmp_path,
                               env=_env(prefect_api), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        while not (work / "started").exists():
            assert time.monotonic() < deadline and rebuild.poll() is None, rebuild.communicate()[0][-3000:]
            time.sleep(0.5)
        os.kill(int((work / "started").read_text()), signal.SIGKILL)
        output, _ = rebuild.communicate(timeout=300)
    finally:
        if rebuild.poll() is None:
            rebuild.kill()
    assert rebuild.returncode != 0 and "marked Crashed" in output, output[-3000:]
    runs = [r for r in prefect_http.post(f"{prefect_api}/flow_runs/filter", json=body, timeout=60).json()
            if r["id"] not in before]
    assert [r["state_type"] for r in runs] == ["CRASHED"], runs


def _deployment_id(api: str, name: str = "scheduled") -> str | None:
    with contextlib.suppress(httpx.HTTPError):
        for d in prefect_http.post(f"{api}/deployments/filter", json={}, timeout=60).json():
            if d["name"] == name and not d.get("paused", True):
                return d["id"]
    return None


def _wait(cond, timeout: float, what: str, log: Path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = cond()
        if found:
            return found
        time.sleep(1)
    raise AssertionError(f"{what} within {timeout:.0f} s:\n" + log.read_text()[-3000:])


def _run_state(api: str, run_id: str) -> str:
    return prefect_http.get(f"{api}/flow_runs/{run_id}", timeout=60).json()["state"]["type"]


def _start_rebuild(api: str, log: Path) -> str:
    dep = _wait(lambda: _deployment_id(api), 120, "serve registered no deployment", log)
    res = prefect_http.post(f"{api}/deployments/{dep}/create_flow_run", json={}, timeout=60)
    assert res.status_code < 400, res.text
    return res.json()["id"]


def _stage_runs(api: str, rebuild_id: str) -> list[dict]:
    body = {"flow_runs": {"tags": {"all_": [f"rebuild:{rebuild_id}"]}}}
    return prefect_http.post(f"{api}/flow_runs/filter", json=body, timeout=60).json()


def _task_runs(api: str, flow_run_ids: list[str]) -> list[dict]:
    body = {"flow_runs": {"id": {"any_": flow_run_ids}}}
    return prefect_http.post(f"{api}/task_runs/filter", json=body, timeout=60).json()


@pytest.mark.timeout(900)
def test_stopping_serve_mid_rebuild_cancels_its_runs_and_the_next_rebuild_completes(tmp_path, repo):
    """Ctrl-C on `make serve` (its own server) while a rebuild's stage runs: the stage and dvc repro stop with
    it, the rebuild and its stage run end Cancelled (not Running for good, holding the deployment's slot),
    and `make serve` started again on the same address runs the next rebuild to completion."""
    import psutil

    slow = _slow_dvc_repo(tmp_path / "slow", repo)
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = dict(os.environ, PREFECT_HOME=str(tmp_path / "home"), PYTHONPATH=str(repo))
    env.pop("PREFECT_API_URL", None)
    (tmp_path / "run").mkdir()
    args = ("--port", str(port), "--interval", "86400", "--repo-dir", str(slow))
    proc, log = _serve(tmp_path, repo, env, tmp_path / "run", *args)
    try:
        first = _start_rebuild(api, tmp_path / "serve.log")
        _wait(lambda: (slow / "started").exists(), 240, "the stage did not start", tmp_path / "serve.log")
        stage_pid = int((slow / "started").read_text())
        before = len((tmp_path / "serve.log").read_text())
        signalled = time.monotonic()
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        proc.wait(timeout=180)
        stopping_s = time.monotonic() - signalled
    finally:
        if proc.poll() is None:
            stop_process_group(proc, signal.SIGKILL)
        log.close()
    assert not psutil.pid_exists(stage_pid) or psutil.Process(stage_pid).status() == psutil.STATUS_ZOMBIE
    text = (tmp_path / "serve.log").read_text()
    assert "Stopped" in text and "process(es) of the runs in progress" in text, text[-3000:]
    after = text[before:]  # what the stop printed: a line per thing stopped, no crash report, no traceback
    assert "Crash detected" not in after and "Traceback" not in after, after[-3000:]
    assert "stopped by a signal; its run is Cancelled" in after, after[-3000:]  # one line for the rebuild
    status = subprocess.run([str(Path(sys.executable).with_name("dvc")), "status"], cwd=slow, capture_output=True,
                            text=True, timeout=120)
    assert "had been killed" not in status.stdout + status.stderr, status.stderr  # no stale lock left by the stop
    assert stopping_s < 30, f"the stop took {stopping_s:.0f} s (a wait on a process that ignores the signal?)"
    (slow / "slow").unlink()
    (slow / "started").unlink()
    proc, log = _serve(tmp_path, repo, env, tmp_path / "run", *args)
    try:
        second = _start_rebuild(api, tmp_path / "serve.log")
        state = _wait(lambda: (s := _run_state(api, second)) in ("COMPLETED", "FAILED", "CRASHED") and s, 300,
                      "the next rebuild did not finish", tmp_path / "serve.log")
        assert state == "COMPLETED" and (slow / "out.txt").read_text() == "done"
        assert _run_state(api, first) == "CANCELLED"
        assert [r["state_type"] for r in _stage_runs(api, first)] == ["CANCELLED"]
        # inside the Cancelled runs, their task runs end Cancelled too (Prefect's engine had left them Crashed)
        tasks = _task_runs(api, [first, *(r["id"] for r in _stage_runs(api, first))])
        assert tasks and {t["state_type"] for t in tasks} <= {"CANCELLED", "COMPLETED"}, [
            (t["name"], t["state_type"]) for t in tasks]
        assert "CANCELLED" in {t["state_type"] for t in tasks}
        assert api.removesuffix("/api") in (tmp_path / "serve.log").read_text()  # the same address again
    finally:
        stop_process_group(proc, signal.SIGINT)
        log.close()


@pytest.mark.timeout(900)
def test_a_rebuild_left_running_by_a_killed_serve_does_not_block_the_next(tmp_path, repo):
    """`make serve` killed outright (kill -9, a lost machine) leaves its rebuild Running and holding the
    deployment's one concurrency slot; serving again cancels it, and the next rebuild runs at once."""
    (tmp_path / "home").mkdir()
    with prefect_server(tmp_path / "home") as prefect_api:  # its own: other tests leave deployments behind
        _killed_serve_then_next_rebuild(prefect_api, tmp_path, repo)


def _serving_a_slow_stage(prefect_api: str, tmp_path: Path, repo: Path):
    """A serve of a checkout whose one stage sleeps, with a rebuild started and its stage running: (the checkout,
    serve's arguments, serve's process and log file, the rebuild's run id). The caller stops serve."""
    slow = _slow_dvc_repo(tmp_path / "slow", repo)
    args = ("--no-server", "--interval", "86400", "--repo-dir", str(slow))
    proc, log = _serve(tmp_path, repo, _env(prefect_api), repo, *args)
    try:
        first = _start_rebuild(prefect_api, tmp_path / "serve.log")
        _wait(lambda: (slow / "started").exists(), 240, "the stage did not start", tmp_path / "serve.log")
    except BaseException:
        stop_process_group(proc, signal.SIGINT)
        log.close()
        raise
    return slow, args, proc, log, first


def _killed_serve_then_next_rebuild(prefect_api: str, tmp_path: Path, repo: Path) -> None:
    import psutil

    slow, args, proc, log, first = _serving_a_slow_stage(prefect_api, tmp_path, repo)
    try:
        tree = [proc.pid, *(p.pid for p in psutil.Process(proc.pid).children(recursive=True))]
        for pid in tree:  # everything at once, as a lost machine would
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        log.close()
    assert _run_state(prefect_api, first) == "RUNNING"  # what the issue saw: a zombie holding the slot
    (slow / "slow").unlink()
    proc, log = _serve(tmp_path, repo, _env(prefect_api), repo, *args)
    try:
        second = _start_rebuild(prefect_api, tmp_path / "serve.log")
        state = _wait(lambda: (s := _run_state(prefect_api, second)) in ("COMPLETED", "FAILED", "CRASHED") and s,
                      120, "the next rebuild did not finish (waiting for a slot?)", tmp_path / "serve.log")
        assert state == "COMPLETED"
        assert _run_state(prefect_api, first) == "CANCELLED"
        assert "Cancelled 1 rebuild run(s) a stopped make serve left unfinished" in (tmp_path / "serve.log").read_text()
    finally:
        stop_process_group(proc, signal.SIGINT)
        log.close()


def test_a_rebuild_whose_serve_is_killed_stops_at_once_and_the_next_rebuild_runs(tmp_path, repo):
    """kill -9 of `make serve` alone: its rebuild, now an orphan, stops within seconds (its dvc repro and stage
    with it) and ends Cancelled, so the next serve's rebuild does not fail on the checkout's rebuild lock."""
    import psutil

    (tmp_path / "home").mkdir()
    with prefect_server(tmp_path / "home") as prefect_api:
        slow, args, proc, log, first = _serving_a_slow_stage(prefect_api, tmp_path, repo)
        try:
            tree = [p for p in psutil.Process(proc.pid).children(recursive=True)]
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            log.close()
        gone, alive = psutil.wait_procs(tree, timeout=30)
        assert not alive, [p.cmdline() for p in alive]
        _wait(lambda: _run_state(prefect_api, first) == "CANCELLED", 60, "the orphaned rebuild did not end Cancelled",
              tmp_path / "serve.log")
        proc, log = _serve(tmp_path, repo, _env(prefect_api), repo, *args)
        try:
            (slow / "slow").unlink()
            second = _start_rebuild(prefect_api, tmp_path / "serve.log")
            state = _wait(lambda: (s := _run_state(prefect_api, second)) in ("COMPLETED", "FAILED", "CRASHED") and s,
                          120, "the next rebuild did not finish", tmp_path / "serve.log")
            assert state == "COMPLETED", (tmp_path / "serve.log").read_text()[-3000:]
        finally:
            stop_process_group(proc, signal.SIGINT)
            log.close()


def test_rebuild_logs_read_as_messages_and_link_their_stage_runs(tmp_path, repo):
    """A rebuild's log: no progress bars, no second time stamp on a stage's lines; its artifacts: a table of
    the stage runs it started with a link to each."""
    # the lines themselves: tests/test_rebuild_lines.py
    slow = _slow_dvc_repo(tmp_path / "fast", repo)
    (slow / "slow").unlink()
    (tmp_path / "home").mkdir()
    with prefect_server(tmp_path / "home") as prefect_api:  # its own: the latest rebuild run is this one
        _rebuild_and_read_its_log(prefect_api, tmp_path, slow)


def _rebuild_and_read_its_log(prefect_api: str, tmp_path: Path, slow: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "flows.rebuild", "--repo-dir", str(slow)], cwd=tmp_path,
                         env=_env(prefect_api), capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    rebuild = prefect_http.post(f"{prefect_api}/flow_runs/filter",
                                json={"flows": {"name": {"any_": ["rebuild"]}}, "sort": "START_TIME_DESC",
                                      "limit": 1}, timeout=60).json()[0]
    stage = _stage_runs(prefect_api, rebuild["id"])
    assert [s["name"] for s in stage] == ["slow_stage"]
    logs = prefect_http.post(f"{prefect_api}/logs/filter",
                             json={"logs": {"flow_run_id": {"any_": [rebuild["id"]]}}}, timeout=60).json()
    forwarded = [entry["message"] for entry in logs if "slow_stage" in entry["message"]]
    assert forwarded and not any(re.match(r"\d{2}:\d{2}:\d{2}\.\d{3} \||(DEBUG|INFO|WARNING|ERROR) +\|", m)
                                 for m in forwarded), forwarded
    artifacts = prefect_http.post(f"{prefect_api}/artifacts/filter",
                                  json={"artifacts": {"key": {"any_": ["rebuild-stages"]}}}, timeout=60).json()
    table = next(a for a in artifacts if a["flow_run_id"] == rebuild["id"])
    rows = json.loads(table["data"]) if isinstance(table["data"], str) else table["data"]
    assert rows[0]["stage"] == "slow_stage" and rows[0]["state"] == "Completed"
    assert rows[0]["run"].endswith(f"/runs/flow-run/{stage[0]['id']}")


def test_a_rebuild_run_is_named_for_its_targets_and_start(monkeypatch):
    """Rebuilds were named by Prefect's two random words; the runs list now says what each rebuilt."""
    import prefect.runtime.flow_run as current

    from flows.rebuild import run_name

    monkeypatch.setattr(current, "parameters", {"targets": ["quail_mc", "compare"]}, raising=False)
    assert re.fullmatch(r"rebuild quail_mc,compare \d\d-\d\d \d\d:\d\d", run_name())
    monkeypatch.setattr(current, "parameters", {"targets": []}, raising=False)
    assert run_name().startswith("rebuild all ")


def test_a_run_created_but_never_started_is_cancelled_when_the_stage_is_stopped(prefect_api):
    """Ctrl-C in the second between Prefect creating a stage's run and starting it left the run Pending for
    good. The stopped stage cancels the runs it created and never started (found by its process tag), and no
    other process's."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from prefect.states import Pending

    from flows._common import cancel_unstarted_runs, process_tag

    from prefect import flow

    @flow(name="pending_stage")
    def pending_stage() -> None: ...

    with temporary_settings({PREFECT_API_URL: prefect_api}), get_client(sync_client=True) as client:
        mine = client.create_flow_run(pending_stage, name="mine", tags=["dvc-stage", process_tag()], state=Pending())
        other = client.create_flow_run(pending_stage, name="other", tags=["dvc-stage", "stage-process:elsewhere:1"],
                                       state=Pending())
        assert cancel_unstarted_runs() == [str(mine.id)]
        assert client.read_flow_run(mine.id).state.type.value == "CANCELLED"
        assert client.read_flow_run(other.id).state.type.value == "PENDING"


def test_the_stop_deletes_the_future_runs_of_its_deployment_and_no_other(prefect_api):
    """Where Prefect's pause on shutdown left future runs (a server that did not answer the pause), the stop
    deletes the Scheduled runs of its own deployment; another deployment's stay."""
    from datetime import datetime, timedelta, timezone

    api = prefect_api.removesuffix("/")
    flow = prefect_http.post(f"{api}/flows/", json={"name": "rebuild"}, timeout=60).json()
    later = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    ids = {}
    for name in ("stop-mine", "stop-other"):
        deployment = prefect_http.post(f"{api}/deployments/", json={"name": name, "flow_id": flow["id"]},
                                       timeout=60).json()
        ids[name] = deployment["id"]
        for _ in range(2):
            prefect_http.post(f"{api}/deployments/{deployment['id']}/create_flow_run", timeout=60, json={
                "state": {"type": "SCHEDULED", "state_details": {"scheduled_time": later}}})
    assert [len(_scheduled_runs(api, ids[n])) for n in ids] == [2, 2]
    done = subprocess.run([sys.executable, "-c", "from flows.serve import remove_scheduled_runs; "
                           "print(remove_scheduled_runs('stop-mine'))"], env=_env(api), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "2", done.stderr[-2000:]
    assert [len(_scheduled_runs(api, ids[n])) for n in ids] == [0, 2]
