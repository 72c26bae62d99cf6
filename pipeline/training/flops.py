"""Model FLOPs per training token and the accelerators' peaks: what a tokens/s figure means as utilisation.

One formula for the throughput benchmark and the offline node's profile: 6 N over the non-embedding weights
(forward and backward) plus 12 L s d for attention, the usual estimate for a BERT-family encoder.
"""

from __future__ import annotations

PEAK_FLOPS = {"H100": 989e12, "H200": 989e12, "A100": 312e12}  # dense bf16 tensor-core peaks, by device name


def flops_per_token(config, seq_len: int) -> float:
    """Training FLOPs per token of a transformers ``config`` (hidden_size, intermediate_size, num_hidden_layers)."""
    per_layer = 4 * config.hidden_size ** 2 + 2 * config.hidden_size * config.intermediate_size
    return 6 * config.num_hidden_layers * per_layer + 12 * config.num_hidden_layers * seq_len * config.hidden_size


def peak_flops(device: str) -> float | None:
    """The bf16 peak of a device by its name (``torch.cuda.get_device_name``); None where unknown (CPUs)."""
    return next((v for k, v in PEAK_FLOPS.items() if k in device), None)
