"""A research group's setup on one machine, with real servers on 127.0.0.1: a git origin (bare repository),
SeaweedFS as the S3 DVC remote, a Prefect server with a process work pool and workers.

- Shared artifacts: Alice reproduces stages and pushes; Bob clones, pulls, and finds nothing to do
  (``dvc status`` clean, ``dvc repro`` runs no stage); a wrong secret is refused with a clear error. Credentials
  come from ``dvc remote modify --local`` (Alice) or the environment (Bob, the workers), never from git.
- Prefect workers: the project's ``prefect.yaml`` deployed as is; a ``sweep`` of two points runs on two
  ``python -m flows.worker`` processes (Prefect's process worker, checking each run) at overlapping times, each point a ``dvc exp run`` in its own clone that
  pushes its experiment; Alice then sees both with ``dvc exp show`` and ``dvc metrics diff``."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from pipeline.common.processes import stop_process_group
from tests import prefect_http
from tests.conftest import prefect_server
from tests.test_engine_guard import force_completed, pickle_record
from tests.local_s3 import seaweedfs_s3
from tests.params_files import PROJECT_PARAMS

STAGES = ["benchmark_sources", "sample"]  # cheap stages with cached outputs (data/sample)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # starts a Prefect server, workers and SeaweedFS


def _env(extra: dict[str, str] | None = None, **kw: str) -> dict[str, str]:
    venv = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "QA_PIPELINE_SWEEP"))}
    env.update(PATH=venv + os.pathsep + os.environ["PATH"], DVC_NO_ANALYTICS="1", GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org",
               QA_PIPELINE_NO_PROGRESS="1", PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1")
    env.update(extra or {}, **kw)
    return env


def sh(cmd: list[str], cwd: Path, env: dict[str, str], check: bool = True, timeout: float = 600):
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert res.returncode == 0, f"{cmd}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


@pytest.fixture(scope="module")
def prefect(tmp_path_factory):
    home = tmp_path_factory.mktemp("prefect-home")
    with prefect_server(home) as api:
        yield {"PREFECT_API_URL": api, "PREFECT_HOME": str(home)}


@pytest.fixture(scope="module")
def team(tmp_path_factory, repo, prefect):
    """origin.git, the S3 store, and Alice's clone after `dvc repro` + `git push` + `dvc push`."""
    root = tmp_path_factory.mktemp("team")
    (root / "shared").symlink_to((repo.parent / "shared").resolve())  # params name ../shared
    with seaweedfs_s3(root / "s3") as store:
        origin = root / "origin.git"
        env = _env(prefect)
        sh(["git", "clone", "-q", "--bare", str(repo), str(origin)], root, env)
        alice = root / "alice"
        sh(["git", "clone", "-q", str(origin), str(alice)], root, env)
        # a checkout on a detached commit (as some CI systems make) gives a clone without a branch, and the
        # source's other branches may be ahead of it: the group works on a branch of its own
        sh(["git", "checkout", "-q", "-B", "team"], alice, env)
        sh(["git", "--git-dir", str(origin), "symbolic-ref", "HEAD", "refs/heads/team"], root, env)
        # the group's remote settings go into git; the secret only into .dvc/config.local
        sh(["dvc", "remote", "modify", "team", "endpointurl", store.endpoint], alice, env)
        sh(["dvc", "remote", "modify", "team", "url", f"s3://{store.bucket}/dvc"], alice, env)
        sh(["dvc", "remote", "default", "team"], alice, env)  # the group's default (the project ships none)
        sh(["dvc", "remote", "modify", "--local", "team", "access_key_id", store.access_key], alice, env)
        sh(["dvc", "remote", "modify", "--local", "team", "secret_access_key", store.secret_key], alice, env)
        sh(["dvc", "repro", *STAGES], alice, env)
        sh(["git", "add", ".dvc/config", "dvc.lock"], alice, env)
        sh(["git", "commit", "-q", "-m", "team remote; reproduced"], alice, env, check=False)
        sh(["git", "push", "-q", "origin", "HEAD:refs/heads/team"], alice, env)
        push = sh(["dvc", "push", *STAGES], alice, env)
        yield {"root": root, "origin": origin, "alice": alice, "store": store, "env": env, "push": push.stdout}


def _aws(store, secret: str | None = None) -> dict[str, str]:
    return {"AWS_ACCESS_KEY_ID": store.access_key, "AWS_SECRET_ACCESS_KEY": secret or store.secret_key}


def test_the_secret_never_reaches_git(team):
    committed = sh(["git", "show", "HEAD:.dvc/config"], team["alice"], team["env"]).stdout
    assert team["store"].endpoint in committed and team["store"].secret_key not in committed
    assert team["store"].secret_key in (team["alice"] / ".dvc" / "config.local").read_text()
    assert "config.local" in (team["alice"] / ".dvc" / ".gitignore").read_text()


