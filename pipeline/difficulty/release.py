"""Sugawara et al. (2022)'s own analysis on their released data, where the human side exists.

QuAIL has no per-question human accuracies, so the ``difficulty`` stage measures passage and question
properties against model accuracy only. The paper's data (github.com/nii-cl/qa-text-source-comparison,
``data/complete_data.json`` once its ``collect_missing_passages.py`` has restored the MCTest, RACE and ReClor
passages) has, per question, ``human_accuracy``, ``model_accuracy`` (the mean of eight models) and
``human_model_gap``. This module reads records of that shape and runs the same analysis as the stage
(``pipeline.difficulty.analysis.analyse``: passage measures over passages, the gap, easy and hard subsets,
Welch's t), on the validated questions only, as the paper does.

    python -m pipeline.difficulty.release complete_data.json [--out reports/difficulty_release.json]

A record is a JSON object with ``passage_id``, ``passage``, ``question``, ``options`` (four strings),
``human_accuracy`` and ``model_accuracy`` (shares in [0, 1] or percent), and optionally ``valid`` (questions
with ``valid: false`` are left out) and ``question_type``; the file is a list of records or an object of them
keyed by question id. A record without its passage (the unrestored sources) is counted and left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.difficulty.analysis import analyse, passage_measures, wh_word
from pipeline.difficulty.study import question_measures


@dataclass(frozen=True)
class ReleaseQuestion:
    qid: str
    passage_id: str
    passage: str
    question: str
    options: tuple[str, ...]
    human_accuracy: float  # percent
    model_accuracy: float  # percent
    question_type: str


def _percent(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number, not {value!r}")
    value = float(value)
    if not 0 <= value <= 100:
        raise ValueError(f"{what} {value} is outside 0..100")
    return value


def load_release(path: str | Path) -> tuple[list[ReleaseQuestion], dict[str, int]]:
    """(validated questions with their passage, counts of what was left out and why)."""
    path = Path(path)
    raw = json.loads(path.read_text(encoding="utf-8"))
    items = list(raw.items()) if isinstance(raw, dict) else [(None, r) for r in raw] if isinstance(raw, list) else None
    if items is None:
        raise ValueError(f"{path}: a list of question records or an object of them keyed by id")
    rows: list[tuple[str, dict]] = []
    left = {"not_valid": 0, "no_passage": 0}
    for n, (key, rec) in enumerate(items):
        if not isinstance(rec, dict):
            raise ValueError(f"{path}: record {key or n} is not an object")
        if rec.get("valid") is False:
            left["not_valid"] += 1
            continue
        if not str(rec.get("passage") or "").strip():
            left["no_passage"] += 1
            continue
        rows.append((str(key if key is not None else rec.get("id", n)), rec))
    def share(value: Any) -> bool:  # a share in [0, 1] (the release's own form) rather than percent
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value <= 1

    scale = 100.0 if rows and all(share(r.get("human_accuracy")) and share(r.get("model_accuracy"))
                                  for _, r in rows) else 1.0
    out = []
    for qid, rec in rows:
        try:
            options = rec["options"]
            if not (isinstance(options, list) and all(isinstance(o, str) for o in options)):
                raise ValueError("options must be a list of strings")
            out.append(ReleaseQuestion(qid, str(rec["passage_id"]), rec["passage"], str(rec["question"]),
                                       tuple(options), scale * _percent(rec["human_accuracy"], "human_accuracy"),
                                       scale * _percent(rec["model_accuracy"], "model_accuracy"),
                                       str(rec.get("question_type") or wh_word(str(rec["question"])))))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: record {qid}: {type(exc).__name__}: {exc}") from None
    if not out:
        raise ValueError(f"{path}: no validated question with its passage ({left})")
    return out, left


def release_study(questions: list[ReleaseQuestion]) -> dict:
    """The paper's analysis of the release: passage measures against the human-model gap over passages, easy
    and hard subsets with Welch's t, and the question measures and breakdowns the stage reports."""
    by_passage: dict[str, Any] = {}
    for q in questions:
        if q.passage_id not in by_passage:
            by_passage[q.passage_id] = passage_measures(q.passage)
    measures = {q.qid: by_passage[q.passage_id] for q in questions}
    result = analyse(measures, {q.qid: q.model_accuracy for q in questions},
                     {q.qid: q.human_accuracy for q in questions}, {q.qid: q.passage_id for q in questions},
                     question_measures(questions))  # the stage's own question measures (same fields)
    result["measured"] = "the human-model gap (Sugawara et al. 2022), from the release's own accuracies"
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release", type=Path)
    ap.add_argument("--out", type=Path, help="write the result here as JSON (else print it)")
    args = ap.parse_args(argv)
    try:
        questions, left = load_release(args.release)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result = {"file": str(args.release), "left_out": left, **release_study(questions)}
    text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    if args.out:
        from pipeline.common.files import write_json

        write_json(args.out, result)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
