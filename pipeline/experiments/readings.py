"""The README's reading of the default run, one bullet a track, generated from the reports: a figure in it is
read, never typed, so it cannot go stale (``results_table --write`` writes it, ``--check`` fails when it
differs; ``tests/test_paired.py``). Which baselines a system is above, level with or below is compare's
verdict (over training seeds and units, Holm-corrected, with the seed t-interval), never a reading of one run.
Each track says in one sentence whether its trained model is shown to use its context: above every one of its
question-blind or partial-input controls by compare's verdict, or not."""

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
         "mc_options": "the options alone", "position_prior": "the position prior",
         "shuffled_questions": "itself on shuffled questions", "options_features": "the options-only logit",
         "qa_question_only": "question-only", "bow_question": "the bag-of-words question classifier",
         "majority": "the majority"}
SAID = {"above": "above", "level": "level with", "below": "below", "fragile": "fragile against"}


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
    groups = {v: [NAMES.get(b, b) for b in baselines if verdict.get(b) == v] for v in SAID}
    said = [f"{SAID[v]} {_names(names)}" for v, names in groups.items() if names]
    return ", ".join(said)


def shown_to_read(pairs: list[dict], track: str, system: str, eval_set: str, figure: str,
                  controls: tuple[str, ...], what: str) -> str:
    """The sentence a reviewer asks for: is ``system`` above every control in ``controls`` (compare's verdict,
    after Holm and the seed t-interval)? A control whose pair is missing, or a system trained once, is not
    evidence, and the sentence says so."""
    by = {p["baseline"]: p for p in pairs if (p["track"], p["system"], p["eval"], p["figure"])
          == (track, system, eval_set, figure) and p["baseline"] in controls}
    if not by:
        return f"Whether it uses {what} is not measured (no control compared)."
    if any(p["verdict"] == "one run" for p in by.values()):
        return f"It is not shown to use {what}: it is trained once, and one run gets no verdict."
    short = [b for b in controls if b in by and by[b]["verdict"] != "above"]
    if not short:
        return (f"So it is shown to use {what}: above every control that lacks it "
                f"({_names([NAMES.get(b, b) for b in controls if b in by])}) after Holm's correction.")
    strongest = max(by.values(), key=lambda p: p["baseline_mean"])
    return (f"So it is not shown to use {what}: after Holm's correction and the seed t-interval it is not above "
            f"{_names([NAMES.get(b, b) for b in short])} (its strongest such control, "
            f"{NAMES.get(strongest['baseline'], strongest['baseline'])}, scores {strongest['baseline_mean']:.1f} "
            f"against its {strongest['system_mean']:.1f}).")


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
    windows = ("first_window", "last_window", "random_window", "bm25l")
    controls = ("position_prior", "shuffled_questions")
    own = _pair(pairs, "nlquad", "span_window", "other_answers", split, "IoU own-other")
    text = (f"* **NLQuAD** (IoU, the paper's primary measure): the sliding-window model's {split} IoU is "
            f"{_over(span['over_seeds']['iou'])}, F1 {span['over_seeds']['f1']['mean']:.1f}: on IoU it is "
            f"{_verdicts(pairs, 'nlquad', 'span_window', split, 'IoU', windows)}; against its question-blind controls "
            f"{_verdicts(pairs, 'nlquad', 'span_window', split, 'IoU', controls)}, and its IoU with its own answer is "
            f"{_interval(own)} over its IoU with the other answers of its article ({own['verdict']}; BM25L's "
            f"{_interval(_pair(pairs, 'nlquad', 'bm25l', 'other_answers', split, 'IoU own-other'))}). "
            + shown_to_read(pairs, "nlquad", "span_window", split, "IoU", controls, "its question")
            + f" On F1 it is {_verdicts(pairs, 'nlquad', 'span_window', split, 'F1', windows)}.")
    text += (f" The Longformer (10 CPU steps) is "
             f"{_verdicts(pairs, 'nlquad', 'longformer', split, 'IoU', ('random_window', 'bm25l'))}.")
    metric = _json(root, PATHS.nlquad_f1_iou.report)["systems"]
    m = metric["span_window"]
    text += (f" The paper's metric finding holds here: F1 >= IoU on {m['f1_at_least_iou_percent']:.0f}% of the "
             f"span model's predictions, {m['iou_zero_percent']:.0f}% have IoU 0"
             + (f" with F1 up to {m['iou_zero_f1']['max']:.1f}" if m.get("iou_zero_f1") else "")
             + ", and the F1-IoU gap by answer length is "
             + " / ".join(f"{g['gap']:.1f}" for g in m["f1_minus_iou_by_answer_words"])
             + f" points ({', '.join(g['answer_words'] for g in m['f1_minus_iou_by_answer_words'])} answer words; "
               f"`{PATHS.nlquad_f1_iou.report}`).")
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
    logit = _pair(pairs, "quail", "options_features", "random", "dev_heldout", "acc")
    partial = ("mc_passage_options", "mc_question_options", "mc_options", "options_features")
    truncated = heldout.get("truncated_share")
    text = (f"* **QuAIL** (accuracy, the paper's measure): the full-input model's held-out dev accuracy is "
            f"{_over(heldout['over_seeds'])}: "
            f"{_verdicts(pairs, 'quail', 'mc_full', 'dev_heldout', 'acc', ('random', 'longchoice', 'pmi', 'ir'))}; "
            f"against its partial inputs "
            f"{_verdicts(pairs, 'quail', 'mc_full', 'dev_heldout', 'acc', partial)}. "
            + shown_to_read(pairs, "quail", "mc_full", "dev_heldout", "acc", partial, "its passage and question")
            + (f" At {full['max_seq_len']} tokens {100 * truncated:.0f}% of its held-out inputs are cut short."
               if isinstance(truncated, (int, float)) and full.get("max_seq_len") else "")
            + f" The options-only model is {_interval(options)} points from random, the options-only logit "
            f"(six features of the options, no neural network) {_interval(logit)} (answer-option artifacts, what "
            f"partial-input ablations exist to expose).")
    if bias_0:
        text += (f" Without the \"not enough information\" bias chosen on selection-dev the full model scores "
                 f"{bias_0['all']:.1f} [{bias_0['ci95'][0]:.1f}, {bias_0['ci95'][1]:.1f}], with it "
                 f"{heldout['all']:.1f} [{heldout['ci95'][0]:.1f}, {heldout['ci95'][1]:.1f}].")
    return text


