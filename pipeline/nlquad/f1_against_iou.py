"""NLQuAD's metric finding, measured on every system: F1 overstates a long answer that IoU does not.

Soleimani et al. (2021, sec. 4 and Fig. 4) make IoU their primary measure because token-bag F1 credits a
predicted window for words that also occur in its gold answer anywhere, so a long window placed on the wrong
section still earns F1. Per question this shows as F1 >= IoU almost always, a mass of predictions at IoU 0 with
F1 well above 0, and an F1-IoU gap that grows with the answer's length. This module computes those three
figures from a system's per-question rows (``pipeline.nlquad.metrics.evaluate``).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any


def finding(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Share with F1 >= IoU, the IoU-0 predictions and their F1 range, the mean F1-IoU gap (points) overall and
    by answer length (the rows' ``answer_bin``, shortest first), for one system's per-question rows."""
    if not rows:
        raise ValueError("no per-question rows to read the F1-IoU finding from")
    zero = [r["f1"] for r in rows if r["iou"] == 0]
    bins: dict[str, list[dict]] = {}
    for r in rows:
        bins.setdefault(r["answer_bin"], []).append(r)
    return {
        "questions": len(rows),
        "f1_at_least_iou_percent": round(100 * sum(r["f1"] >= r["iou"] for r in rows) / len(rows), 2),
        "iou_zero_percent": round(100 * len(zero) / len(rows), 2),
        "iou_zero_f1": ({"min": round(100 * min(zero), 2), "median": round(100 * statistics.median(zero), 2),
                         "max": round(100 * max(zero), 2)} if zero else None),
        "f1_minus_iou": round(100 * statistics.fmean(r["f1"] - r["iou"] for r in rows), 2),
        # a list, shortest answers first: a JSON object's keys are sorted as text when written ("100-199" first)
        "f1_minus_iou_by_answer_words": [
            {"answer_words": label, "questions": len(group),
             "f1": round(100 * statistics.fmean(r["f1"] for r in group), 2),
             "iou": round(100 * statistics.fmean(r["iou"] for r in group), 2),
             "gap": round(100 * statistics.fmean(r["f1"] - r["iou"] for r in group), 2)}
            for label, group in sorted(bins.items(), key=lambda kv: min(r.get("answer_words", 0) for r in kv[1]))],
    }
