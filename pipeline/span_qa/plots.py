"""Plot data of the NLQuAD track, written so every chart has numeric axes, one colour per system and one scale.

Document-length buckets ("300-599") become their numeric lower bound (``document_words_from``), so the x
axis is quantitative and ordered; each row names its ``system``, which the charts colour by, so the baselines
and the models can share one chart; every score is a percentage (0-100), as in the metrics.
"""

from __future__ import annotations

from typing import Any

from pipeline.common.safe_text import write_plot_csv

LENGTH_COLUMNS = ("system", "document_words_from", "document_words", "questions", "em", "f1", "iou")


def bin_start(label: str) -> int:
    """``"300-599"`` -> 300, ``">=2000"`` -> 2000 (the labels of ``nlquad.metrics.length_bin``)."""
    return int(label.removeprefix(">=").split("-")[0])


def write_length_plot(path: str, summaries: dict[str, dict[str, Any]]) -> None:
    """One row per system and document-length bucket, buckets in length order."""
    write_plot_csv(path, LENGTH_COLUMNS, (
        [system, bin_start(label), label, s["n"], s["em"], s["f1"], s["iou"]]
        for system, summary in summaries.items()
        for label, s in sorted(summary["by_document_words"].items(), key=lambda kv: bin_start(kv[0]))))


def write_per_question_plot(path: str, system: str, rows: list[dict[str, Any]]) -> None:
    """F1 against IoU per question, in percent like everything else."""
    write_plot_csv(path, ("system", "id", "f1", "iou"),
                   ([system, r["id"], f"{100 * r['f1']:.2f}", f"{100 * r['iou']:.2f}"] for r in rows))
