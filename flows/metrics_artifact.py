"""The rebuild's per-track artifact in the Prefect UI: the headline figures after a run, each with its change
since the previous run. A track's systems and its paired differences (``A-B`` rows written by ``compare``: A
minus B, in points) are two tables, so an accuracy and a difference never share a column. Headings, units and
precision are ``make results``'s (``pipeline.experiments.metrics_table``): percentages to one decimal, a
correlation and its p to three, so the UI and the terminal show one figure the same way."""

from __future__ import annotations

from typing import Any

from pipeline.common.headline import KEYS
from pipeline.common.safe_text import markdown_cell
from pipeline.experiments.metrics_table import FORMATS, cell, heading

DIFFERENCE = "-"  # compare names a difference row "<system>-<baseline>"; no system's own name holds a hyphen


def is_difference(system: str) -> bool:
    return DIFFERENCE in system


def _change(key: str, delta: float) -> str:
    if key in FORMATS:
        return FORMATS[key].format(delta) if abs(delta) >= 0.0005 else ("+<0.001" if delta > 0 else "-<0.001")
    return f"{delta:+.1f}" if abs(delta) >= 0.05 else ("+<0.1" if delta > 0 else "-<0.1")


def _cell(key: str, value: Any, before: Any, difference: bool) -> str:
    if value is None:
        return "-"
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return markdown_cell(value)
    shown = cell(key, value, difference)
    if isinstance(before, (int, float)) and value != before:
        return f"{shown} ({_change(key, value - before)})"
    return shown


def _table(title: str, names: list[str], after: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]],
           gone: list[str]) -> list[str]:
    keys = [k for k in KEYS if any(k in after[name] for name in names)]
    lines = [title, "", "| system | " + " | ".join(heading(k) for k in keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for system in names:
        old = before.get(system)
        label = markdown_cell(system) if old is not None or not before else f"{markdown_cell(system)} (new)"
        lines.append(f"| {label} | " + " | ".join(_cell(k, after[system].get(k), (old or {}).get(k),
                                                         is_difference(system)) for k in keys) + " |")
    lines += [f"| {markdown_cell(system)} (gone) | " + " | ".join("-" for _ in keys) + " |" for system in gone]
    return lines + [""]


def markdown_table(track: str, after: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]]) -> str:
    """One track's systems by figures, then its paired differences; each cell ``value (change)`` against
    ``before`` (the previous run); systems that are new or gone since then are marked."""
    lines = [f"### {markdown_cell(track)}", ""]
    gone = sorted(set(before) - set(after))
    for differences, title in ((False, "Systems"), (True, "Paired differences (A-B: A minus B, points)")):
        names = sorted(s for s in after if is_difference(s) == differences)
        left = [s for s in gone if is_difference(s) == differences]
        if names or left:
            lines += _table(f"#### {title}", names, after, before, left)
    changed = sum(1 for s in after for k in KEYS if s in before and after[s].get(k) != before[s].get(k))
    lines.append(f"{changed} figure(s) changed since the previous run." if before else "First run: nothing to compare.")
    return "\n".join(lines) + "\n"