def test_a_teammate_pulls_and_has_nothing_to_recompute(team):
    store, root = team["store"], team["root"]
    assert "pushed" in team["push"] and "0 files pushed" not in team["push"]
    bob = root / "bob"
    env = _env(team["env"], **_aws(store))  # Bob's credentials: the environment
    sh(["git", "clone", "-q", str(team["origin"]), str(bob)], root, env)
    assert not (bob / "data" / "sample").exists()
    sh(["dvc", "pull", *STAGES], bob, env)
    status = sh(["dvc", "status", *STAGES], bob, env).stdout
    assert "up to date" in status, status
    before = {p: p.read_bytes() for p in (bob / "data" / "sample").rglob("*") if p.is_file()}
    repro = sh(["dvc", "repro", *STAGES], bob, env).stdout
    # the stages, and check_params, which every stage depends on
    assert "Running stage" not in repro and repro.count("didn't change, skipping") == len(STAGES) + 1, repro
    assert all(f"Stage '{name}' didn't change, skipping" in repro for name in ("check_params", *STAGES)), repro
    assert {p: p.read_bytes() for p in (bob / "data" / "sample").rglob("*") if p.is_file()} == before
    alice_files = sorted(p.relative_to(team["alice"]) for p in (team["alice"] / "data" / "sample").rglob("*"))
    assert sorted(p.relative_to(bob) for p in (bob / "data" / "sample").rglob("*")) == alice_files


def test_a_wrong_secret_is_refused_with_a_clear_error(team):
    root = team["root"]
    eve = root / "eve"
    env = _env(team["env"], **_aws(team["store"], secret="not-the-secret"))
    sh(["git", "clone", "-q", str(team["origin"]), str(eve)], root, env)
    res = sh(["dvc", "pull", "sample"], eve, env, check=False)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert f"failed to connect to s3 ({team['store'].bucket}/dvc" in out and "Forbidden" in out, out[-2000:]
    assert "failed to pull data from the cloud" in out
    assert not (eve / "data" / "sample").exists()
    res = sh(["dvc", "pull", "sample"], eve, _env(team["env"]), check=False)  # no credentials at all
    assert res.returncode != 0 and "Unable to locate credentials" in res.stdout + res.stderr


def _api(prefect, method: str, path: str, body: dict | None = None):
    r = prefect_http.request(method, prefect["PREFECT_API_URL"] + path, json=body, timeout=30)
    r.raise_for_status()
    return r.json()


def _deployed(team, repo: Path, work: Path) -> tuple[dict[str, str], subprocess.CompletedProcess]:
    """A worker's environment (the group's origin, its S3 secret, ``work`` as the points' folder) with the
    project's work pool and prefect.yaml deployed as they are; returns it and the deploy's output."""
    env = _env(team["env"], **_aws(team["store"]), QA_PIPELINE_CHECKOUT=str(repo),
               QA_PIPELINE_SWEEP_REPO=str(team["origin"]), QA_PIPELINE_SWEEP_WORKDIR=str(work), PYTHONPATH=str(repo))
    prefect_bin = str(Path(sys.executable).with_name("prefect"))
    sh([prefect_bin, "work-pool", "create", "qa-pipeline", "--type", "process", "--base-job-template",
        str(repo / "infra/prefect/process-job-template.json"), "--overwrite"], repo, env)
    return env, sh([prefect_bin, "--no-prompt", "deploy", "--all"], repo, env)


def _failed_runs_logs(prefect, flow_names: list[str]) -> str:
    """The Prefect log lines of every run of these flows that did not complete: a point's own error (its clone,
    its `dvc exp run`, its push) is in its flow run's logs, not in the worker's console."""
    runs = _api(prefect, "POST", "/flow_runs/filter", {"flows": {"name": {"any_": flow_names}}})
    failed = [r for r in runs if r["state_type"] != "COMPLETED"]
    if not failed:
        return ""
    lines = _api(prefect, "POST", "/logs/filter", {"logs": {"flow_run_id": {"any_": [r["id"] for r in failed]}},
                                                   "sort": "TIMESTAMP_ASC", "limit": 200})
    names = {r["id"]: f"{r['name']} ({r['state_type']}, {r.get('parameters', {}).get('point', '')})" for r in failed}
    return "\n".join(f"{names.get(x['flow_run_id'], '?')}: {x['message'][-2000:]}" for x in lines)


