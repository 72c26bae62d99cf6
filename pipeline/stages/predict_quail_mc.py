"""``predict_quail_mc@<variant>``: the trained model's pick for every held-out dev and challenge question
(``predictions``), and how much of each input the model saw (``predict_report``).

The picks include "not enough information" when the model's score for it, plus one bias chosen on the
selection-dev questions (``pipeline.quail.answerability``), beats the other options; the report holds the bias
and what it did on selection-dev, so a reader sees the choice was made there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json_set
from pipeline.common.layout import PATHS
from pipeline.common.logs import get_logger
from pipeline.quail.answerability import choose_bias, nei_index, picks, selection_dev
from pipeline.quail.mc_model import VARIANTS, encode_questions
from pipeline.quail.sets import heldout_dev, quail_sets
from pipeline.training.choice_model import predict_choice_logits

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

    def logits_of(name: str, questions: list) -> tuple[list[list[float]], float]:
        get_logger().info("quail_mc@%s: predicting %d %s questions", variant, len(questions), name)
        feats = encode_questions(tokenizer, questions, variant, p.max_seq_len)
        n_options = len(questions[0].options)
        logits = predict_choice_logits("multiple_choice", model, feats, n_options, p.eval_batch_size, p.device,
                                       p.precision, p.cpu_threads)
        return logits, round(feats.truncated / len(feats), 4)

    selection = selection_dev(train_share, p.dev_share, p.seed)
    answerability = choose_bias(logits_of("selection-dev", selection)[0], selection)
    predictions, seen = {}, {}
    for name, questions in evaluated.items():
        logits, truncated = logits_of(name, questions)
        chosen = picks(logits, questions, answerability["bias"])
        predictions[name] = dict(zip((q.qid for q in questions), chosen, strict=True))
        seen[name] = {"questions": len(questions), "truncated_share": truncated,
                      "nei_picked": round(sum(c == nei_index(q) for c, q in zip(chosen, questions)) / len(questions), 4)}
    report = {"variant": variant, "max_seq_len": p.max_seq_len, "sets": seen, "answerability": answerability}
    write_json_set([(PATHS.quail_mc[variant].predictions, predictions, None),
                    (PATHS.quail_mc[variant].predict_report, report, 2)])
    return seen
