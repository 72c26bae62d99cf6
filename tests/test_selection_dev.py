"""The selection-dev studies pair their arms by seed and pick by the section's own metric: a wrong pairing or a
log-loss read as "higher is better" would choose the other head."""

from __future__ import annotations

import pytest

from benchmarks import selection_dev
from benchmarks.selection_dev import Arm, Study, paired, summarise


def test_paired_differences_follow_the_seeds_and_give_a_t_interval():
    from scipy import stats

    got = paired([60.0, 62.0, 64.0], [61.0, 65.0, 64.5])
    assert got["per_seed"] == [1.0, 3.0, 0.5] and got["mean"] == pytest.approx(1.5)
    half = stats.t.ppf(0.975, 2) * stats.tstd([1.0, 3.0, 0.5]) / 3 ** 0.5
    assert got["ci95"] == pytest.approx([1.5 - half, 1.5 + half], abs=1e-3)


@pytest.mark.parametrize("metric, best", [("auc", "mean"), ("log_loss", "pooler")])
def test_the_better_arm_is_read_in_the_metrics_direction(monkeypatch, metric, best):
    runs = {"pooler": {43: {"dev_best": {"auc": 60.0, "log_loss": 0.60}, "best_step": 5},
                       42: {"dev_best": {"auc": 50.0, "log_loss": 0.70}, "best_step": 5}},
            "mean": {42: {"dev_best": {"auc": 55.0, "log_loss": 0.72}, "best_step": 5},
                     43: {"dev_best": {"auc": 62.0, "log_loss": 0.64}, "best_step": 5}, 44: {}}}
    monkeypatch.setattr(selection_dev, "_runs", lambda study, arm, revs: runs[arm.label])
    study = Study("x", "train_x", "reports/x.json", "runs", metric, (Arm("pooler", None), Arm("mean", "e")))
    out = summarise(study, {})
    assert out["seeds"] == [42, 43]  # only the seeds both arms ran
    assert out["minus_pooler"]["mean"]["auc"]["per_seed"] == [5.0, 2.0]  # 42 with 42, 43 with 43
    assert out["best"] == best
