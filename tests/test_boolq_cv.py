"""The BoolQ cross-validation study's statistics: folds by article (no article in two folds, the file's order
plays no part), a constant answer's AUC exactly 50, log-loss as the mean of -log p(gold), and intervals that
resample articles and hold their point."""

from __future__ import annotations

import math

import numpy as np

from benchmarks.boolq_cv import auc, by_article, carve_dev, fold_titles, log_loss


def test_folds_are_dealt_by_article_whatever_the_order():
    titles = [f"t{i % 13}" for i in range(60)]
    folds = fold_titles(titles, 5, 13)
    assert set(folds) == set(titles) and sorted(set(folds.values())) == [0, 1, 2, 3, 4]
    assert fold_titles(list(reversed(titles)), 5, 13) == folds
    assert carve_dev(titles, 0.2, 1) == carve_dev(list(reversed(titles)), 0.2, 1)


def test_auc_and_log_loss():
    labels = np.array([1, 1, 0, 0, 1])
    assert auc(np.zeros(5), labels) == 50.0  # a constant ranks nothing
    assert auc(np.array([3.0, 2.0, -1.0, -2.0, 1.0]), labels) == 100.0
    assert auc(-np.array([3.0, 2.0, -1.0, -2.0, 1.0]), labels) == 0.0
    assert math.isclose(log_loss(np.zeros(5), labels), math.log(2))
    margins = np.array([2.0, -1.0, 0.5, -3.0, 0.0])
    by_hand = np.mean([-math.log(1 / (1 + math.exp(-m))) if y else -math.log(1 - 1 / (1 + math.exp(-m)))
                       for m, y in zip(margins, labels)])
    assert math.isclose(log_loss(margins, labels), by_hand, rel_tol=1e-9)


def test_intervals_resample_articles_and_hold_the_point():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 200)
    titles = [f"a{i // 4}" for i in range(200)]
    good, blind = labels * 2.0 - 1 + rng.normal(0, 1, 200), rng.normal(0, 1, 200)
    out = by_article({"blind": blind, "good": good}, labels, titles, auc)
    for name in ("blind", "good", "good - blind"):
        assert out[name]["low"] <= out[name]["value"] <= out[name]["high"]
    assert out["good - blind"]["low"] > 0 and out["blind"]["low"] < 50 < out["blind"]["high"]
