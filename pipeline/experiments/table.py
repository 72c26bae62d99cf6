"""``make exps``: experiments side by side, one column per experiment, one row per param or headline figure
that differs between them, so a one-parameter sweep reads in 100 columns where ``dvc exp show`` needs ~330
(every column is named by its full file path, and params by their full dotted path, side by side).

Reads ``dvc exp show --json`` (the workspace, the baseline commit(s) and every experiment on them): params
from params.yaml by dotted key, figures from the metrics files as ``<track>/<system>:<figure>``. Values that are
the same in every column are left out, as ``--only-changed`` does; ``--all`` keeps them.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.common.layout import LAYOUT_FILE, PATHS

NAME_WIDTH = 44
MIN_COLUMN = 9


def _flatten(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flatten(f"{prefix}.{key}" if prefix else str(key), inner)
    else:
        yield prefix, value


def _short_metrics_name(path: str) -> str:
    name = path.removeprefix(f"{PATHS.metrics.as_posix()}/")
    return name.removesuffix(".json")


def columns(exp_show: list[dict]) -> list[tuple[str, dict[str, Any]]]:
    """``[(column name, {row: value})]`` for the workspace, each baseline and each experiment, in the order
    ``dvc exp show`` lists them."""
    out: list[tuple[str, dict[str, Any]]] = []

    def add(entry: dict) -> None:
        data = entry.get("data") or {}
        values: dict[str, Any] = {}
        for file, content in (data.get("params") or {}).items():
            if file == LAYOUT_FILE.name:  # DVC lists dvc.yaml's vars file as params: it is where outputs live
                continue
            for key, value in _flatten("", (content or {}).get("data") or {}):
                values[key if file == "params.yaml" else f"{file}:{key}"] = value
        for file, content in (data.get("metrics") or {}).items():
            for key, value in _flatten("", (content or {}).get("data") or {}):
                values[f"{_short_metrics_name(file)}:{key}"] = value
        name = entry.get("name") or (str(entry.get("rev", ""))[:7] if entry.get("rev") != "workspace" else "workspace")
        out.append((name, values))

    for baseline in exp_show:
        add(baseline)
        for exp in baseline.get("experiments") or []:
            for rev in exp.get("revs") or []:
                add(rev)
    return out


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ",".join(_fmt(v) for v in value)
    return str(value)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def render(cols: list[tuple[str, dict[str, Any]]], keep_all: bool = False, width: int = 160) -> str:
    """The table as text, at most ``width`` characters a line (experiments past it are left for a second
    call with fewer, and said so)."""
    rows = sorted({k for _, values in cols for k in values}, key=lambda k: (":" in k, k))
    if not keep_all:
        rows = [r for r in rows if len({_fmt(values.get(r)) for _, values in cols}) > 1]
    name_w = min(NAME_WIDTH, max([len("param / figure"), *map(len, rows)]))
    cells = {name: [_fmt(values.get(r)) for r in rows] for name, values in cols}
    col_w = {name: max(MIN_COLUMN, min(16, max([len(name), *map(len, cells[name])]))) for name, _ in cols}
    shown, used = [], name_w
    for name, _ in cols:
        if used + 2 + col_w[name] > width:
            break
        shown.append(name)
        used += 2 + col_w[name]
    lines = ["  ".join([f"{'param / figure':<{name_w}}", *(f"{_cut(n, col_w[n]):>{col_w[n]}}" for n in shown)])]
    lines.append("-" * used)
    for i, row in enumerate(rows):
        lines.append("  ".join([f"{_cut(row, name_w):<{name_w}}",
                                *(f"{_cut(cells[n][i], col_w[n]):>{col_w[n]}}" for n in shown)]))
    if not rows:
        lines.append("(no param or figure differs between these)")
    if len(shown) < len(cols):
        lines.append(f"... {len(cols) - len(shown)} more experiment(s) past {width} columns: "
                     f"`dvc exp show` lists them, or remove some with `dvc exp remove`")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.experiments.table", description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help="every param and figure, not only those that differ")
    ap.add_argument("--width", type=int, default=None, help="line width (default: the terminal's, at most 160)")
    args = ap.parse_args(argv)
    dvc = Path(sys.executable).with_name("dvc")
    res = subprocess.run([str(dvc) if dvc.exists() else "dvc", "exp", "show", "--json", "--no-fetch"],
                         capture_output=True, text=True)
    if res.returncode != 0:
        print(res.stderr.strip(), file=sys.stderr)
        return res.returncode
    width = args.width or min(160, shutil.get_terminal_size((160, 24)).columns)
    print(render(columns(json.loads(res.stdout)), keep_all=args.all, width=width))
    return 0


if __name__ == "__main__":
    sys.exit(main())
