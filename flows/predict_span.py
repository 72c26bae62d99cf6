"""``predict_span`` stage: windows of the evaluation split -> one span per question (NLQuAD aggregation)."""

from __future__ import annotations

import sys
from pathlib import Path

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.runtime import write_json
from pipeline.span_qa.data import load_examples
from pipeline.span_qa.features import build_windows
from pipeline.span_qa.postprocess import predict_from_logits
from pipeline.span_qa.train import predict_logits

MODEL = Path("models/span_window/final")


@flow(name="predict_span", log_prints=True)
def predict_span_flow(params_file: str = "params.yaml") -> dict:
    from transformers import AutoTokenizer

    p = params_of(params_file).train
    examples, _ = load_examples(f"data/splits/{p.eval_split}.json")
    feats = build_windows(AutoTokenizer.from_pretrained(str(MODEL)), examples.questions, examples.contexts, None,
                          p.max_seq_len, p.doc_stride, p.max_question_len)
    starts, ends = predict_logits(MODEL, feats, p.batch_size * 2, p.device)
    preds = predict_from_logits(feats.example_index, feats.offset_mapping, starts, ends, examples.contexts,
                                p.n_best, p.max_answer_tokens)
    out = dict(zip(examples.ids, preds, strict=True))
    write_json("data/predictions/span_window.json", out, indent=None)
    return {"questions": len(out), "windows": len(feats), "empty": sum(not v["text"] for v in out.values())}


if __name__ == "__main__":
    sys.exit(stage_main(predict_span_flow))