def strategyqa(root: Path, pairs: list[dict]) -> str:
    control = _json(root, PATHS.strategyqa_qa["ctl_facts"].train_report)
    contexts = _json(root, PATHS.strategyqa_contexts.report)
    bow = _json(root, PATHS.strategyqa_bow.report)
    majority = _pair(pairs, "strategyqa", "qa_ctl_facts", "majority", "eval", "acc")
    question_only = _pair(pairs, "strategyqa", "qa_ctl_facts", "qa_question_only", "eval", "acc")
    bow_pair = _pair(pairs, "strategyqa", "bow_question", "majority", "eval", "acc")
    settings = ("question_only", "ir_q", "ir_d", "ir_ora_d", "ora_p")
    # "one answer": at least 98% of the eval questions get it (a classifier still at its prior)
    shares = {s: _json(root, PATHS.strategyqa_qa[s].report).get("predicted_yes_share") for s in settings}
    alike = [s for s, share in shares.items() if share is not None and max(share, 1 - share) >= 0.98]
    metric = control["select_metric"]
    paper_runs = len(_json(root, PATHS.strategyqa_qa["ir_q"].report).get("seeds", [None]))
    control_runs = len(_json(root, PATHS.strategyqa_qa["question_only"].report).get("seeds", [None]))
    steps = _json(root, PATHS.strategyqa_qa["ir_q"].train_report)["max_steps"]
    trained = (("the paper's settings trained once each" if paper_runs == 1 else
                f"the paper's settings trained under {paper_runs} seeds each")
               + ("" if control_runs == paper_runs else
                  f" (question-only, one of the control pair, under {control_runs})"))
    dev_runs = [run["dev_best"][metric] for run in control.get("runs", [control])]
    dev_text = (f"{dev_runs[0]:.1f}" if len(dev_runs) == 1 else
                f"{sum(dev_runs) / len(dev_runs):.1f} (mean of its {len(dev_runs)} runs)")
    verdicts = ("one run: no verdict" if majority["verdict"] == "one run" else
                f"against the majority {majority['verdict']}, against question-only {question_only['verdict']}")
    cv = bow.get("cv")
    bow_text = (f"The bag-of-words question classifier (no paragraph, no transformer) scores {bow_pair['system_mean']:.1f}, "
                f"{_interval(bow_pair)} over the majority ({bow_pair['verdict']})"
                + (f", and {cv['accuracy']:.1f} out of fold on the {cv['folds']} folds of the cross-validation "
                   f"({cv['versus_majority']['difference']:+.1f} [{cv['versus_majority']['ci95'][0]:+.1f}, "
                   f"{cv['versus_majority']['ci95'][1]:+.1f}] over each fold's majority)" if cv else "") + ".")
    return (f"* **StrategyQA** (accuracy, the paper's measure): {trained} at {steps} steps, {len(alike)} of the "
            f"paper's five settings give at least 98% of the eval questions one answer (a classifier that has not "
            f"left its prior in {steps} steps); the facts control reaches {'AUC' if metric == 'auc' else metric} "
            f"{dev_text} on selection-dev "
            f"and is {_interval(majority)} over the majority and {_interval(question_only)} over question-only on "
            f"the {majority['questions']} eval questions ({verdicts}). {bow_text} "
            + shown_to_read(pairs, "strategyqa", "qa_ora_p", "eval", "acc", ("qa_question_only", "bow_question"),
                            "its paragraphs").replace("It is", "ORA-P (the gold paragraphs) is", 1)
            + f" Retrieval here is near-oracle ({100 * contexts['gold_share']:.1f}% of the corpus is StrategyQA "
            f"evidence).")


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
