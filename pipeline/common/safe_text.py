"""Values from input data on their way into HTML: ``dvc plots show`` pages and Prefect's markdown artifacts.

Why here and not left to the viewers: DVC embeds a plot's rows as JSON inside a ``<script>`` element without
escaping ``</script>``, so a QuAIL question id or type reading ``</script><img onerror=...>`` ran in the
browser of whoever opened the plots page; Prefect renders artifact markdown, raw HTML included. Every string
a plot file or an artifact carries goes through these functions: ``<`` and ``&`` (in artifacts every
HTML-significant character) become entities, and a Markdown cell cannot end its column."""

from __future__ import annotations

import csv
import html
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pipeline.common.files import atomic_output


def plot_value(value: Any) -> Any:
    """Strings with ``&`` and ``<`` as entities: without ``<`` no tag and no ``</script>`` can be written
    (``>=2000``, a bucket label, stays as it is); numbers, booleans and None as they are. Anything else (a
    list of question types, a mapping) is written as its text, escaped the same way: the CSV writer would
    write its ``str()`` as it is."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        value = "; ".join("" if v is None else str(v) for v in value)
    return str(value).replace("&", "&amp;").replace("<", "&lt;")


def markdown_cell(value: Any) -> str:
    """Text for a Markdown table cell or inline code: escaped HTML, no column break, no line break."""
    text = html.escape(str(value), quote=True).replace("|", "\\|").replace("`", "'")
    return " ".join(text.split())


def write_plot_csv(path: str | Path, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """A plot's data file, whole or not at all, every string cell escaped and CSV-quoted (a value holding
    a comma stays in its column)."""
    with atomic_output(path) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(columns)
        for row in rows:
            writer.writerow(["" if v is None else plot_value(v) for v in row])
