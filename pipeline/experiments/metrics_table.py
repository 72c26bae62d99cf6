"""``make results``: the headline metrics as a person reads them, one table per track, at most 120 columns.

``dvc metrics show`` prints every headline file as one row of one table with the union of every track's
columns (about 160 wide, wrapped at 120), each figure at the precision it was written with, and difference rows
(``A-B``) among the absolute figures. This reads the same files (``metrics/<track>/<system>.json``, see
``pipeline.common.headline``) and prints, per track: the systems' figures, then the differences apart; every
percentage to one decimal, differences signed, correlations and p-values to three decimals; every column
headed with its unit. What it prints is what ``dvc metrics show`` holds, rounded for reading: compare runs with
``dvc metrics diff`` (exact) or ``make exps``.

    python -m pipeline.experiments.metrics_table [--width N]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pipeline.common.headline import KEYS, ROOT, TRACKS

WIDTH = 120
TITLES = {"nlquad": "NLQuAD (span_window.eval_split; dev columns: the trained models' dev IoU)",
          "strategyqa": "StrategyQA (eval questions; retrieve_* rows: retrieve.questions)",
          "quail": "QuAIL (acc: held-out dev texts; acc_challenge: the challenge set)",
          "difficulty": "Difficulty (Pearson r of each passage measure against model accuracy over passages)"}
# column headings: the key and its unit; figures not in percent say what they are
HEADINGS = {"r": "Pearson r", "p": "p (Holm)"}
FORMATS = {"r": "{:+.3f}", "p": "{:.3f}"}
NAME_WIDTH = 26
PAPER_PREFIX = "paper_"  # a paper's published figure set beside ours (strategyqa_contexts writes them), not run here
PAPER_MARK = " [paper]"


def heading(key: str) -> str:
    return HEADINGS.get(key, f"{key} %")


def cell(key: str, value: object, difference: bool) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "-"
    if key in FORMATS:
        return FORMATS[key].format(value)
    return f"{value:+.1f}" if difference else f"{value:.1f}"


def read_track(track: str, root: Path = ROOT) -> dict[str, dict]:
    """Every headline row of a track, by system, in name order; a file that does not parse is skipped (a stage
    writes whole files, so that is one a user is editing)."""
    rows = {}
    for path in sorted((root / track).glob("*.json")):
        try:
            row = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(row, dict):
            rows[path.stem] = row
    return rows


def _table(title: str, rows: dict[str, dict], difference: bool) -> list[str]:
    keys = [k for k in KEYS if any(k in row for row in rows.values())]
    widths = [max(len(heading(k)), 7) for k in keys]
    name_width = max([NAME_WIDTH, *(len(n.replace("-", " - ")) + 1 for n in rows)])
    lines = [title, f"{'':<{name_width}}" + "".join(f"{heading(k):>{w + 2}}" for k, w in zip(keys, widths))]
    for name, row in rows.items():
        shown = name.replace("-", " - ") if difference else name + (PAPER_MARK if name.startswith(PAPER_PREFIX) else "")
        lines.append(f"{shown:<{name_width}}" + "".join(f"{cell(k, row.get(k), difference):>{w + 2}}"
                                                          for k, w in zip(keys, widths)))
    return lines


def notes(rows: dict[str, dict], width: int = WIDTH) -> list[str]:
    """What each column and each kind of row means, under the table: every column by its ``KEYS`` meaning, the
    ``.sd`` rows, the paper's rows."""
    keys = [k for k in KEYS if any(k in row for row in rows.values())]
    said = [f"{heading(k)}: {KEYS[k]}" for k in keys]
    if any(n.endswith(".sd") for n in rows):
        said.append("<system>.sd: the standard deviation over the system's training seeds (its row is their mean)")
    if any(n.startswith(PAPER_PREFIX) for n in rows):
        said.append(f"{PAPER_MARK.strip()}: the paper's published figure, set beside this pipeline's; not run here")
    out, line = [], "  "
    for item in said:
        piece = item + "; "
        if len(line) + len(piece) > width and line.strip():
            out.append(line.rstrip("; ").rstrip())
            line = "  "
        line += piece
    if line.strip():
        out.append(line.rstrip().rstrip(";"))
    return out


def render(root: Path = ROOT, width: int = WIDTH) -> str:
    """Per track, the absolute rows and then the difference rows (``A-B`` files, written by ``compare``: A minus B
    on the same questions, in points; their paired intervals are in ``reports/compare.md``)."""
    out: list[str] = []
    for track in TRACKS:
        # a row with no figure (the SDs of a system trained once) says nothing a reader needs
        rows = {n: r for n, r in read_track(track, root).items() if any(v is not None for v in r.values())}
        if not rows:
            continue
        absolute = {n: r for n, r in rows.items() if "-" not in n}
        differences = {n: r for n, r in rows.items() if "-" in n}
        if absolute:
            out += _table(TITLES[track], absolute, False) + notes(absolute, width) + [""]
        if differences:
            out += _table(f"{TITLES[track].split(' (')[0]}: differences, A - B in points on the same questions "
                          "(intervals: reports/compare.md)", differences, True) + [""]
    too_wide = [line for line in out if len(line) > width]
    if too_wide:
        raise ValueError(f"a table is {max(map(len, too_wide))} columns wide, over {width}: {too_wide[0][:60]}...")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=WIDTH, help="fail when a table is wider (default %(default)s)")
    args = ap.parse_args(argv)
    text = render(width=args.width)
    print(text if text else f"no headline metrics under {ROOT} yet: run make repro (or dvc pull)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
