"""``predict_span`` and ``predict_longformer``: each trained run's answer for every question of the eval split
(one run per seed, ``pipeline.common.seed_runs``), from its windows' start and end logits aggregated as the
paper does (``predictions``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.common.seed_runs import seeded_predictions
from pipeline.launcher.parallel_seeds import predict_each_seed
from pipeline.span_qa.data import SpanExamples, load_examples
from pipeline.span_qa.features import build_windows
from pipeline.span_qa.postprocess import predict_from_logits
from pipeline.span_qa.train import predict_logits
from pipeline.training.finetune import FINAL_DIR
from pipeline.stages.train_span_qa import Kind, kind_of

if TYPE_CHECKING:
    from pipeline.params import Params


def answer(kind: Kind, final: Path, ex: SpanExamples, questions: list[str] | None = None) -> dict:
    """The answers of the run saved in ``final`` to the examples ``ex``, each asked ``questions[i]`` (default: its
    own question; ``predict_span_shuffled`` asks another), and how many windows it read."""
    from transformers import AutoTokenizer

    p = kind.p
    feats = build_windows(AutoTokenizer.from_pretrained(str(final)), questions or ex.questions, ex.contexts, None,
                          p.max_seq_len, kind.doc_stride, p.max_question_len)
    starts, ends = predict_logits(final, feats, p.eval_batch_size, p.device, kind.global_question, p.precision,
                                  p.cpu_threads)
    preds = predict_from_logits(feats.example_index, feats.offset_mapping, starts, ends, ex.contexts, p.n_best,
                                p.max_answer_tokens, p.aggregation)
    return {"answers": dict(zip(ex.ids, preds, strict=True)), "windows": len(feats)}


def predict(params: Params, name: str, seed: int) -> dict:
    """One run's answer to every eval question, and how many windows it read: in the stage's process, or in a
    process of its own beside the other seeds' (``pipeline.launcher.parallel_seeds``)."""
    kind = kind_of(params, name)
    ex, _ = load_examples(PATHS.split.dir / f"{kind.p.eval_split}.json")
    return answer(kind, kind.run_dir(seed) / FINAL_DIR, ex)


def run(params: Params, name: str) -> dict:
    """Every seed's run: in turn, or side by side on a CPU as they trained (the section's ``parallel_runs``)."""
    p = kind_of(params, name).p
    every = predict_each_seed(predict, params, name, p)
    runs = {seed: out["answers"] for seed, out in zip(p.seeds, every, strict=True)}
    # named in full, not built from the kind: predict_{short} would read every predict_* group
    predictions = PATHS.predict_span.predictions if name == "span_window" else PATHS.predict_longformer.predictions
    write_json(predictions, seeded_predictions(p.seeds, runs), indent=None)
    first = runs[p.seed]
    return {"questions": len(first), "windows": every[-1]["windows"], "runs": len(runs),
            "empty": sum(not v["text"] for v in first.values())}
