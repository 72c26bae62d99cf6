"""What the span-QA flows share: one recipe per model kind (sliding windows or Longformer)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.params import Params
from pipeline.runtime import atomic_output, write_json
from pipeline.span_qa.data import load_examples
from pipeline.span_qa.features import WindowFeatures, build_windows
from pipeline.span_qa.metrics import evaluate
from pipeline.span_qa.postprocess import predict_from_logits
from pipeline.finetune import TrainConfig, resolve_model_path
from pipeline.span_qa.train import predict_logits, train


@dataclass(frozen=True)
class Kind:
    name: str  # "span_window" | "longformer"
    init: str  # model to start from
    max_seq_len: int
    doc_stride: int
    global_question: bool

    @property
    def model_dir(self) -> Path:
        return Path("models") / self.name

    @property
    def short(self) -> str:
        return "span" if self.name == "span_window" else self.name


LONGFORMER_INIT = Path("models/longformer_init")


def kind_of(params: Params, name: str) -> tuple[Kind, object]:
    if name == "span_window":
        p = params.train
        return Kind(name, resolve_model_path(p.model_name_or_path), p.max_seq_len, p.doc_stride, False), p
    p = params.longformer
    # one window holds the whole document (up to max_seq_len); a longer document continues in a next window
    return Kind(name, str(LONGFORMER_INIT), p.max_seq_len, p.max_seq_len, True), p


def windows(tokenizer, kind: Kind, p, split: str, labelled: bool) -> tuple[WindowFeatures, object]:
    ex, _ = load_examples(f"data/splits/{split}.json")
    feats = build_windows(tokenizer, ex.questions, ex.contexts, ex.answers if labelled else None,
                          kind.max_seq_len, kind.doc_stride, p.max_question_len)
    return feats, ex


def run_train(kind: Kind, p) -> dict:
    from transformers import AutoTokenizer

    feats, ex = windows(AutoTokenizer.from_pretrained(kind.init), kind, p, "train", labelled=True)
    cfg = TrainConfig(kind.init, p.learning_rate, p.batch_size, p.max_steps, p.warmup_ratio, p.weight_decay,
                      p.seed, p.checkpoint_every, p.device, kind.global_question)
    stats = train(feats, cfg, kind.model_dir, {**p.model_dump(), "train_windows": len(feats), "train_questions": len(ex.ids)})
    print({k: stats[k] for k in ("tokens_per_s_this_run", "resumed_from_step", "device", "precision")})
    # timings and resume points vary run to run: logged above, kept out of the metrics
    write_json(f"metrics/train_{kind.short}.json",
               {k: v for k, v in stats.items() if k not in ("tokens_per_s_this_run", "resumed_from_step")})
    return stats


def run_predict(kind: Kind, p) -> dict:
    from transformers import AutoTokenizer

    final = kind.model_dir / "final"
    feats, ex = windows(AutoTokenizer.from_pretrained(str(final)), kind, p, p.eval_split, labelled=False)
    starts, ends = predict_logits(final, feats, p.batch_size * 2, p.device, kind.global_question)
    preds = predict_from_logits(feats.example_index, feats.offset_mapping, starts, ends, ex.contexts, p.n_best,
                                p.max_answer_tokens)
    out = dict(zip(ex.ids, preds, strict=True))
    write_json(f"data/predictions/{kind.name}.json", out, indent=None)
    return {"questions": len(out), "windows": len(feats), "empty": sum(not v["text"] for v in out.values())}


def run_evaluate(kind: Kind, p) -> dict:
    dataset = json.loads(Path(f"data/splits/{p.eval_split}.json").read_text(encoding="utf-8"))
    preds = json.loads(Path(f"data/predictions/{kind.name}.json").read_text(encoding="utf-8"))
    summary, rows = evaluate(preds, dataset)
    write_json(f"metrics/{kind.name}.json", {"eval_split": p.eval_split, **summary})
    with atomic_output(f"plots/{kind.short}_f1_vs_iou.csv") as fh:
        fh.write("id,f1,iou\n")
        for r in rows:
            fh.write(f"{r['id']},{r['f1']:.4f},{r['iou']:.4f}\n")
    with atomic_output(f"plots/{kind.short}_by_document_words.csv") as fh:
        fh.write("document_words,em,f1,iou,n\n")
        for bin_, s in summary["by_document_words"].items():
            fh.write(f"{bin_},{s['em']},{s['f1']},{s['iou']},{s['n']}\n")
    return summary
