"""``predict_strategyqa_qa@<setting>``: each trained run's answer and logits for every eval question
(``predictions``: one run per seed of ``strategyqa_qa.seeds``, ``pipeline.common.seed_runs``), and how much of
each input the model saw (``predict_report``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json_set
from pipeline.common.layout import PATHS
from pipeline.common.seed_runs import run_dir, seeded_predictions
from pipeline.launcher.parallel_seeds import predict_each_seed
from pipeline.strategyqa.answering import build_inputs
from pipeline.strategyqa.config import setting_seeds
from pipeline.stages.strategyqa_setting import load_setting
from pipeline.training.choice_model import argmax, predict_choice_logits
from pipeline.training.finetune import FINAL_DIR
from pipeline.training.pair_encoding import encode_pairs

if TYPE_CHECKING:
    from pipeline.params import Params


def predict(params: Params, setting: str, seed: int) -> dict:
    """One run's answers and what its inputs held: in the stage's process, or in a process of its own beside the
    other seeds' (``pipeline.launcher.parallel_seeds``)."""
    from transformers import AutoTokenizer

    p = params.strategyqa_qa
    data = load_setting(p, setting)
    evaluation = data.evaluation
    first, context = build_inputs(evaluation, setting, data.ranked["eval"] if data.ranked else None,
                                  data.paragraphs)
    model = run_dir(PATHS.strategyqa_qa[setting].model_dir, setting_seeds(p.seeds, p.control_seeds, setting),
                    seed) / FINAL_DIR
    feats = encode_pairs(AutoTokenizer.from_pretrained(str(model)), first, context, p.max_seq_len)
    logits = predict_choice_logits("classification", model, feats, 2, p.eval_batch_size, p.device,
                                   p.precision, p.cpu_threads)
    answers = {q.qid: {"answer": bool(a), "logits": [round(x, 5) for x in row]}
               for q, a, row in zip(evaluation, argmax(logits), logits, strict=True)}
    seen = {"setting": setting, "max_seq_len": p.max_seq_len, "eval_questions": len(evaluation),
            "eval_truncated_share": round(feats.truncated / len(feats), 4) if len(feats) else None,
            "eval_empty_context": sum(not c for c in context) if context is not None else None}
    return {"run": answers, "report": seen}


def run(params: Params, setting: str) -> dict:
    """Every seed's run: in turn, or side by side on a CPU as they trained (``strategyqa_qa.parallel_runs``)."""
    p = params.strategyqa_qa
    # the control pair's own seeds (strategyqa_qa.control_seeds)
    p = p.model_copy(update={"seeds": setting_seeds(p.seeds, p.control_seeds, setting)})
    every = predict_each_seed(predict, params, setting, p)
    runs = {seed: out["run"] for seed, out in zip(p.seeds, every, strict=True)}
    seen = every[0]["report"]  # the inputs are the same for every run
    write_json_set([(PATHS.strategyqa_qa[setting].predictions, seeded_predictions(p.seeds, runs), None),
                    (PATHS.strategyqa_qa[setting].predict_report, {**seen, "seeds": list(p.seeds)}, 2)])
    return seen
