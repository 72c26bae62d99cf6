"""Is a system better than its baseline on the same questions? The paired bootstrap, over the unit that was sampled.

Two systems scored on one eval set share its hard and easy questions, so their separate intervals overlap
even when one wins on almost every question. The question that matters is the interval of the *difference*,
resampling jointly (``scipy.stats.bootstrap(..., paired=True)``, percentile method, seeded): a system counts as
above its baseline when that interval lies above zero.

What is resampled is what the data set sampled. QuAIL drew texts and wrote about 18 questions on each; NLQuAD
drew articles and took every question sub-heading of each. Questions on one passage succeed and fail together,
so resampling questions treats 435 correlated answers as 435 independent draws and gives an interval too narrow
by the square root of the design effect. With ``clusters`` (one label per question: its text or article), whole
clusters are resampled, both systems' questions of a cluster together, and the statistic is the mean over the
questions of the resampled clusters (the ratio of per-cluster sums, as Field & Welsh 2007 and the cluster
bootstrap of Davison & Hinkley 1997, sec. 3.8, do). Without ``clusters`` each question is its own unit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RESAMPLES = 2000
SEED = 0
# the unit each track's eval set sampled, which its intervals resample
UNITS = {"nlquad": "article", "quail": "text", "strategyqa": "question"}


def _ratio_difference(a_sums: np.ndarray, b_sums: np.ndarray, counts: np.ndarray, axis: int = -1) -> np.ndarray:
    # the mean per-question difference of the resampled clusters: clusters of unequal size weigh by their questions
    return (np.sum(a_sums, axis=axis) - np.sum(b_sums, axis=axis)) / np.sum(counts, axis=axis)


def cluster_sums(values: np.ndarray, clusters: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per-cluster sums of ``values`` and question counts, clusters in order of first appearance."""
    labels = list(clusters)
    if len(labels) != values.shape[-1]:
        raise ValueError(f"one cluster label per question is needed: {len(labels)} labels, {values.shape[-1]} questions")
    order = list(dict.fromkeys(labels))
    index = {c: i for i, c in enumerate(order)}
    codes = np.fromiter((index[c] for c in labels), dtype=np.int64, count=len(labels))
    sums = np.zeros((*values.shape[:-1], len(order)))
    for row in np.ndindex(values.shape[:-1]):
        sums[row] = np.bincount(codes, weights=values[row], minlength=len(order))
    return sums, np.bincount(codes, minlength=len(order)).astype(float), order


def bootstrap_p(stats: np.ndarray | None, point: float) -> float:
    """The two-sided bootstrap p-value of "no difference" from the resampled statistics: twice the smaller share
    of resamples on either side of zero, each share counted as ``(k + 1) / (B + 1)`` so that no p is 0 (Davison &
    Hinkley 1997, sec. 4.4). ``stats`` None: no spread to resample, the difference is ``point`` in every
    resample."""
    if stats is None:
        return 1.0 if point == 0 else 2 / (RESAMPLES + 1)
    n = stats.size
    below, above = (int(np.sum(stats <= 0)) + 1) / (n + 1), (int(np.sum(stats >= 0)) + 1) / (n + 1)
    return min(1.0, 2 * min(below, above))


def paired_difference(system: Sequence[float], baseline: Sequence[float], confidence: float = 0.95,
                      clusters: Sequence[str] | None = None, unit: str = "question", with_p: bool = False) -> dict:
    """Per-question scores in [0, 1] of two systems on the same questions (same order) -> both means, their
    difference and its interval, in points (0-100), and whether the interval lies above zero.

    ``clusters``: the text or article each question belongs to, when texts or articles were what the data set
    sampled; the interval then resamples them (``unit`` names them in the result). ``with_p``: also the
    two-sided bootstrap p-value of no difference (``p_value``, :func:`bootstrap_p`), for a family of comparisons
    that a multiple-comparison correction reads."""
    from scipy.stats import bootstrap

    a, b = np.asarray(system, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired scores need one score per question from each system: {a.shape} vs {b.shape}")
    if a.size == 0:
        raise ValueError("paired scores: no questions")
    if clusters is None:
        labels: Sequence[str] = [str(i) for i in range(a.size)]
        unit = "question"
    else:
        labels = clusters
    sums, counts, order = cluster_sums(np.stack([a, b]), labels)
    diff = a - b
    distribution = None
    if np.all(diff == diff[0]):  # no spread to resample (identical predictions included)
        low = high = float(diff[0])
    elif len(order) < 2:
        raise ValueError(f"a paired interval over {unit}s needs at least two of them; all questions share one")
    else:
        res = bootstrap((sums[0], sums[1], counts), _ratio_difference, paired=True, vectorized=True,
                        confidence_level=confidence, n_resamples=RESAMPLES, method="percentile",
                        random_state=np.random.default_rng(SEED))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        distribution = np.asarray(res.bootstrap_distribution)
    out = {"system_mean": round(100 * float(a.mean()), 2), "baseline_mean": round(100 * float(b.mean()), 2),
           "difference": round(100 * float(diff.mean()), 2), "ci95": [round(100 * low, 2), round(100 * high, 2)],
           "above": bool(low > 0), "questions": int(a.size), "unit": unit, "units": len(order),
           "wins": int((diff > 0).sum()), "losses": int((diff < 0).sum())}
    if with_p:
        out["p_value"] = round(bootstrap_p(distribution, float(diff.mean())), 6)
    return out


def design_effect(values: Sequence[float], clusters: Sequence[str]) -> float:
    """Kish's design effect ``1 + (m - 1) * ICC`` of per-question ``values`` grouped by ``clusters`` (one-way
    ANOVA intraclass correlation, ``m`` the mean cluster size): how many times wider a variance the clustered
    sample has than as many independent questions. Reported beside the intervals so a reader sees why the
    cluster interval is wider."""
    y = np.asarray(values, dtype=float)
    sums, counts, _ = cluster_sums(y[None, :], clusters)
    k, n = counts.size, y.size
    if k < 2 or n <= k:
        return 1.0
    means = sums[0] / counts
    between = float(np.sum(counts * (means - y.mean()) ** 2)) / (k - 1)
    codes = {c: i for i, c in enumerate(dict.fromkeys(clusters))}
    within = float(np.sum((y - means[[codes[c] for c in clusters]]) ** 2)) / (n - k)
    m0 = (n - float(np.sum(counts ** 2)) / n) / (k - 1)
    denominator = between + (m0 - 1) * within
    icc = 0.0 if denominator <= 0 else max(0.0, (between - within) / denominator)
    return round(1 + (n / k - 1) * icc, 3)
