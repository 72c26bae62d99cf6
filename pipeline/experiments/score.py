"""``python -m pipeline.experiments.score EVAL PREDICTIONS``: a predictions file scored on one of the pipeline's
eval sets with the paper's measures, per question type and domain where the set has them, and set beside every
system, baseline and control ``compare`` last scored there, with paired intervals over the unit the set
sampled, Holm-corrected.

What the SQuAD evaluation script and lm-evaluation-harness give their users, for a benchmark builder's own
system: its predictions are read, checked, scored by the same functions the stages score with, and paired,
question by question, with the per-question scores ``compare`` wrote (``data/predictions/per_question.json``),
so the intervals are those a stage's own system would get. The eval sets (``EVAL``) and their measures:

- ``nlquad/test``: IoU (NLQuAD's primary measure), F1 and EM; a prediction is ``{"text": ..., "start": ...,
  "end": ...}`` (character offsets into the document, as the span stages write them); pairs resample articles.
- ``quail/dev_heldout``, ``quail/challenge``: accuracy, per question type and per domain; a prediction is the
  chosen option's index (0-3); pairs resample texts.
- ``strategyqa/eval``: accuracy; a prediction is ``"yes"``/``"no"``, ``true``/``false`` or ``{"answer": ...}``;
  pairs resample questions.

A file maps question ids to predictions, or is a stage's seeded file (``{"seeds": [...], "runs": {...}}``: every
run scored, per question the mean over runs). ``--key K`` (repeatable) descends into each run first: a QuAIL
multiple-choice file holds both eval sets (``--key dev_heldout``), the QuAIL baselines file every heuristic
(``--key dev --key longchoice``). Every question of the eval set needs a prediction and no other id may appear;
a prediction of the wrong form is refused naming the question and the field.

    python -m pipeline.experiments.score quail/challenge my_predictions.json
    python -m pipeline.experiments.score nlquad/test data/predictions/span_window.json --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pipeline.common.layout import PATHS

TRACK_UNITS = {"nlquad": "article", "quail": "text", "strategyqa": "question"}
BREAKDOWNS = {"quail": ("question_type", "domain")}  # per-question fields of compare's file a figure splits by


class ScoreError(ValueError):
    """A predictions file or an eval set this command cannot score, said in one sentence."""


def figures_of(eval_name: str) -> tuple[str, ...]:
    """The set's measures as compare names them, the paper's primary one first."""
    track, _, part = eval_name.partition("/")
    if track == "nlquad":
        return ("IoU", "F1", "EM")
    if track == "quail":
        return ("acc_challenge",) if part == "challenge" else ("acc",)
    return ("acc",)


def _descend(run: Any, keys: Sequence[str], where: str) -> Any:
    for key in keys:
        if not isinstance(run, Mapping) or key not in run:
            found = sorted(run)[:6] if isinstance(run, Mapping) else type(run).__name__
            raise ScoreError(f"{where}: no key {key!r} to descend into (found {found})")
        run = run[key]
    return run


def read_runs(data: Any, keys: Sequence[str] = ()) -> list[Mapping[str, Any]]:
    """Each run's ``{question id: prediction}``: one run for a plain mapping, every seed's for a seeded file."""
    if isinstance(data, Mapping) and set(data) == {"seeds", "runs"}:
        from pipeline.common.seed_runs import runs_of

        try:
            by_seed = runs_of(data)
        except ValueError as exc:
            raise ScoreError(str(exc)) from None
        runs = [_descend(run, keys, f"run of seed {seed}") for seed, run in by_seed.items()]
    else:
        runs = [_descend(data, keys, "the file")]
    for n, run in enumerate(runs):
        if not isinstance(run, Mapping) or not run:
            raise ScoreError(f"run {n + 1}: expected a mapping of question ids to predictions, got "
                             f"{type(run).__name__ if not isinstance(run, Mapping) else 'an empty mapping'}")
    return runs


def _choice(qid: str, value: Any, options: int) -> int:
    if type(value) is not int or not 0 <= value < options:
        raise ScoreError(f"question {qid!r}: the prediction must be an option index 0-{options - 1}, got {value!r}")
    return value


def _yes_no(qid: str, value: Any) -> bool:
    if isinstance(value, Mapping):
        if "answer" not in value:
            raise ScoreError(f"question {qid!r}: field 'answer' missing (yes/no, true/false)")
        value = value["answer"]
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
        return value.strip().lower() == "yes"
    raise ScoreError(f"question {qid!r}: field 'answer' must be yes/no or true/false, got {value!r}")


def _span(qid: str, value: Any, context_length: int) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ScoreError(f"question {qid!r}: a span prediction is {{'text', 'start', 'end'}}, got {type(value).__name__}")
    for field in ("text", "start", "end"):
        if field not in value:
            raise ScoreError(f"question {qid!r}: field {field!r} missing (text, start and end character offsets)")
    if not isinstance(value["text"], str):
        raise ScoreError(f"question {qid!r}: field 'text' must be a string")
    for field in ("start", "end"):
        if type(value[field]) is not int or not 0 <= value[field] <= context_length:
            raise ScoreError(f"question {qid!r}: field {field!r} must be a character offset 0-{context_length}, "
                             f"got {value[field]!r}")
    if value["start"] > value["end"]:
        raise ScoreError(f"question {qid!r}: field 'start' ({value['start']}) is after 'end' ({value['end']})")
    return {"text": value["text"], "start": value["start"], "end": value["end"]}


def check_ids(run: Mapping[str, Any], questions: Mapping[str, Any], eval_name: str) -> None:
    missing = [q for q in questions if q not in run]
    unknown = [q for q in run if q not in questions]
    if missing:
        raise ScoreError(f"{len(missing)} question(s) of {eval_name} have no prediction, e.g. {missing[:3]}")
    if unknown:
        raise ScoreError(f"{len(unknown)} prediction(s) for ids that are not in {eval_name}, e.g. {unknown[:3]} "
                         "(another eval set's file?)")


def per_question_scores(eval_name: str, run: Mapping[str, Any], questions: Mapping[str, dict],
                        dataset: dict | None = None) -> dict[str, dict[str, float]]:
    """``{qid: {figure: 0 or 1 (or a fraction)}}`` of one run, by the functions the stages score with."""
    check_ids(run, questions, eval_name)
    track = eval_name.partition("/")[0]
    if track == "quail":
        figure = figures_of(eval_name)[0]
        return {q: {figure: float(_choice(q, run[q], len(rec["options"])) == rec["gold"])}
                for q, rec in questions.items()}
    if track == "strategyqa":
        return {q: {"acc": float(_yes_no(q, run[q]) == (rec["gold"] == "yes"))} for q, rec in questions.items()}
    from pipeline.nlquad.metrics import span_scores
    from pipeline.nlquad.squad_format import iter_examples

    if dataset is None:
        raise ScoreError(f"{eval_name}: the split's documents are needed to score spans")
    lengths = {ex["id"]: len(ex["context"]) for ex in iter_examples(dataset)}
    preds = {q: _span(q, run[q], lengths.get(q, 0)) for q in questions}
    scored = span_scores(preds, dataset)
    return {q: {"IoU": scored[q]["iou"], "F1": scored[q]["f1"], "EM": scored[q]["em"]} for q in questions}


def breakdown(questions: Mapping[str, dict], scores: Mapping[str, float], field: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[float]] = {}
    for q, rec in questions.items():
        groups.setdefault(str(rec.get(field)), []).append(scores[q])
    return {g: {"questions": len(v), "mean": round(100 * sum(v) / len(v), 2)} for g, v in sorted(groups.items())}


def score(eval_name: str, runs: list[Mapping[str, Any]], per_question: Mapping[str, dict],
          dataset: dict | None = None) -> dict[str, Any]:
    """The report: the measures (mean over runs), breakdowns, and every pair with compare's systems there."""
    from pipeline.common.paired import paired_difference
    from pipeline.common.verdicts import holm

    if eval_name not in per_question:
        raise ScoreError(f"eval set {eval_name!r}: one of {', '.join(sorted(per_question))} (as compare last wrote them)")
    questions = per_question[eval_name]
    track = eval_name.partition("/")[0]
    scored = [per_question_scores(eval_name, run, questions, dataset) for run in runs]
    ids = list(questions)
    figures = figures_of(eval_name)
    mean = {f: {q: sum(run[q][f] for run in scored) / len(scored) for q in ids} for f in figures}
    units = [str(questions[q]["unit"]) for q in ids]
    report: dict[str, Any] = {
        "eval": eval_name, "questions": len(ids), "unit": TRACK_UNITS[track], "units": len(set(units)),
        "runs": len(runs), "primary": figures[0],
        "figures": {f: round(100 * sum(mean[f].values()) / len(ids), 2) for f in figures},
        "breakdowns": {field: breakdown(questions, mean[figures[0]], field) for field in BREAKDOWNS.get(track, ())},
        "pairs": []}
    systems = sorted({s for rec in questions.values() for s in rec["systems"]})
    for figure in figures:
        family = []
        for system in systems:
            shared = [q for q in ids if figure in questions[q]["systems"].get(system, {})]
            if len(shared) < len(ids):
                continue  # compare scored that system on part of the set only (or not on this figure)
            theirs = [questions[q]["systems"][system][figure] / 100 for q in shared]
            pair = paired_difference([mean[figure][q] for q in shared], theirs, clusters=[units[ids.index(q)]
                                     for q in shared], unit=TRACK_UNITS[track], with_p=True)
            family.append({"against": system, "figure": figure, "their_runs": questions[shared[0]]["systems"][system]
                           .get("runs"), **pair})
        adjusted = holm({p["against"]: p["p_value"] for p in family})
        for p in family:
            p["p_holm"] = adjusted[p["against"]]
            significant = p["p_holm"] is None or p["p_holm"] < 0.05  # None: no spread, the interval is a point
            p["reading"] = ("above" if p["ci95"][0] > 0 and significant else
                            "below" if p["ci95"][1] < 0 and significant else "level")
        report["pairs"] += family
    return report


