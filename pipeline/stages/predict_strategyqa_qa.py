"""``predict_strategyqa_qa@<setting>``: the trained classifier's answer and logits for every eval question
(``predictions``), and how much of each input it saw (``predict_report``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json_set
from pipeline.common.layout import PATHS
from pipeline.strategyqa.answering import build_inputs
from pipeline.stages.strategyqa_setting import load_setting
from pipeline.training.choice_model import argmax, predict_choice_logits
from pipeline.training.pair_encoding import encode_pairs

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params, setting: str) -> dict:
    from transformers import AutoTokenizer

    p = params.strategyqa_qa
    data = load_setting(p, setting)
    evaluation = data.evaluation
    first, context = build_inputs(evaluation, setting, data.ranked["eval"] if data.ranked else None,
                                  data.paragraphs)
    model = PATHS.strategyqa_qa[setting].model
    feats = encode_pairs(AutoTokenizer.from_pretrained(str(model)), first, context, p.max_seq_len)
    logits = predict_choice_logits("classification", model, feats, 2, p.eval_batch_size, p.device,
                                   p.precision, p.cpu_threads)
    predictions = {q.qid: {"answer": bool(a), "logits": [round(x, 5) for x in row]}
                   for q, a, row in zip(evaluation, argmax(logits), logits, strict=True)}
    seen = {"setting": setting, "max_seq_len": p.max_seq_len, "eval_questions": len(evaluation),
            "eval_truncated_share": round(feats.truncated / len(feats), 4) if len(feats) else None,
            "eval_empty_context": sum(not c for c in context) if context is not None else None}
    write_json_set([(PATHS.strategyqa_qa[setting].predictions, predictions, None),
                    (PATHS.strategyqa_qa[setting].predict_report, seen, 2)])
    return seen
