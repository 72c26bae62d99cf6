"""Resampling a yes/no training set so the label prior lowers no loss: the drawn examples hold both answers
equally, every example of the rarer answer repeated as evenly as the counts allow; ``none`` draws every example
once, as before the choice existed (same fingerprint), and a multiple-choice model is refused the option."""

from __future__ import annotations

from collections import Counter

import pytest

import pipeline.training.choice_model as choice_model
from pipeline.params import project_section
from pipeline.training.class_balance import balanced_index
from pipeline.training.finetune import TrainConfig
from pipeline.training.pair_encoding import PairFeatures


def test_none_draws_every_example_once():
    assert balanced_index([1, 1, 0, 1], "none") == [0, 1, 2, 3]


@pytest.mark.parametrize("labels", [[1] * 5 + [0] * 2, [0] * 3 + [1] * 10, [1, 0] * 4, [2, 0, 0, 1, 0, 0, 0]])
def test_oversample_evens_the_answers_and_spreads_the_repeats(labels):
    drawn = balanced_index(labels, "oversample")
    assert drawn[:len(labels)] == list(range(len(labels)))  # every example still drawn
    by_class = Counter(labels[i] for i in drawn)
    assert len(set(by_class.values())) == 1 and by_class[labels[0]] == Counter(labels).most_common(1)[0][1]
    for label in set(labels):
        repeats = Counter(i for i in drawn if labels[i] == label).values()
        assert max(repeats) - min(repeats) <= 1  # no example of a class drawn two more times than another


def test_an_unknown_balance_is_refused():
    with pytest.raises(ValueError, match="class_balance 'weights': none or oversample"):
        balanced_index([0, 1], "weights")


def _captured(monkeypatch, head: str, balance: str, labels: list[int], per_row: int = 1) -> dict:
    """What ``train_choice_model`` hands the loop: the example count, the labels of the batches it makes over
    every drawn index, and the fingerprint; the loop itself is replaced (its training is tested elsewhere)."""
    seen: dict = {}

    def fake_fine_tune(auto_class, n, make_batch, cfg, out_dir, fingerprint, **kwargs):
        batch = make_batch(list(range(n)), type("Tok", (), {"pad_token_id": 0}), False)
        seen.update(n=n, labels=batch["labels"].tolist(), fingerprint=fingerprint)
        return {}

    monkeypatch.setattr(choice_model, "fine_tune", fake_fine_tune)
    rows = len(labels) * per_row
    feats = PairFeatures([[101, 7, 102]] * rows, [[1, 1, 1]] * rows, [[0, 0, 0]] * rows, 0)
    p = project_section("strategyqa_qa", seeds=[0], device="cpu")
    choice_model.train_choice_model(head, feats, labels, 2 if head == "classification" else per_row,
                                    TrainConfig.from_params(p, p.model_name_or_path), None, {"toy": 1},
                                    class_balance=balance)
    return seen


def test_the_loop_trains_on_the_drawn_examples(monkeypatch):
    labels = [1, 1, 1, 1, 0]
    plain = _captured(monkeypatch, "classification", "none", labels)
    assert plain["n"] == 5 and plain["labels"] == labels and "class_balance" not in plain["fingerprint"]
    even = _captured(monkeypatch, "classification", "oversample", labels)
    assert even["n"] == 8 and Counter(even["labels"]) == {1: 4, 0: 4}
    assert even["fingerprint"]["class_balance"] == "oversample"  # a resampled run never resumes a plain one


def test_multiple_choice_is_refused_the_resampling(monkeypatch):
    with pytest.raises(ValueError, match="class_balance 'oversample' is for a classifier"):
        _captured(monkeypatch, "multiple_choice", "oversample", [0, 1, 2, 3], per_row=4)
