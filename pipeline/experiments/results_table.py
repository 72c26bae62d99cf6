"""The README's results table, generated from ``reports/compare.json``: figures are read, never typed.

Each row is a trained system beside one baseline on the same questions: both figures, the paired difference
with its 95% interval, and the verdict it supports (``above`` only when the whole interval is above zero). The
README holds the table between two markers; ``--write`` replaces it there, ``--check`` fails when it differs
from what the reports say (``tests/test_paired.py``).

    python -m pipeline.experiments.results_table [--write | --check] [README.md]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pipeline.common.layout import PATHS

START, END = "<!-- results:start (python -m pipeline.experiments.results_table --write) -->", "<!-- results:end -->"
ROOT = Path(__file__).resolve().parents[2]
EVAL_NAMES = {"test": "NLQuAD sample test", "dev": "NLQuAD sample dev", "dev_heldout": "QuAIL held-out dev",
              "challenge": "QuAIL challenge", "eval": "StrategyQA dev"}
# (track, eval, system, baseline, figures): the rows shown; reports/compare.md has every pair
ROWS = (
    ("nlquad", None, "span_window", "random_window", ("F1", "IoU", "EM")),
    ("nlquad", None, "span_window", "bm25l", ("F1", "IoU", "EM")),
    ("nlquad", None, "longformer", "random_window", ("F1", "IoU")),
    ("nlquad", None, "longformer", "bm25l", ("F1", "IoU")),
    ("quail", "dev_heldout", "mc_full", "longchoice", ("acc",)),
    ("quail", "dev_heldout", "mc_full", "mc_options", ("acc",)),
    ("quail", "dev_heldout", "mc_full", "pmi", ("acc",)),
    ("quail", "dev_heldout", "mc_full", "ir", ("acc",)),
    ("quail", "dev_heldout", "mc_options", "random", ("acc",)),
    ("quail", "challenge", "mc_full", "longchoice", ("acc_challenge",)),
    ("quail", "challenge", "mc_full", "pmi", ("acc_challenge",)),
    ("strategyqa", "eval", "qa_ora_p", "majority", ("acc",)),
    ("strategyqa", "eval", "qa_ir_d", "majority", ("acc",)),
    ("strategyqa", "eval", "qa_ir_q", "majority", ("acc",)),
    ("strategyqa", "eval", "qa_question_only", "majority", ("acc",)),
)


def _verdict(pair: dict) -> str:
    low, high = pair["ci95"]
    if low > 0:
        return "**above**"
    if high < 0:
        return "below"
    return "level (interval spans 0)"


def table(report: dict) -> str:
    pairs = report["pairs"]
    lines = ["| eval set (questions) | system | baseline | figure | system | baseline | difference [95% CI] | "
             "system vs baseline |", "|---|---|---|---|---|---|---|---|"]
    for track, eval_set, system, baseline, figures in ROWS:
        for figure in figures:
            match = [p for p in pairs if p["track"] == track and p["system"] == system and p["baseline"] == baseline
                     and p["figure"] == figure and (eval_set is None or p["eval"] == eval_set)]
            if len(match) != 1:
                raise KeyError(f"{PATHS.compare.report} has {len(match)} rows for {track} {eval_set} {system} "
                               f"vs {baseline} {figure}")
            p = match[0]
            low, high = p["ci95"]
            lines.append(f"| {EVAL_NAMES[p['eval']]} ({p['questions']}) | {system} | {baseline} | {figure} | "
                         f"{p['system_mean']:.1f} | {p['baseline_mean']:.1f} | {p['difference']:+.1f} "
                         f"[{low:+.1f}, {high:+.1f}] | {_verdict(p)} |")
    return "\n".join(lines) + "\n"


def replace_block(text: str, block: str) -> str:
    if START not in text or END not in text:
        raise ValueError(f"the README has no {START} ... {END} block")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{block}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="replace the table in the README")
    mode.add_argument("--check", action="store_true", help="fail when the README's table differs from the reports")
    ap.add_argument("readme", nargs="?", default=str(ROOT / "README.md"))
    args = ap.parse_args(argv)
    block = table(json.loads((ROOT / PATHS.compare.report).read_text(encoding="utf-8")))
    if not (args.write or args.check):
        print(block, end="")
        return 0
    path = Path(args.readme)
    text = path.read_text(encoding="utf-8")
    new = replace_block(text, block)
    if args.check:
        if new != text:
            print(f"{path}: the results table differs from {PATHS.compare.report}; run "
                  "python -m pipeline.experiments.results_table --write", file=sys.stderr)
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
