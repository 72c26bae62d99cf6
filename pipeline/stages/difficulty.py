"""``difficulty``: Sugawara et al. (2022) on the QuAIL held-out dev texts: passage measures against the
human-model gap (or, without human accuracies, against model accuracy) and the partial-input ablations."""

from __future__ import annotations

from typing import TYPE_CHECKING

import json

from pipeline.common.headline import write_headline
from pipeline.common.layout import PATHS
from pipeline.common.files import write_json
from pipeline.common.safe_text import write_plot_csv
from pipeline.common.seed_runs import runs_of
from pipeline.difficulty.analysis import MEASURES, load_human_accuracies
from pipeline.difficulty.study import study
from pipeline.quail.sets import heldout_dev, quail_sets
from pipeline.quail.systems import MC_VARIANTS, mc_system

if TYPE_CHECKING:
    from pipeline.params import Params

PLOT_COLUMNS = ["qid", "question_type", "passage_words", "fk_grade", "word_zipf", "model_accuracy", "gap"]
NO_HUMANS = ("QuAIL publishes no per-question human accuracies (its human baseline is an aggregate), so the "
             "gap, the easy/hard subsets and the tests between them are not computed; set "
             "difficulty.human_accuracies to a file of them to run those parts")


def _system_predictions() -> dict[str, dict[str, dict[str, int]]]:
    """``{set: {system: {qid: option}}}`` from the baseline and multiple-choice stages, read once. The
    baselines' ``dev`` is the whole dev set; the held-out texts are part of it. A multiple-choice variant
    trained under several seeds is its reference run (the first seed's), the model its card describes."""
    out: dict[str, dict[str, dict[str, int]]] = {"dev_heldout": {}, "challenge": {}}
    base = json.loads(PATHS.quail_baselines.predictions.read_text(encoding="utf-8"))
    out["dev_heldout"].update(base.get("dev", {}))
    out["challenge"].update(base.get("challenge", {}))
    for variant in MC_VARIANTS:
        path = PATHS.quail_mc[variant].predictions
        preds = next(iter(runs_of(json.loads(path.read_text(encoding="utf-8"))).values())) if path.exists() else {}
        for set_name, by_qid in preds.items():
            if set_name == "bias_0":
                continue
            out.setdefault(set_name, {})[mc_system(variant)] = by_qid
    return out


def headlines() -> list[tuple[str, str]]:
    """The headline rows this stage writes, ``(track, system)`` of ``metrics/<track>/<system>.json``: the write
    below and dvc.yaml's outs (``python -m pipeline.experiments.stage_deps``) both come from it."""
    return [("difficulty", measure) for measure in MEASURES]


def run(params: Params) -> dict:
    p = params.difficulty
    sets, train = quail_sets(params.quail.train_share, params.quail.seed, params.quail.exclude_from_heldout)
    questions = heldout_dev(sets, train)
    predictions = _system_predictions()
    human = load_human_accuracies(p.human_accuracies) if p.human_accuracies else None
    found = study(questions, sets["challenge"], predictions, p.models, human, NO_HUMANS)
    result, measures, model_acc, gap = found.result, found.measures, found.model_accuracy, found.gap
    write_plot_csv(PATHS.difficulty.measures_plot, PLOT_COLUMNS, (
        [q.qid, q.question_type, measures[q.qid].passage_words, round(measures[q.qid].fk_grade, 4),
         measures[q.qid].word_zipf, round(model_acc[q.qid], 2), "" if q.qid not in gap else round(gap[q.qid], 2)]
        for q in questions))
    write_json(PATHS.difficulty.report, result)
    # with human accuracies the paper's question (measures vs the human-model gap), else vs model accuracy
    against = result["human"]["vs_gap"] if human is not None else result["vs_model_accuracy"]
    for track, measure in headlines():
        # the p a reader can act on: Holm-adjusted over the measures tested (the raw one is in the report)
        write_headline(track, measure, {"r": against[measure]["r"],
                                        "p": against[measure].get("p_holm", against[measure]["p"])})
    print({k: result[k] for k in ("questions", "model_accuracy")}, "humans:", human is not None)
    return result

