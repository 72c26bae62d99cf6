"""The README's reading of the default run, one bullet a track, generated from the reports: a figure in it is
read, never typed, so it cannot go stale (``results_table --write`` writes it, ``--check`` fails when it
differs; ``tests/test_paired.py``). Which baselines a system is above, level with or below is compare's
verdict (over training seeds and units), never a reading of one run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.common.layout import PATHS


def _json(root: Path, path: Path | str) -> Any:
    return json.loads((root / path).read_text(encoding="utf-8"))


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


NAMES = {"first_window": "the first window", "last_window": "the last window", "random_window": "the random window",
         "bm25l": "BM25L", "random": "random", "longchoice": "LongChoice", "pmi": "PMI", "ir": "IR",
         "mc_passage_options": "passage + options", "mc_question_options": "question + options",
         "mc_options": "the options alone"}


def _verdicts(pairs: list[dict], track: str, system: str, eval_set: str, figure: str,
              baselines: tuple[str, ...]) -> str:
    """"above X and Y, level with Z" from compare's verdicts, in the order given; "one run" when trained once."""
    by = {p["baseline"]: p for p in pairs if p["track"] == track and p["system"] == system
          and p["eval"] == eval_set and p["figure"] == figure and p["baseline"] in baselines}
    verdict = {b: by[b]["verdict"] for b in baselines if b in by}
    if not verdict:
        return "not compared"
    if all(v == "one run" for v in verdict.values()):
        return "trained once, so no verdict"
    groups = {v: [NAMES.get(b, b) for b in baselines if verdict.get(b) == v] for v in ("above", "level", "below")}
    said = [f"{'above' if v == 'above' else 'level with' if v == 'level' else 'below'} {_names(names)}"
            for v, names in groups.items() if names]
    return ", ".join(said)


def _pair(pairs: list[dict], track: str, system: str, baseline: str, eval_set: str, figure: str) -> dict:
    found = [p for p in pairs if (p["track"], p["system"], p["baseline"], p["eval"], p["figure"])
             == (track, system, baseline, eval_set, figure)]
    if len(found) != 1:
        raise KeyError(f"compare has {len(found)} pairs {track} {system} - {baseline} {eval_set} {figure}")
    return found[0]


def _interval(p: dict) -> str:
    return f"{p['difference']:+.1f} [{p['ci95'][0]:+.1f}, {p['ci95'][1]:+.1f}]"


def _over(spread: dict) -> str:
    return f"{spread['mean']:.1f} (SD {spread['sd']:.1f} over {spread['seeds']} runs)" if spread.get("sd") is not None \
        else f"{spread['mean']:.1f} (one run)"


def nlquad(root: Path, pairs: list[dict]) -> str:
    span = _json(root, PATHS.evaluate_span.report)
    calibration = _json(root, PATHS.build_nlquad.report)["calibration"]
    checks = {c["check"]: c for c in calibration["checks"]}
    split = span.get("eval_split", "test")
    ranking = checks.get("own_answer_ranked_first_minus_chance")
    oracle_iou = checks.get("bm25l_oracle_minus_random_window_iou")
    bm25l_iou = checks.get("bm25l_minus_random_window_iou")
    text = (f"* **NLQuAD**: the sliding-window model's {split} F1 is {_over(span['over_seeds']['f1'])}: on F1 it is "
            f"{_verdicts(pairs, 'nlquad', 'span_window', split, 'F1', ('first_window', 'last_window', 'random_window', 'bm25l'))}"
            f"; on IoU "
            f"{_verdicts(pairs, 'nlquad', 'span_window', split, 'IoU', ('first_window', 'last_window', 'random_window', 'bm25l'))}."
            )
    longformer = (f" The Longformer (10 CPU steps) is "
                  f"{_verdicts(pairs, 'nlquad', 'longformer', split, 'F1', ('random_window', 'bm25l'))}.")
    versus_random = _pair(pairs, "nlquad", "span_window", "random_window", split, "F1")
    if versus_random["verdict"] != "above":
        runs = span["training"].get("runs", [span["training"]])
        windows = span["training"].get("train_windows") or runs[0].get("train_windows")
        from pipeline.params import load_params

        batch = load_params(root / "params.yaml", ("span_window",)).span_window.batch_size
        epochs = f"{runs[0]['steps'] * batch / windows:.2f} epoch of its {windows:,} windows" if windows else "under an epoch"
        last = all(r.get("best_step") == r.get("steps") for r in runs)
        text += (f" It is not above the random window ({_interval(versus_random)}, {versus_random['questions']} "
                 f"questions from {versus_random['units']} articles): {runs[0]['steps']} steps are {epochs}"
                 + (", and every run's best dev checkpoint is its last, so it was still learning" if last else "")
                 + ".")
    text += longformer
    if ranking:
        text += (f" What the sample lets a model learn, measured on every article of the build: a sentence encoder "
                 f"ranks a question's own answer first among its article's answers {ranking['value']:+.1f} points "
                 f"[{ranking['ci95'][0]:+.1f}, {ranking['ci95'][1]:+.1f}] more often than chance")
        if oracle_iou and bm25l_iou:
            text += (f"; the BM25L oracle against the random window on IoU {oracle_iou['value']:+.1f} "
                     f"[{oracle_iou['ci95'][0]:+.1f}, {oracle_iou['ci95'][1]:+.1f}], BM25L itself "
                     f"{bm25l_iou['value']:+.1f} [{bm25l_iou['ci95'][0]:+.1f}, {bm25l_iou['ci95'][1]:+.1f}]")
        text += "."
    return text


