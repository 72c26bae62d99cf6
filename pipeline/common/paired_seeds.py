"""A system trained under several seeds against its baseline: the paired bootstrap over seeds and units.

One training run is one draw of the training's randomness (initialisation of the head, batch order, the share
held out for checkpoint selection); a verdict read off one run can move on a rebuild. StrategyQA's paper reports
every accuracy as a mean over runs; this gives such a mean an interval that covers both what the data set sampled
(questions, texts, articles: :mod:`pipeline.common.paired`) and how training fell.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pipeline.common.paired import RESAMPLES, SEED, bootstrap_p, cluster_sums


def paired_difference_over_seeds(system: Sequence[Sequence[float]], baseline: Sequence[Sequence[float]],
                                 confidence: float = 0.95, clusters: Sequence[str] | None = None,
                                 unit: str = "question", with_p: bool = False) -> dict:
    """Per-question scores of a system trained under several seeds (one row per seed) against a baseline's (one
    row per seed, or one row for a baseline that trains nothing), on the same questions in the same order -> the
    mean over seeds of each, their difference, its interval and the per-seed differences, in points.

    Two sources of variation, both resampled (a two-level bootstrap): the training run (seeds drawn with
    replacement, the system's and the baseline's each from its own; a seed of one system is not a matching
    draw of another) and the sampled units (questions, or whole ``clusters`` as :func:`paired_difference`
    does; both systems' units together, since they answered the same questions). The statistic is the mean over
    the drawn seeds of the per-question mean difference over the drawn units. ``above`` says the interval lies
    above zero: a verdict about the system as trained, not about one lucky run; ``every_seed_above`` says
    whether each seed on its own is above (its point difference), for a reader who asks. With one seed on each
    side this is :func:`paired_difference`'s interval (up to the bootstrap's draws). ``with_p``: also the
    two-sided bootstrap p-value of no difference from the same resamples (``p_value``)."""
    a, b = np.atleast_2d(np.asarray(system, dtype=float)), np.atleast_2d(np.asarray(baseline, dtype=float))
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1] or a.shape[1] == 0:
        raise ValueError(f"paired scores over seeds need seeds x questions from each system on the same questions: "
                         f"{a.shape} vs {b.shape}")
    labels: Sequence[str] = [str(i) for i in range(a.shape[1])] if clusters is None else clusters
    if clusters is None:
        unit = "question"
    a_sums, counts, order = cluster_sums(a, labels)
    b_sums, _, _ = cluster_sums(b, labels)
    per_seed = [round(100 * float(row.mean() - b.mean()), 2) for row in a]
    point = float(a.mean() - b.mean())
    k = len(order)
    rng = np.random.default_rng(SEED)
    stats = np.empty(RESAMPLES)
    chunk = max(1, 2_000_000 // max(1, k * (a.shape[0] + b.shape[0])))
    for start in range(0, RESAMPLES, chunk):
        n = min(chunk, RESAMPLES - start)
        units = rng.integers(0, k, size=(n, k))
        seeds_a = rng.integers(0, a.shape[0], size=(n, a.shape[0]))
        seeds_b = rng.integers(0, b.shape[0], size=(n, b.shape[0]))
        drawn_counts = counts[units].sum(axis=1)
        # per resample: the drawn seeds' per-cluster sums over the drawn clusters, averaged over the drawn seeds
        sum_a = np.take_along_axis(a_sums[seeds_a], units[:, None, :], axis=2).sum(axis=2).mean(axis=1)
        sum_b = np.take_along_axis(b_sums[seeds_b], units[:, None, :], axis=2).sum(axis=2).mean(axis=1)
        stats[start:start + n] = (sum_a - sum_b) / drawn_counts
    alpha = (1 - confidence) / 2
    low, high = (float(x) for x in np.quantile(stats, [alpha, 1 - alpha]))
    spread = True
    if np.all(a == a[0]) and np.all(b == b[0]) and np.all(a[0] - b[0] == a[0, 0] - b[0, 0]):
        low = high = point  # no spread anywhere to resample
        spread = False
    out = {"system_mean": round(100 * float(a.mean()), 2), "baseline_mean": round(100 * float(b.mean()), 2),
           "difference": round(100 * point, 2), "ci95": [round(100 * low, 2), round(100 * high, 2)],
           "above": bool(low > 0), "seeds": int(a.shape[0]), "baseline_seeds": int(b.shape[0]),
           "per_seed_difference": per_seed, "every_seed_above": all(d > 0 for d in per_seed),
           "questions": int(a.shape[1]), "unit": unit, "units": k, "interval": "two-level bootstrap: seeds and units"}
    if with_p:
        out["p_value"] = round(bootstrap_p(stats if spread else None, point), 6)
    return out
