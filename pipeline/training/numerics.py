"""How a training or prediction run computes: its device, its autocast dtype, its attention kernel and dropout.

Apart from the loop because these are the choices that make two processors train different weights from the
same params (bf16 native or emulated, thread counts, fused or plain attention), each measured and documented
where it is made; the loop (``pipeline.training.finetune``) asks them and runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from pipeline.training.model_names import resolve_model_path

if TYPE_CHECKING:
    from pipeline.training.finetune import TrainConfig


def cpu_has_native_bf16() -> bool:
    """Whether this processor computes bfloat16 in hardware (AVX512-BF16 or AMX-BF16: Intel Sapphire Rapids and
    later, AMD Zen 4 and later). Elsewhere bf16 autocast is emulated and slower than float32."""
    capabilities = getattr(torch.cpu, "get_capabilities", None)  # torch >= 2.8
    if capabilities is not None:
        caps = capabilities()
        return bool(caps.get("avx512_bf16") or caps.get("amx_bf16"))
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


AMP = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


def pick_device(requested: str = "auto", precision: str = "auto",
                cpu_threads: int | None = None) -> tuple[torch.device, torch.dtype | None]:
    """The device and the autocast dtype (None: float32). ``precision: auto`` takes bf16 where the hardware
    computes it natively (a GPU that supports it, or a CPU with AVX512-BF16/AMX), fp16 with loss scaling on a
    GPU without bf16, float32 on any other CPU. Weights and optimizer state stay float32 either way. On a CPU,
    torch runs ``cpu_threads`` threads (the section's ``cpu_threads``): its matrix products split their sums
    by thread count, so a machine with more cores would otherwise train other weights from the same params."""
    if requested == "cpu" or (requested == "auto" and not torch.cuda.is_available()):
        device = torch.device("cpu")
        if cpu_threads is not None:
            torch.set_num_threads(cpu_threads)
        if precision == "fp16":
            raise ValueError("precision fp16 needs a GPU (loss scaling is a CUDA feature); use bf16 or fp32 on CPU")
        if precision == "auto":
            return device, torch.bfloat16 if cpu_has_native_bf16() else None
        return device, AMP[precision]
    device = torch.device("cuda")
    if precision == "auto":
        return device, torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if precision == "bf16" and not torch.cuda.is_bf16_supported():
        raise ValueError(f"precision bf16: {torch.cuda.get_device_name(0)} does not support bfloat16; use fp16")
    return device, AMP[precision]


MIXED_PRECISION = {None: "no", torch.bfloat16: "bf16", torch.float16: "fp16"}  # Accelerate's names


def training_attention(cfg: "TrainConfig") -> dict[str, str]:
    """``from_pretrained`` keywords for the attention kernel the section's ``attention_kernel`` names (``auto``:
    none, the model's own default). Why a knob: both kernels compute the same attention, only the rounding
    differs, but their speed does not agree across shapes: on a CPU with bf16 autocast, the plain matrix products
    (``eager``) trained the 128-token classification and multiple-choice batches 1.03-1.38x faster than PyTorch's
    fused ``scaled_dot_product_attention`` (even where eager's no-gradient pass was the slower one, QuAIL's), and
    the 384-token span windows slower (benchmarks/results/attention_cpu.json). The GPU profile keeps ``auto``."""
    return {} if cfg.attention_kernel == "auto" else {"attn_implementation": cfg.attention_kernel}


ATTENTION_DROPOUT_KEYS = ("attention_probs_dropout_prob", "attention_dropout")  # BERT/RoBERTa/Longformer; DistilBERT


def with_attention_dropout(cfg: "TrainConfig", model_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``from_pretrained`` keyword arguments with the section's attention dropout set in the model config
    under the name its architecture reads; None leaves the model's own. Why a knob at all: on a CPU the
    dropout mask over every attention probability (batch x heads x length^2 per layer) is costly: its
    random-number generation (aten::bernoulli_) was 30% of a 384-token span step, and the step took 2.3x as
    long with the dropout as without (benchmarks/results/training_precision_cpu.json)."""
    if cfg.attention_dropout is None:
        return model_kwargs
    from transformers import AutoConfig

    if "config" in model_kwargs:
        raise ValueError("attention_dropout is set on the config fine_tune loads; pass config overrides as keywords")
    # every keyword our callers pass (num_labels, id2label, label2id) is a config override
    config = AutoConfig.from_pretrained(resolve_model_path(cfg.model_name_or_path), **model_kwargs)
    keys = [k for k in ATTENTION_DROPOUT_KEYS if hasattr(config, k)]
    if not keys:
        raise ValueError(f"attention_dropout: the {config.model_type} config has none of {ATTENTION_DROPOUT_KEYS}; "
                         "set attention_dropout: null")
    for key in keys:
        setattr(config, key, cfg.attention_dropout)
    return {"config": config}