def test_a_sweep_runs_two_points_on_two_workers_at_once(team, prefect, repo):
    """Two real process workers, each point a fresh clone, a `dvc exp run` and a push (2.3-2.8 min beside another
    test worker, measured twice): the points' target is quail_baselines, the cheapest stage with a headline that
    a parameter moves (about 15 s of work), so what the minutes buy is the orchestration itself: overlapping
    runs, one per worker, and both experiments back in Alice's clone."""
    root = team["root"]
    (root / "points").mkdir()
    (root / "points" / "shared").symlink_to(root / "shared")
    env, deployed = _deployed(team, repo, root / "points")
    prefect_bin = str(Path(sys.executable).with_name("prefect"))
    assert "point" in deployed.stdout and "rebuild/pool" in deployed.stdout
    workers, logs = [], []
    try:
        for i, queue in enumerate(("points", "points", "control")):
            log = (root / f"worker{i}.log").open("wb")
            logs.append(log)
            workers.append(subprocess.Popen(
                [sys.executable, "-m", "flows.worker", "--pool", "qa-pipeline", "--work-queue", queue, "--limit", "1",
                 "--name", f"worker-{i}"], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True))
        grid = {"quail.pmi_window": [5, 20]}
        sh([prefect_bin, "deployment", "run", "sweep/sweep", "--param", f"grid={json.dumps(grid)}",
            "--param", "name=t", "--param", 'targets=["quail_baselines"]'], repo, env)
        deadline = time.monotonic() + 900
        runs: list = []
        while time.monotonic() < deadline:
            try:
                runs = _api(prefect, "POST", "/flow_runs/filter", {"flows": {"name": {"any_": ["sweep"]}}})
            except httpx.TimeoutException:  # the SQLite server is busy recording both points: ask again
                continue
            if runs and runs[0]["state_type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
                break
            time.sleep(3)
        logs_text = "".join((root / f"worker{i}.log").read_text(errors="replace")[-3000:] for i in range(3))
        assert runs and runs[0]["state_type"] == "COMPLETED", (
            logs_text + "\n" + _failed_runs_logs(prefect, ["sweep", "experiment-point"]))
        points = _api(prefect, "POST", "/flow_runs/filter", {"flows": {"name": {"any_": ["experiment-point"]}}})
        assert len(points) == 2 and all(p["state_type"] == "COMPLETED" for p in points), (
            _failed_runs_logs(prefect, ["experiment-point"]))
        # overlapping: each started before the other ended
        (a, b) = sorted(points, key=lambda p: p["start_time"])
        assert b["start_time"] < a["end_time"], (a["start_time"], a["end_time"], b["start_time"])
        arts = _api(prefect, "POST", "/artifacts/filter", {"artifacts": {"key": {"any_": ["experiment-point"]}}})
        pids = {int(x["data"].split("worker pid ")[1].split(")")[0]) for x in arts}
        assert pids == {workers[0].pid, workers[1].pid}  # one point on each worker
        # a point named after the work folder's shared data, run for real: it clones, runs and pushes in a folder
        # of its own, and the shared data (and nothing else of the work folder) is touched
        point = _api(prefect, "GET", "/deployments/name/experiment-point/point")
        named = _api(prefect, "POST", f"/deployments/{point['id']}/create_flow_run", {
            "parameters": {"point": {"quail.pmi_window": 7}, "name": "shared", "targets": ["benchmark_sources"]},
            "name": "shared"})
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            shared_run = _api(prefect, "GET", f"/flow_runs/{named['id']}")
            if shared_run["state_type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
                break
            time.sleep(2)
        assert shared_run["state_type"] == "COMPLETED", (shared_run["state"], logs_text)
        assert (root / "points" / "shared").is_symlink() and (root / "shared").resolve().is_dir()
        assert [p.name for p in (root / "points").iterdir()] == ["shared"]  # every clone removed, only its own
    finally:
        for w in workers:
            stop_process_group(w, timeout=20)
        for log in logs:
            log.close()
    # Alice sees both experiments and compares them
    alice, aenv = team["alice"], team["env"]
    names = sorted(x["description"] for x in arts)
    for name in names:
        sh(["dvc", "exp", "pull", "origin", name], alice, aenv)
    shown = json.loads(sh(["dvc", "exp", "show", "--json"], alice, aenv).stdout)
    exp_names = {exp["revs"][0].get("name") for rev in shown for exp in rev.get("experiments") or []}
    assert set(names) <= exp_names, exp_names
    diff = sh(["dvc", "metrics", "diff", names[0], names[1], "--json"], alice, aenv).stdout
    changed = json.loads(diff)
    assert any("quail" in path for path in changed), changed
    pmi = yaml.safe_load(sh(["dvc", "params", "diff", names[0], names[1], "--json"], alice, aenv).stdout)
    assert any("quail.pmi_window" in k for v in pmi.values() for k in v), pmi


def test_hostile_experiment_points_sent_to_the_server_run_nothing(team, prefect, repo):
    """An attacker with the server's API (no auth on a local server) creates experiment-point runs directly:
    a ``FILE:key`` override that would make DVC write a Python file, a name that climbs out of the work folder,
    and a value that Hydra would fill in from the worker's secrets. Each run fails before anything runs: no
    file written, no folder deleted, nothing pushed to the group's git remote."""
    root = team["root"]
    work = root / "hostile-points"
    work.mkdir()
    victim = root / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    env, _ = _deployed(team, repo, work)
    deployment = _api(prefect, "GET", "/deployments/name/experiment-point/point")
    # run-level job variables that would choose a repository, a folder, a command: refused by the server
    for job_variables in ({"env": {"QA_PIPELINE_SWEEP_REPO": str(root / "evil.git")}}, {"command": "touch /tmp/pwned"},
                          {"working_dir": str(victim)}, {"env.QA_PIPELINE_REBUILD_DIR": str(victim)}):
        r = prefect_http.post(prefect["PREFECT_API_URL"] + f"/deployments/{deployment['id']}/create_flow_run",
                              json={"parameters": {"point": {"quail.pmi_window": 5}, "name": "jv"},
                                    "job_variables": job_variables}, timeout=30)
        assert r.status_code == 422, (job_variables, r.status_code, r.text[:300])
        assert "Additional properties are not allowed" in r.text or "additional" in r.text.lower(), r.text[:300]
    import socket

    listener = socket.create_server(("127.0.0.1", 0))  # the attacker's rendezvous and "Elasticsearch"
    listener.settimeout(0.1)
    evil = f"127.0.0.1:{listener.getsockname()[1]}"
    env.update(QA_PIPELINE_ES_USER="elastic", QA_PIPELINE_ES_PASSWORD="worker-secret")  # the worker's own
    attacks = {
        "rendezvous": ({"distributed.nnodes": 2, "distributed.rdzv_endpoint": evil}, "a5"),
        "es-credentials": ({"search.backend": "elasticsearch", "search.es_urls": [f"http://{evil}"]}, "a6"),
        "file-key": ({"flows/_server.py:DEFAULT_PORT": "__import__('os').system('touch /tmp/pwned')"}, "a1"),
        "climb": ({"quail.pmi_window": 5}, "../victim"),
        "secret": ({"quail.word_vectors": "${oc.env:AWS_SECRET_ACCESS_KEY}"}, "a3"),
        "outside": ({"../../x.yaml:a": 1}, "a4"),
    }
    log = (root / "hostile-worker.log").open("wb")
    worker = subprocess.Popen([sys.executable, "-m", "flows.worker", "--pool", "qa-pipeline", "--work-queue", "points",
                               "--limit", "2", "--name", "hostile"], cwd=root, env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        ids = {}
        for label, (point, name) in attacks.items():
            run = _api(prefect, "POST", f"/deployments/{deployment['id']}/create_flow_run",
                       {"parameters": {"point": point, "name": name}, "name": f"hostile-{label}"})
            ids[label] = run["id"]
        deadline = time.monotonic() + 600
        states: dict = {}
        while time.monotonic() < deadline:
            states = {label: _api(prefect, "GET", f"/flow_runs/{i}")["state_type"] for label, i in ids.items()}
            if all(s in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED") for s in states.values()):
                break
            time.sleep(3)
    finally:
        stop_process_group(worker, timeout=20)
        log.close()
    worker_log = (root / "hostile-worker.log").read_text(errors="replace")
    assert states == dict.fromkeys(attacks, "FAILED"), (states, worker_log[-4000:])
    assert "interpolation" in worker_log and "section.key" in worker_log and "letters, digits" in worker_log
    assert "may not set distributed.nnodes, distributed.rdzv_endpoint" in worker_log
    assert "may not set search.backend, search.es_urls" in worker_log
    with pytest.raises(TimeoutError):  # nobody connected to the attacker's port
        listener.accept()
    listener.close()
    assert (victim / "keep.txt").read_text() == "keep"
    assert not Path("/tmp/pwned").exists() and not list(work.iterdir())  # no clone was even made
    refs = sh(["git", "ls-remote", str(team["origin"]), "refs/exps/*"], root, env).stdout
    # compare whole experiment names: "a1" is also a substring of many a commit hash in the listing
    pushed = {line.rsplit("/", 1)[-1] for line in refs.splitlines() if line.strip()}
    assert not pushed & {name for _, name in attacks.values()} and not any("victim" in n for n in pushed), refs


def test_an_api_caller_cannot_deploy_code_to_the_workers(team, prefect, repo, tmp_path):
    """Anyone who reaches the API can create a deployment, edit one, or edit the pool's job template, and can time
    an edit to the moment a run shows Pending; Prefect's own worker would run what the server then says, with the
    worker's secrets. The project's worker builds every job from its checkout and loads the flow from the
    checkout's prefect.yaml: a deployment not in it ends Crashed, and for the checkout's own deployments a shell
    pull step, another entrypoint, a job template with a command or with ``env`` (a PYTHONPATH holding a
    ``sitecustomize.py``), patched in before the run or the moment it shows Pending, run nothing of theirs. The runs
    ask for a point the checkout's flow refuses, so each ends Failed by the checkout's own check, quickly."""
    store = team["store"]
    marker = tmp_path / "pwned"
    env = _env(team["env"], **_aws(store), QA_PIPELINE_CHECKOUT=str(repo), QA_PIPELINE_SWEEP_REPO=str(team["origin"]),
               QA_PIPELINE_SWEEP_WORKDIR=str(tmp_path / "work"), PYTHONPATH=str(repo),
               QA_PIPELINE_ES_PASSWORD="worker-secret")
    (tmp_path / "work").mkdir()
    evil_path = tmp_path / "evil-site"
    evil_path.mkdir()
    (evil_path / "sitecustomize.py").write_text(
        f"import os\nopen({str(marker)!r}, 'a').write(os.environ.get('QA_PIPELINE_ES_PASSWORD', '') + '\\n')\n")
    prefect_bin = str(Path(sys.executable).with_name("prefect"))
    template = json.loads((repo / "infra/prefect/process-job-template.json").read_text())
    sh([prefect_bin, "work-pool", "create", "qa-pipeline", "--type", "process", "--base-job-template",
        str(repo / "infra/prefect/process-job-template.json"), "--overwrite"], repo, env)
    sh([prefect_bin, "--no-prompt", "deploy", "--all"], repo, env)
    point = _api(prefect, "GET", "/deployments/name/experiment-point/point")
    shell = [{"prefect.deployments.steps.run_shell_script": {"script": f"touch {marker}"}}]
    api = prefect["PREFECT_API_URL"]

    def patch(path: str, body: dict) -> None:
        r = prefect_http.request("PATCH", api + path, json=body, timeout=30)
        assert r.status_code < 300, (path, r.status_code, r.text[:300])

    def run_of(deployment_id: str, label: str) -> str:  # a point the checkout's flow refuses: no clone, no DVC
        return _api(prefect, "POST", f"/deployments/{deployment_id}/create_flow_run",
                    {"parameters": {"point": {"quail.pmi_window": "${oc.env:HOME}"}, "name": label},
                     "name": label})["id"]

    def when_pending(run_id: str, then) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if _api(prefect, "GET", f"/flow_runs/{run_id}")["state_type"] != "SCHEDULED":
                break
            time.sleep(0.05)
        time.sleep(0.3)
        then()

    flow = _api(prefect, "POST", "/flows/", {"name": "experiment-point"})
    evil = _api(prefect, "POST", "/deployments/", {
        "name": "evil", "flow_id": flow["id"], "entrypoint": "flows/sweep.py:experiment_point", "pull_steps": shell,
        "work_pool_name": "qa-pipeline", "work_queue_name": "points"})
    other = _api(prefect, "POST", "/flows/", {"name": "not-ours"})
    squatter = _api(prefect, "POST", "/deployments/", {
        "name": "point", "flow_id": other["id"], "entrypoint": "flows/sweep.py:experiment_point",
        "pull_steps": shell, "work_pool_name": "qa-pipeline", "work_queue_name": "points"})
    env_template = json.loads(json.dumps(template))
    env_template["job_configuration"]["env"] = {"PYTHONPATH": str(evil_path)}
    command_template = json.loads(json.dumps(template))
    command_template["job_configuration"]["command"] = "{{ command }}"
    command_template["variables"]["properties"]["command"] = {"type": "string", "default": f"touch {marker}"}
    log = (tmp_path / "guard.log").open("wb")
    worker = subprocess.Popen([sys.executable, "-m", "flows.worker", "--pool", "qa-pipeline", "--work-queue", "points",
                               "--limit", "1", "--name", "guard"], cwd=tmp_path, env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)

    def ends(run_id: str) -> dict:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            run = _api(prefect, "GET", f"/flow_runs/{run_id}")
            if run["state_type"] in ("COMPLETED", "FAILED", "CRASHED", "CANCELLED"):
                return run
            time.sleep(1)
        raise AssertionError("the run never ended:\n" + (tmp_path / "guard.log").read_text(errors="replace")[-3000:])

    outcomes = {}
    try:
        outcomes["new deployment with a shell pull step"] = ends(run_of(evil["id"], "evil-new"))
        outcomes["a prefect.yaml name under another flow"] = ends(run_of(squatter["id"], "evil-squat"))
        patch(f"/deployments/{point['id']}", {"pull_steps": shell, "entrypoint": "flows/rebuild.py:rebuild"})
        outcomes["pull step and entrypoint patched"] = ends(run_of(point["id"], "evil-pull"))
        patch(f"/deployments/{point['id']}", {"pull_steps": point["pull_steps"], "entrypoint": point["entrypoint"]})
        patch("/work_pools/qa-pipeline", {"base_job_template": command_template})
        outcomes["job template with a command"] = ends(run_of(point["id"], "evil-command"))
        patch("/work_pools/qa-pipeline", {"base_job_template": template})
        for i in range(3):  # the timed attacks: patched in before the run, patched back the moment it is Pending
            patch("/work_pools/qa-pipeline", {"base_job_template": env_template})
            run = run_of(point["id"], f"evil-env-{i}")
            when_pending(run, lambda: patch("/work_pools/qa-pipeline", {"base_job_template": template}))
            outcomes[f"pool env timed {i}"] = ends(run)
            run = run_of(point["id"], f"evil-pull-timed-{i}")
            when_pending(run, lambda: patch(f"/deployments/{point['id']}", {"pull_steps": shell}))
            outcomes[f"pull step timed {i}"] = ends(run)
            patch(f"/deployments/{point['id']}", {"pull_steps": point["pull_steps"]})
        # a result record the worker's flow-run process would unpickle: forced on the run the moment it is Pending
        # (tests/test_engine_guard.py shows Prefect's own engine loads it)
        record = pickle_record(tmp_path / "record.json", marker)
        run = run_of(point["id"], "evil-forced-state")
        when_pending(run, lambda: force_completed(api, run, record))
        deadline = time.monotonic() + 180  # the run shows COMPLETED at once; wait for the worker's process to end
        while time.monotonic() < deadline and "ServerStateRefused" not in (tmp_path / "guard.log").read_text(
                errors="replace"):
            time.sleep(1)
        forced = _api(prefect, "GET", f"/flow_runs/{run}")
    finally:
        stop_process_group(worker, timeout=20)
        log.close()
    guard_log = (tmp_path / "guard.log").read_text(errors="replace")
    states = {k: (r["state_type"], (r["state"] or {}).get("message", "")) for k, r in outcomes.items()}
    assert not marker.exists(), (marker.read_text(), states)  # no pull step, command, sitecustomize or pickle ran
    assert forced["state_type"] == "COMPLETED"  # as the caller forced it: API access can set a run's state
    assert "ServerStateRefused" in guard_log and "is not read" in guard_log, guard_log[-4000:]
    assert not list((tmp_path / "work").iterdir())  # nothing was cloned
    for refused in ("new deployment with a shell pull step", "a prefect.yaml name under another flow"):
        assert states[refused][0] == "CRASHED", (states, guard_log[-4000:])
    assert "is not in" in states["new deployment with a shell pull step"][1]
    assert "belongs to flow 'not-ours'" in states["a prefect.yaml name under another flow"][1]
    ran_checkout = {k: v for k, v in states.items() if k not in ("new deployment with a shell pull step",
                                                                 "a prefect.yaml name under another flow")}
    # the checkout's flow ran and refused the point itself
    assert all(state == "FAILED" for state, _ in ran_checkout.values()), (states, guard_log[-4000:])
    assert "interpolation" in guard_log


@pytest.mark.parametrize("kind,template", [("process", "process-job-template.json"),
                                           ("docker", "docker-job-template.json"),
                                           ("kubernetes", "kubernetes-job-template.json")])
def test_docker_and_kubernetes_job_templates_are_accepted_by_the_server(prefect, repo, kind, template):
    """The server validates a pool's base job template (variables schema, placeholders) when it is created."""
    env = _env(prefect)
    path = repo / "infra" / "prefect" / template
    prefect_bin = str(Path(sys.executable).with_name("prefect"))
    sh([prefect_bin, "work-pool", "create", f"qa-{kind}", "--type", kind, "--base-job-template", str(path),
        "--overwrite"], repo, env)
    pool = _api(prefect, "GET", f"/work_pools/qa-{kind}")
    assert pool["type"] == kind
    assert pool["base_job_template"] == json.loads(path.read_text())
    variables = pool["base_job_template"]["variables"]
    # nothing a run could use to choose code, a repository, a folder, a command or the environment
    assert variables["additionalProperties"] is False
    assert not {"env", "command", "image", "volumes", "namespace", "working_dir", "service_account_name",
                "cluster_config", "container_create_kwargs", "privileged"} & set(variables["properties"])
    if kind != "process":  # a process worker's runs take the worker's own environment
        assert pool["base_job_template"]["job_configuration"]["env"]["QA_PIPELINE_CHECKOUT"] == "/opt/qa-pipeline"


def test_prefect_yaml_schedule_is_the_params_schedule(repo):
    from pipeline.params import load_params

    deployments = {d["name"]: d for d in yaml.safe_load((repo / "prefect.yaml").read_text())["deployments"]}
    schedule = load_params(PROJECT_PARAMS).schedule
    (cron,) = deployments["pool"]["schedules"]
    assert (cron["cron"], cron["timezone"]) == (schedule.cron, schedule.timezone)
    # make serve's deployment has its own name: serve re-registers a deployment of its name as its own
    rebuilds = [d["name"] for d in deployments.values() if d["entrypoint"] == "flows/rebuild.py:rebuild"]
    assert schedule.deployment_name not in rebuilds
    assert deployments["point"]["work_pool"]["work_queue_name"] == "points"


def test_a_grid_is_checked_against_the_params_schema_before_any_point_runs():
    from pipeline.experiments.sweep import SweepError, grid_points, point_name

    assert grid_points({"quail.pmi_window": [5, 20], "quail.seed": [0]}) == [
        {"quail.pmi_window": 5, "quail.seed": 0}, {"quail.pmi_window": 20, "quail.seed": 0}]
    with pytest.raises(SweepError, match="'quail.nope' is not in params.yaml"):
        grid_points({"quail.nope": [1]})
    with pytest.raises(SweepError, match=r"quail.train_share: Input should be less than 1"):
        grid_points({"quail.train_share": [0.5, 2.0]})
    with pytest.raises(ValueError, match="stage names"):
        from pipeline.experiments.targets import check_targets

        check_targets(["../other/dvc.yaml:stage"])
    name = point_name("t", {"quail.pmi_window": 5})
    assert name.startswith("t-pmi_window-5-") and name == point_name("t", {"quail.pmi_window": 5})


@pytest.mark.parametrize("point, error", [
    ({"flows/_server.py:DEFAULT_PORT": "x"}, "section.key"),
    ({"../../x.yaml:a": 1}, "section.key"),
    ({"params.yaml:quail.seed": 1}, "section.key"),
    ({"quail.word_vectors": "${oc.env:AWS_SECRET_ACCESS_KEY}"}, "interpolation"),
    ({"discover.url_prefixes": ["www.bbc.co.uk/news/", "${oc.env:HOME}"]}, "interpolation"),
    ({"quail.pmi_window": {"a": 1}}, "mapping"),
    ({"quail.pmi_window": "5; rm -rf /"}, "valid integer"),
    ({}, "non-empty mapping"),
    ("quail.seed=1", "non-empty mapping"),
])
def test_a_hostile_point_is_refused_before_anything_runs(point, error, tmp_path, monkeypatch):
    from pipeline.experiments.sweep import SweepError, check_point, run_point

    with pytest.raises(SweepError, match=error):
        check_point(point)
    monkeypatch.setenv("QA_PIPELINE_SWEEP_REPO", str(tmp_path / "nowhere.git"))
    with pytest.raises(SweepError, match=error):  # run_point checks before it clones or deletes anything
        run_point(point, "ok-name", [], print, workdir=tmp_path)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["../victim", "..", "a/b", "/tmp/x", ".hidden", "x..y", "", "a" * 101, "x.lock",
                                  "name with space", "ref~1", None])
def test_unsafe_experiment_and_sweep_names_are_refused_before_any_file_operation(name, tmp_path, monkeypatch):
    from pipeline.experiments.sweep import SweepError, point_name, run_point

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("x")
    monkeypatch.setenv("QA_PIPELINE_SWEEP_REPO", str(tmp_path / "nowhere.git"))
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(SweepError, match="letters, digits"):
        run_point({"quail.pmi_window": 5}, name, [], print, workdir=work)
    with pytest.raises(SweepError, match="letters, digits"):
        point_name(name, {"quail.pmi_window": 5})
    assert (victim / "keep").exists() and not list(work.iterdir())


def test_a_point_named_after_a_folder_in_the_work_folder_removes_nothing_of_it(tmp_path, monkeypatch):
    """A point named ``shared`` (the group's shared data lives in the work folder's ``shared/``) or after another
    point's clone in progress: the run clones into a folder it creates itself and removes only that one, whether
    its steps succeed or fail (here the clone succeeds and ``dvc pull`` fails: the origin is a bare git
    repository with no DVC project)."""
    from pipeline.experiments.sweep import SweepError, run_point

    origin = tmp_path / "origin"
    sh(["git", "init", "-q", origin], tmp_path, dict(os.environ))
    (origin / "README").write_text("x")
    sh(["git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "README"], origin, dict(os.environ))
    sh(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], origin, dict(os.environ))
    work = tmp_path / "work"
    for kept in ("shared", "other-point"):
        (work / kept).mkdir(parents=True)
        (work / kept / "data.json").write_text("{}")
    monkeypatch.setenv("QA_PIPELINE_SWEEP_REPO", str(origin))
    for name in ("shared", "other-point"):
        with pytest.raises(SweepError, match="dvc pull"):
            run_point({"quail.pmi_window": 5}, name, [], print, workdir=work)
        assert (work / "shared" / "data.json").exists() and (work / "other-point" / "data.json").exists()
    assert sorted(p.name for p in work.iterdir()) == ["other-point", "shared"]  # the runs' own clones are gone


@pytest.mark.parametrize("poll_s", [1e9, 0, -1, float("nan"), "2", True])
def test_a_sweeps_polling_interval_is_bounded(poll_s):
    from pipeline.experiments.sweep import SweepError, check_poll

    with pytest.raises(SweepError, match="poll_s"):
        check_poll(poll_s)
    assert check_poll(2) == 2.0


def test_a_push_that_did_nothing_fails_the_point(tmp_path, monkeypatch):
    """`dvc exp push` exits 0 and pushes nothing when origin holds another experiment of that name: the point
    fails saying so, instead of ending COMPLETED (its message as DVC 3 prints it)."""
    from pipeline.experiments import sweep

    said = ("Local experiment 'pmi-5' has diverged from remote experiment with the same name. To override the "
            "remote experiment re-run with '--force'.")
    monkeypatch.setattr(sweep, "run", lambda cmd, cwd, log, what: said if cmd[:3] == ["dvc", "exp", "push"] else "")
    monkeypatch.setenv("QA_PIPELINE_SWEEP_REPO", str(tmp_path / "origin.git"))
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(sweep.SweepError, match="already holds an experiment named 'pmi-5'.*nothing was pushed"):
        sweep.run_point({"quail.pmi_window": 5}, "pmi-5", [], print, workdir=work)
    assert not list(work.iterdir())


def test_a_cancelled_point_ends_every_process_it_started(team, prefect, repo):
    """Cancelled from the server as a user cancels it in the UI, while the point trains: the worker stops the
    point's flow-run process, and every process of its ``dvc exp run`` (DVC, the training stage and its seed
    processes, in a clone about to be deleted) ends with it. The run ends Cancelled and its clone is removed.
    This is the whole path on the real worker, DVC and stage; a stage that ignores SIGTERM and writes nothing
    (the one left re-parented to init) is ended by the sweep's process-group stop, which
    tests/test_process_tree.py checks on its own (the real stage here also ends when its log pipe closes)."""
    import psutil

    root = team["root"]
    work = root / "cancelled-points"
    work.mkdir()
    (work / "shared").symlink_to(root / "shared")
    env, _ = _deployed(team, repo, work)
    log = (root / "cancel-worker.log").open("wb")
    worker = subprocess.Popen([sys.executable, "-m", "flows.worker", "--pool", "qa-pipeline", "--work-queue", "points",
                               "--limit", "1", "--name", "cancel"], cwd=root, env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        point = _api(prefect, "GET", "/deployments/name/experiment-point/point")
        run = _api(prefect, "POST", f"/deployments/{point['id']}/create_flow_run", {
            "parameters": {"point": {"quail.pmi_window": 9}, "name": "cancelled",
                           "targets": ["train_quail_mc@full"]}, "name": "cancelled"})

        def stage_processes() -> list[psutil.Process]:
            found = []
            for p in psutil.Process(worker.pid).children(recursive=True):
                try:
                    if "flows.stage train_quail_mc" in " ".join(p.cmdline()):
                        found.append(p)
                except psutil.NoSuchProcess:
                    pass
            return found

        deadline = time.monotonic() + 600
        stages: list[psutil.Process] = []
        while time.monotonic() < deadline and not stages:
            state = _api(prefect, "GET", f"/flow_runs/{run['id']}")["state_type"]
            assert state in ("SCHEDULED", "PENDING", "RUNNING"), (state, _failed_runs_logs(prefect, ["experiment-point"]))
            stages = stage_processes()
            time.sleep(0.2)
        assert stages, "no training stage started within 10 minutes"
        time.sleep(5)  # its seed processes started
        tree = [p for p in psutil.Process(worker.pid).children(recursive=True)]  # the flow run, dvc, the stages
        _api(prefect, "POST", f"/flow_runs/{run['id']}/set_state", {"state": {"type": "CANCELLING"}, "force": True})
        gone, alive = psutil.wait_procs(tree, timeout=90)
        survivors = [(p.pid, p.cmdline()) for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        for p in alive:  # clean up before failing
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
        assert not survivors, survivors
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            state = _api(prefect, "GET", f"/flow_runs/{run['id']}")["state_type"]
            if state in ("CANCELLED", "COMPLETED", "FAILED", "CRASHED"):
                break
            time.sleep(1)
        assert state == "CANCELLED", state
        assert [p.name for p in work.iterdir()] == ["shared"]  # the clone removed
    finally:
        stop_process_group(worker, timeout=20)
        log.close()
