"""Text pairs for sequence classification and multiple choice, tokenized once and batched by index.

Both the StrategyQA yes/no classifier and the QuAIL multiple-choice model read ``[CLS] a [SEP] b [SEP]``
(or ``[CLS] a [SEP]``); multiple choice stacks one pair per option. Truncation is ``longest_first``: the
long side (the passage or the retrieved paragraphs) gives way first, so the question and option survive.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pipeline.training.batches import pad


@dataclass
class PairFeatures:
    input_ids: list[list[int]]
    attention_mask: list[list[int]]
    token_type_ids: list[list[int]]
    truncated: int  # how many pairs lost tokens to max_len

    def __len__(self) -> int:
        return len(self.input_ids)


def encode_pairs(tokenizer, first: list[str], second: list[str] | None, max_len: int) -> PairFeatures:
    if second is not None and len(second) != len(first):
        raise ValueError(f"{len(first)} first texts but {len(second)} second texts")
    kwargs = {"truncation": "longest_first", "max_length": max_len, "return_overflowing_tokens": False}
    enc = tokenizer(first, second, **kwargs) if second is not None else tokenizer(first, **kwargs)
    # untruncated lengths, only to count what was cut (verbose=False: no "longer than 512" warning)
    full = tokenizer(first, second, verbose=False) if second is not None else tokenizer(first, verbose=False)
    truncated = sum(len(a) < len(b) for a, b in zip(enc["input_ids"], full["input_ids"], strict=True))
    types = enc.get("token_type_ids") or [[0] * len(x) for x in enc["input_ids"]]
    return PairFeatures(enc["input_ids"], enc["attention_mask"], types, truncated)


def collate_pairs(feats: PairFeatures, idx: list[int], pad_id: int, token_types: bool = True,
                  labels: list[int] | None = None, choices: int = 1) -> dict[str, torch.Tensor]:
    """Batch examples ``idx``; with ``choices > 1`` example ``i`` is rows ``i*choices .. i*choices+choices-1``
    and tensors come out ``(batch, choices, length)`` as ``AutoModelForMultipleChoice`` expects."""
    rows = [i * choices + c for i in idx for c in range(choices)]
    batch = {"input_ids": pad([feats.input_ids[r] for r in rows], pad_id),
             "attention_mask": pad([feats.attention_mask[r] for r in rows], 0)}
    if token_types:
        batch["token_type_ids"] = pad([feats.token_type_ids[r] for r in rows], 0)
    if choices > 1:
        batch = {k: v.view(len(idx), choices, -1) for k, v in batch.items()}
    if labels is not None:
        batch["labels"] = torch.tensor([labels[i] for i in idx])
    return batch