def lines(report: dict[str, Any]) -> list[str]:
    out = [f"{report['eval']}: {report['questions']} questions, {report['units']} {report['unit']}s, "
           f"{report['runs']} run(s) scored"]
    out.append("  " + ", ".join(f"{f} {v:.1f}%" for f, v in report["figures"].items()))
    for field, groups in report["breakdowns"].items():
        out.append(f"  by {field}: " + ", ".join(f"{g} {v['mean']:.1f}% ({v['questions']})" for g, v in groups.items()))
    primary = [p for p in report["pairs"] if p["figure"] == report["primary"]]
    if primary:
        out.append(f"  against each system on {report['primary']} (yours minus theirs, points; 95% interval over "
                   f"{report['unit']}s; Holm over {len(primary)}):")
        width = max(len(p["against"]) for p in primary)
        for p in sorted(primary, key=lambda p: -p["difference"]):
            out.append(f"    {p['against']:<{width}}  {p['baseline_mean']:5.1f}%  {p['difference']:+6.1f} "
                       f"[{p['ci95'][0]:+.1f}, {p['ci95'][1]:+.1f}]  p_holm "
                       f"{'-' if p['p_holm'] is None else format(p['p_holm'], '.3f')}  {p['reading']}")
    return out


def _load_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScoreError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScoreError(f"{what} {path} is not readable JSON ({str(exc)[:120]})") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("eval", help="the eval set: nlquad/test, quail/dev_heldout, quail/challenge, strategyqa/eval")
    ap.add_argument("predictions", type=Path, help="a JSON file of predictions (module docstring)")
    ap.add_argument("--key", action="append", default=[], help="descend into each run by this key first")
    ap.add_argument("--per-question", type=Path, default=PATHS.compare.per_question,
                    help="compare's per-question scores (default: this workspace's)")
    ap.add_argument("--json", type=Path, help="also write the whole report here")
    args = ap.parse_args(argv)
    try:
        per_question = _load_json(args.per_question, "compare's per-question file (run `dvc repro compare`)")
        runs = read_runs(_load_json(args.predictions, "the predictions file"), args.key)
        dataset = None
        if args.eval.startswith("nlquad/"):
            dataset = _load_json(PATHS.split.dir / f"{args.eval.partition('/')[2]}.json", "the NLQuAD split")
        report = score(args.eval, runs, per_question, dataset)
    except ScoreError as exc:
        print(f"score: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines(report)))
    if args.json:
        from pipeline.common.files import write_json

        write_json(args.json, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
