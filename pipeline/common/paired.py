"""Is a system better than its baseline on the same questions? The paired bootstrap.

Two systems scored on one eval set share its hard and easy questions, so their separate intervals overlap
even when one wins on almost every question. The question that matters is the interval of the *difference*,
resampling questions jointly (``scipy.stats.bootstrap(..., paired=True)``, percentile method, seeded): a system
counts as above its baseline when that interval lies above zero.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RESAMPLES = 2000
SEED = 0


def _mean_difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


def paired_difference(system: Sequence[float], baseline: Sequence[float], confidence: float = 0.95) -> dict:
    """Per-question scores in [0, 1] of two systems on the same questions (same order) -> both means, their
    difference and its interval, in points (0-100), and whether the interval lies above zero."""
    from scipy.stats import bootstrap

    a, b = np.asarray(system, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired scores need one score per question from each system: {a.shape} vs {b.shape}")
    if a.size == 0:
        raise ValueError("paired scores: no questions")
    diff = a - b
    if np.all(diff == diff[0]):  # no spread to resample (identical predictions included)
        low = high = float(diff[0])
    else:
        res = bootstrap((a, b), _mean_difference, paired=True, vectorized=True, confidence_level=confidence,
                        n_resamples=RESAMPLES, method="percentile", random_state=np.random.default_rng(SEED))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return {"system_mean": round(100 * float(a.mean()), 2), "baseline_mean": round(100 * float(b.mean()), 2),
            "difference": round(100 * float(diff.mean()), 2), "ci95": [round(100 * low, 2), round(100 * high, 2)],
            "above": bool(low > 0), "questions": int(a.size),
            "wins": int((diff > 0).sum()), "losses": int((diff < 0).sum())}
