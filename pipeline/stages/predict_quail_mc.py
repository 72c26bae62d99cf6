"""``predict_quail_mc@<variant>``: each trained run's pick for every held-out dev and challenge question
(``predictions``: one run per seed of ``quail_mc.seeds``, ``pipeline.common.seed_runs``), and how much of each
input the model saw (``predict_report``).

The picks include "not enough information" when the model's score for it, plus one bias chosen on the run's
selection-dev questions (``pipeline.quail.answerability``), beats the other options; the report holds the bias
and what it did on selection-dev, so a reader sees the choice was made there. The picks without it (bias 0,
``bias_0``) are kept beside them: the held-out gain of the bias is then measured, not assumed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json_set
from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.common.seed_runs import run_dir, seeded_predictions
from pipeline.launcher.parallel_seeds import predict_each_seed
from pipeline.quail.answerability import choose_bias, nei_index, picks, selection_dev
from pipeline.quail.mc_model import VARIANTS, encode_questions
from pipeline.quail.sets import heldout_dev, quail_sets
from pipeline.training.choice_model import predict_choice_logits
from pipeline.training.finetune import FINAL_DIR

if TYPE_CHECKING:
    from pipeline.params import Params


def _evaluated(params: Params) -> tuple[dict[str, list], list]:
    sets, train_share = quail_sets(params.quail.train_share, params.quail.seed, params.quail.exclude_from_heldout)
    return {"dev_heldout": heldout_dev(sets, train_share), "challenge": sets["challenge"]}, train_share


def predict(params: Params, variant: str, seed: int) -> dict:
    """One run's picks (with the bias chosen on its selection-dev, and at bias 0) and its report: in the stage's
    process, or in a process of its own beside the other seeds' (``pipeline.launcher.parallel_seeds``)."""
    from transformers import AutoTokenizer

    if variant not in VARIANTS:
        raise ValueError(f"unknown input variant {variant!r}; one of {', '.join(VARIANTS)}")
    p = params.quail_mc
    evaluated, train_share = _evaluated(params)
    model = run_dir(PATHS.quail_mc[variant].model_dir, p.seeds, seed) / FINAL_DIR
    tokenizer = AutoTokenizer.from_pretrained(str(model))

    def logits_of(name: str, questions: list) -> tuple[list[list[float]], float]:
        get_logger().info("quail_mc@%s seed %d: predicting %d %s questions", variant, seed, len(questions), name)
        feats = encode_questions(tokenizer, questions, variant, p.max_seq_len)
        n_options = len(questions[0].options)
        logits = predict_choice_logits("multiple_choice", model, feats, n_options, p.eval_batch_size, p.device,
                                       p.precision, p.cpu_threads)
        return logits, round(feats.truncated / len(feats), 4)

    selection = selection_dev(train_share, p.dev_share, seed)
    answerability = choose_bias(logits_of("selection-dev", selection)[0], selection)
    predictions, bias_0, seen = {}, {}, {}
    for name, questions in evaluated.items():
        logits, truncated = logits_of(name, questions)
        chosen = picks(logits, questions, answerability["bias"])
        predictions[name] = dict(zip((q.qid for q in questions), chosen, strict=True))
        bias_0[name] = dict(zip((q.qid for q in questions), picks(logits, questions, 0.0), strict=True))
        seen[name] = {"questions": len(questions), "truncated_share": truncated,
                      "nei_picked": round(sum(c == nei_index(q) for c, q in zip(chosen, questions)) / len(questions), 4)}
    return {"run": {**predictions, "bias_0": bias_0}, "report": {"seed": seed, "sets": seen,
                                                                 "answerability": answerability}}


def run(params: Params, variant: str) -> dict:
    """Every seed's run: in turn, or side by side on a CPU as they trained (``quail_mc.parallel_runs``)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown input variant {variant!r}; one of {', '.join(VARIANTS)}")
    p = params.quail_mc
    every = predict_each_seed(predict, params, variant, p)
    runs = {seed: out["run"] for seed, out in zip(p.seeds, every, strict=True)}
    reports = [out["report"] for out in every]
    report = {"variant": variant, "max_seq_len": p.max_seq_len, **{k: reports[0][k] for k in ("sets", "answerability")},
              "runs": reports}
    write_json_set([(PATHS.quail_mc[variant].predictions, seeded_predictions(p.seeds, runs), None),
                    (PATHS.quail_mc[variant].predict_report, report, 2)])
    return reports[0]["sets"]
