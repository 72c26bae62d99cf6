"""``python -m pipeline.experiments.question QID``: one eval question as every system saw it: the question, its
gold answer, and each system's prediction (its first run's) and score (the mean over its runs).

``compare`` writes ``data/predictions/per_question.json`` (``paths.compare.per_question``) from the same
predictions and scores its paired intervals are drawn from, keyed by eval set (``nlquad/test``,
``quail/dev_heldout``, ``quail/challenge``, ``strategyqa/eval``) and question id. ``--eval SET`` lists the ids of
one eval set.

    python -m pipeline.experiments.question business-42875154_0
    python -m pipeline.experiments.question --eval quail/challenge
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

SHOWN_CHARS = 100  # a span prediction or gold in the table; the file holds it whole


def _short(text: Any, width: int = SHOWN_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _answer(record: dict, value: Any) -> str:
    """An option index as ``2) its text``; a span or yes/no as it is."""
    if value is None:
        return "-"
    options = record.get("options")
    if options and isinstance(value, int) and 0 <= value < len(options):
        return f"{value}) {options[value]}"
    return str(value)


def render(eval_set: str, qid: str, record: dict) -> list[str]:
    about = ", ".join(f"{k.replace('_', ' ')} {record[k]}" for k in ("unit", "domain", "question_type") if record.get(k))
    lines = [f"{eval_set}  {qid}  ({about})", f"question: {record['question']}"]
    for n, option in enumerate(record.get("options") or []):
        lines.append(f"  {n}) {option}")
    lines.append(f"gold: {_short(_answer(record, record['gold']), 300)}")
    systems = record["systems"]
    figures = [k for k in next(iter(systems.values()), {}) if k not in ("prediction", "runs")]
    width = max([6, *(len(s) for s in systems)])
    cols = {f: max(8, len(f) + 4) for f in figures}
    lines.append(f"{'system':<{width}}  " + "".join(f"{f + ' %':>{cols[f]}}" for f in figures) + "  runs  prediction")
    for name, row in systems.items():
        lines.append(f"{name:<{width}}  " + "".join(f"{row.get(f, float('nan')):>{cols[f]}.1f}" for f in figures)
                     + f"  {row.get('runs', 1):>4}  {_short(_answer(record, row.get('prediction')))}")
    return lines


def main(argv: list[str] | None = None) -> int:
    from pipeline.common.layout import PATHS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("qid", nargs="?", help="a question id (as in the eval set's file)")
    ap.add_argument("--eval", dest="eval_set", help="list the question ids of this eval set (e.g. quail/challenge)")
    ap.add_argument("--file", type=Path, default=PATHS.compare.per_question)
    args = ap.parse_args(argv)
    try:
        data = json.loads(args.file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print(f"{args.file} is missing: `dvc repro compare` writes it (or `dvc pull` it)", file=sys.stderr)
        return 2
    if args.eval_set:
        if args.eval_set not in data:
            print(f"no eval set {args.eval_set!r}; there are: {', '.join(data)}", file=sys.stderr)
            return 2
        print("\n".join(data[args.eval_set]))
        return 0
    if not args.qid:
        ap.error("give a question id, or --eval SET to list them")
    found = [(name, questions[args.qid]) for name, questions in data.items() if args.qid in questions]
    if not found:
        print(f"no question {args.qid!r} in {', '.join(data)} (`--eval SET` lists the ids)", file=sys.stderr)
        return 2
    print("\n\n".join("\n".join(render(name, args.qid, record)) for name, record in found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
