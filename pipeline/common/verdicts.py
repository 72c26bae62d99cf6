"""What a comparison may claim once many are read together: Holm's correction over a family, a t-interval over
the training runs beside the two-level bootstrap, and the verdict both agree on.

``compare`` reads some ninety system-baseline pairs at 95%. Read one by one, about one in twenty true ties comes
out "above" or "below" by chance, so a family of pairs (one system on one eval set and figure) is corrected as a
whole: each pair's bootstrap p-value is Holm-adjusted within its family (Holm 1979: step-down, no independence
assumed, as the pairs share a system's answers). With three seeds the two-level bootstrap draws seeds from
three values and can be narrower than the spread of those values allows, so the verdict also needs the
t-interval over the per-seed differences (Student's, ``n - 1`` degrees of freedom; Welch's where the baseline is
trained under seeds too). A verdict holds when both say it: "above" / "below" when the Holm-adjusted bootstrap
p is under 0.05 and the t-interval excludes zero on the same side, "level" when neither excludes it, and
"fragile" when one does and the other does not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

ALPHA = 0.05
VERDICTS = ("above", "level", "below", "fragile", "one run")


def _finite(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 6)


def holm(pvalues: Mapping[str, float | None]) -> dict[str, float | None]:
    """Holm's step-down adjustment (Holm 1979) of a family of p-values, by name: the i-th smallest of m is
    multiplied by m - i + 1, then made monotone, capped at 1. Controls the family-wise error without assuming
    the tests independent. A ``None`` (not computed) stays ``None`` and does not count in m. A few lines, not a
    dependency: scipy has only the false-discovery-rate adjustments."""
    known = sorted((p, name) for name, p in pvalues.items() if p is not None)
    adjusted: dict[str, float | None] = {name: None for name in pvalues}
    running = 0.0
    for i, (p, name) in enumerate(known):
        running = max(running, min(1.0, (len(known) - i) * p))
        adjusted[name] = _finite(running)
    return adjusted


def seed_t_interval(system: Sequence[float], baseline: Sequence[float],
                    confidence: float = 1 - ALPHA) -> dict | None:
    """The t-interval of the difference between a system's per-seed figures and a baseline's (points): one
    sample's (Student) against a baseline that trains nothing (one value), two samples' (Welch) against a
    baseline trained under seeds. None with fewer than two runs of the system, or where the spread is 0 on
    every side (no interval to draw: the difference is the same in every run)."""
    from scipy import stats

    a, b = [float(x) for x in system], [float(x) for x in baseline]
    if len(a) < 2 or not b:
        return None
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    var_a = sum((x - mean_a) ** 2 for x in a) / (len(a) - 1)
    var_b = sum((x - mean_b) ** 2 for x in b) / (len(b) - 1) if len(b) > 1 else 0.0
    point = mean_a - mean_b
    se2_a, se2_b = var_a / len(a), (var_b / len(b) if len(b) > 1 else 0.0)
    se = math.sqrt(se2_a + se2_b)
    if se == 0:
        return {"difference": round(point, 2), "t_ci95": [round(point, 2)] * 2, "df": len(a) - 1,
                "p_value": 1.0 if point == 0 else 0.0, "test": "no spread over seeds"}
    if len(b) > 1:  # Welch-Satterthwaite degrees of freedom
        df = (se2_a + se2_b) ** 2 / (se2_a ** 2 / (len(a) - 1) + se2_b ** 2 / (len(b) - 1))
        test = "Welch's t over both sides' seeds"
    else:
        df = len(a) - 1
        test = "Student's t over the system's seeds"
    half = float(stats.t.ppf(1 - (1 - confidence) / 2, df)) * se
    p = float(2 * stats.t.sf(abs(point) / se, df))
    return {"difference": round(point, 2), "t_ci95": [round(point - half, 2), round(point + half, 2)],
            "df": round(df, 2), "p_value": _finite(p), "test": test}


def side(low: float, high: float) -> str:
    return "above" if low > 0 else "below" if high < 0 else "level"


def combined(bootstrap_side: str, t_side: str | None) -> str:
    """The verdict when the Holm-corrected bootstrap says ``bootstrap_side`` and the seed t-interval ``t_side``
    (None: no t-interval, as for a run without spread over seeds; the bootstrap's word stands)."""
    if t_side is None or bootstrap_side == t_side:
        return bootstrap_side
    return "fragile"


def holm_side(difference: float, p_holm: float | None) -> str:
    """"above" / "below" when the Holm-adjusted p is under ``ALPHA`` on that side of zero, else "level"."""
    if p_holm is None or p_holm >= ALPHA or difference == 0:
        return "level"
    return "above" if difference > 0 else "below"
