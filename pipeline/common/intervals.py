"""95% bootstrap intervals for the headline figures.

An eval set of 30 or 229 questions moves a figure by several points between equally good systems, so a
figure is reported with the interval that says how far it can be trusted (``scipy.stats.bootstrap``,
percentile method: it stays defined when every question scores the same, where BCa is not). Resampling is
seeded: the same predictions give the same interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RESAMPLES = 2000
SEED = 0


def bootstrap_ci(per_question: Sequence[float], confidence: float = 0.95) -> list[float] | None:
    """``[low, high]`` in percent of the mean of per-question scores in [0, 1] (correct 0/1, F1, IoU);
    None for an empty set."""
    from scipy.stats import bootstrap

    values = np.asarray(per_question, dtype=float)
    if values.size == 0:
        return None
    if np.all(values == values[0]):  # no spread to resample
        return [round(100 * float(values[0]), 2)] * 2
    res = bootstrap((values,), np.mean, confidence_level=confidence, n_resamples=RESAMPLES, method="percentile",
                    random_state=np.random.default_rng(SEED))
    return [round(100 * float(res.confidence_interval.low), 2), round(100 * float(res.confidence_interval.high), 2)]