def quail(root: Path, pairs: list[dict]) -> str:
    full = _json(root, PATHS.quail_mc["full"].report)
    heldout = full["dev_heldout"]
    bias_0 = (full.get("bias_0") or {}).get("dev_heldout")
    options = _pair(pairs, "quail", "mc_options", "random", "dev_heldout", "acc")
    text = (f"* **QuAIL**: the full-input model's held-out dev accuracy is {_over(heldout['over_seeds'])}: "
            f"{_verdicts(pairs, 'quail', 'mc_full', 'dev_heldout', 'acc', ('random', 'longchoice', 'pmi', 'ir'))}; "
            f"against its partial inputs "
            f"{_verdicts(pairs, 'quail', 'mc_full', 'dev_heldout', 'acc', ('mc_passage_options', 'mc_question_options', 'mc_options'))}."
            f" The options-only model is {_interval(options)} points from random (answer-option artifacts, what "
            f"partial-input ablations exist to expose).")
    if bias_0:
        text += (f" Without the \"not enough information\" bias chosen on selection-dev the full model scores "
                 f"{bias_0['all']:.1f} [{bias_0['ci95'][0]:.1f}, {bias_0['ci95'][1]:.1f}], with it "
                 f"{heldout['all']:.1f} [{heldout['ci95'][0]:.1f}, {heldout['ci95'][1]:.1f}].")
    return text


def strategyqa(root: Path, pairs: list[dict]) -> str:
    control = _json(root, PATHS.strategyqa_qa["ctl_facts"].train_report)
    contexts = _json(root, PATHS.strategyqa_contexts.report)
    majority = _pair(pairs, "strategyqa", "qa_ctl_facts", "majority", "eval", "acc")
    question_only = _pair(pairs, "strategyqa", "qa_ctl_facts", "qa_question_only", "eval", "acc")
    settings = ("question_only", "ir_q", "ir_d", "ir_ora_d", "ora_p")
    alike = [s for s in settings
             if _json(root, PATHS.strategyqa_qa[s].report).get("predicted_yes_share") in (0, 0.0, 1, 1.0)]
    metric = control["select_metric"]
    runs = len(_json(root, PATHS.strategyqa_qa["question_only"].report).get("seeds", [None]))
    steps = _json(root, PATHS.strategyqa_qa["question_only"].train_report)["max_steps"]
    trained = "trained once each" if runs == 1 else f"trained under {runs} seeds each"
    verdicts = ("one run: no verdict" if majority["verdict"] == "one run" else
                f"against the majority {majority['verdict']}, against question-only {question_only['verdict']}")
    return (f"* **StrategyQA**: {trained} at {steps} steps, {len(alike)} of the paper's five settings give "
            f"every eval question the same answer (a classifier that has not left its prior in {steps} steps); the "
            f"facts control learns ({control['dev_best'][metric]:.1f} on selection-dev) and is "
            f"{_interval(majority)} over the majority and {_interval(question_only)} over question-only on the "
            f"{majority['questions']} eval questions ({verdicts}). Retrieval here is near-oracle "
            f"({100 * contexts['gold_share']:.1f}% of the corpus is StrategyQA evidence).")


def difficulty(root: Path) -> str:
    report = _json(root, PATHS.difficulty.report)
    family = {**report["vs_model_accuracy"], **report.get("question_measures", {})}
    survive = [m.replace("_", " ") for m, c in family.items() if c.get("significant_holm")]
    raw = [m.replace("_", " ") for m, c in family.items()
           if (c.get("p", c.get("p_questions_as_independent")) or 1) < 0.05]
    per_system = report.get("per_system", {})
    systems = []
    for name, system in per_system.items():
        kept = [f"{m.replace('_', ' ')} r {c['r']:+.2f}" for m, c in system["vs_model_accuracy"].items()
                if c.get("significant_holm")]
        systems.append(f"{name} {', '.join(kept) if kept else 'none'}")
    return (f"* **Difficulty** ({report['passages']} held-out passages, mean accuracy of "
            f"{_names(report.get('models_averaged', []))}): {len(raw)} of the {len(family)} measures "
            f"{'correlates' if len(raw) == 1 else 'correlate'} with "
            f"it at p < 0.05 ({_names(raw) if raw else 'none'}), {len(survive)} after Holm's correction for "
            f"testing {len(family)} ({_names(survive) if survive else 'none'}). Per system, what survives Holm over "
            f"the 3 passage measures: {'; '.join(systems) if systems else 'not computed'}.")


def readings(root: Path) -> str:
    pairs = _json(root, PATHS.compare.report)["pairs"]
    return "\n".join([nlquad(root, pairs), quail(root, pairs), strategyqa(root, pairs), difficulty(root)]) + "\n"
