"""``predict_span`` and ``predict_longformer``: the trained span model's answer for every question of the
eval split, from its windows' start and end logits aggregated as the paper does (``predictions``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS
from pipeline.span_qa.postprocess import predict_from_logits
from pipeline.span_qa.train import predict_logits
from pipeline.stages.train_span_qa import kind_of, windows

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params, name: str) -> dict:
    from transformers import AutoTokenizer

    kind = kind_of(params, name)
    p = kind.p
    final = kind.model
    feats, ex = windows(AutoTokenizer.from_pretrained(str(final)), kind, p.eval_split, labelled=False)
    starts, ends = predict_logits(final, feats, p.eval_batch_size, p.device, kind.global_question, p.precision,
                                   p.cpu_threads)
    preds = predict_from_logits(feats.example_index, feats.offset_mapping, starts, ends, ex.contexts, p.n_best,
                                p.max_answer_tokens)
    out = dict(zip(ex.ids, preds, strict=True))
    # named in full, not built from the kind: predict_{short} would read every predict_* group
    predictions = PATHS.predict_span.predictions if name == "span_window" else PATHS.predict_longformer.predictions
    write_json(predictions, out, indent=None)
    return {"questions": len(out), "windows": len(feats), "empty": sum(not v["text"] for v in out.values())}
