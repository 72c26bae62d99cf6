"""``predict_quail_mc@<variant>``: the trained model's pick for every held-out dev and challenge question
(``predictions``), and how much of each input the model saw (``predict_report``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json_set
from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.quail.mc_model import VARIANTS, encode_questions
from pipeline.quail.sets import heldout_dev, quail_sets
from pipeline.training.choice_model import argmax, predict_choice_logits

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params, variant: str) -> dict:
    from transformers import AutoTokenizer

    if variant not in VARIANTS:
        raise ValueError(f"unknown input variant {variant!r}; one of {', '.join(VARIANTS)}")
    p = params.quail_mc
    sets, train_share = quail_sets(params.quail.train_share, params.quail.seed)
    evaluated = {"dev_heldout": heldout_dev(sets, train_share), "challenge": sets["challenge"]}
    model = PATHS.quail_mc[variant].model
    tokenizer = AutoTokenizer.from_pretrained(str(model))
    predictions, seen = {}, {}
    for name, questions in evaluated.items():
        get_logger().info("quail_mc@%s: predicting %d %s questions", variant, len(questions), name)
        feats = encode_questions(tokenizer, questions, variant, p.max_seq_len)
        n_options = len(questions[0].options)
        logits = predict_choice_logits("multiple_choice", model, feats, n_options, p.eval_batch_size, p.device)
        predictions[name] = dict(zip((q.qid for q in questions), argmax(logits), strict=True))
        seen[name] = {"questions": len(questions), "truncated_share": round(feats.truncated / len(feats), 4)}
    report = {"variant": variant, "max_seq_len": p.max_seq_len, "sets": seen}
    write_json_set([(PATHS.quail_mc[variant].predictions, predictions, None),
                    (PATHS.quail_mc[variant].predict_report, report, 2)])
    return seen
