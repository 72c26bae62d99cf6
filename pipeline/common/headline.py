"""Headline figures: the few numbers per system that a paper reports, kept as the project's DVC metrics.

Every stage writes its full results (breakdowns by question type, domain and length, counts, settings) to
``reports/<stage>.json``; the figures a reader compares across runs go to ``metrics/<track>/<system>.json``,
one small file per system with keys shared by every system of a track. ``dvc metrics show`` then prints one
row per system and one column per figure (about a dozen), instead of one column per breakdown cell, and
``dvc metrics diff`` lists exactly the numbers a results table would change. All figures are percentages
(0-100), correlations excepted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.common.layout import PATHS
from pipeline.common.files import write_json

TRACKS = ("nlquad", "strategyqa", "quail", "difficulty")
# the only column names: a new one widens every table, so it has to be added here on purpose
KEYS = {
    "IoU": "token-span IoU (%), NLQuAD's primary measure", "F1": "token F1 (%)", "EM": "exact match (%)",
    "ROUGE-L": "ROUGE-L F (%)",
    "R@10": "recall of gold paragraphs in the top 10 (%)", "acc": "accuracy (%), held-out/eval set",
    "acc_challenge": "accuracy (%), QuAIL challenge set", "majority": "majority-answer accuracy (%)",
    "r": "correlation with model accuracy (or the human-model gap)",
    "p": "its p-value, Holm-adjusted over the measures tested (the unadjusted one is in reports/difficulty.json)",
    "dev": "trained models: dev figure (select_metric) of the checkpoint kept",
    "dev_last": "trained models: dev figure at the last evaluation",
}
ROOT = PATHS.metrics


def spread_name(system: str) -> str:
    """The row holding a seeded system's SDs over its training runs, in the columns of its own row (a seeded
    system's figures are the mean of its runs)."""
    return f"{system}.sd"


def headline_path(track: str, system: str) -> Path:
    if track not in TRACKS:
        raise ValueError(f"unknown track {track!r}; one of {TRACKS}")
    return ROOT / track / f"{system}.json"


def write_headline(track: str, system: str, figures: dict[str, float | int | None]) -> Path:
    """``figures`` with keys from ``KEYS``; ``None`` values (not measured) are left out, not written as 0."""
    unknown = sorted(set(figures) - set(KEYS))
    if unknown:
        raise ValueError(f"headline keys {unknown} are not among {sorted(KEYS)}")
    path, row = headline_row(track, system, figures)
    write_json(path, row)
    return path


def headline_row(track: str, system: str, figures: dict[str, float | int | None]) -> tuple[Path, dict]:
    """Where the headline file goes and what it holds, for a writer that writes it with other files at once."""
    unknown = sorted(set(figures) - set(KEYS))
    if unknown:
        raise ValueError(f"headline keys {unknown} are not among {sorted(KEYS)}")
    return headline_path(track, system), {k: round(float(v), 4) if isinstance(v, float) else v
                                          for k, v in figures.items() if v is not None}


def span_figures(summary: dict[str, Any]) -> dict[str, float]:
    """NLQuAD's columns from a span-QA summary (``pipeline.nlquad.metrics``)."""
    return {"EM": summary["em"], "F1": summary["f1"], "IoU": summary["iou"], "ROUGE-L": summary["rougeL"]}


def dev_figures(stats: dict[str, Any]) -> dict[str, float | None]:
    """A trained model's dev columns from its training stats: the kept checkpoint's and the last one's."""
    if "dev_best" not in stats:
        return {}
    metric = stats["select_metric"]
    return {"dev": stats["dev_best"][metric], "dev_last": stats["dev_last"][metric]}


def percent(fraction: float | None) -> float | None:
    return None if fraction is None else round(100 * fraction, 2)


def read_headlines(root: Path | str = ROOT) -> dict[str, dict[str, dict[str, Any]]]:
    """``{track: {system: figures}}`` of the files under ``root`` (missing tracks are empty)."""
    root = Path(root)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for track in TRACKS:
        files = sorted((root / track).glob("*.json")) if (root / track).is_dir() else []
        out[track] = {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in files}
    return out
