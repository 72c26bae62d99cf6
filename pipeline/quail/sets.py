"""What the QuAIL stages share: the sets named in the benchmark manifest and the dev split by text (train share
and held-out texts)."""

from __future__ import annotations

from pipeline.common.manifest import read_manifest, source_path
from pipeline.quail.data import MCQuestion, load_quail
from pipeline.quail.mc_model import split_texts


def quail_sets(train_share: float, seed: int) -> tuple[dict[str, list[MCQuestion]], list[MCQuestion]]:
    """``({"dev": ..., "challenge": ...}, dev training questions)``: the dev texts split ``train_share`` /
    held out, per domain, with ``seed`` (``quail.train_share``, ``quail.seed``)."""
    manifest = read_manifest()
    sets = {name: load_quail(source_path(manifest, f"quail_{name}")) for name in ("dev", "challenge")}
    train_texts, _ = split_texts(sets["dev"], train_share, seed)
    return sets, [q for q in sets["dev"] if q.text_id in train_texts]


def heldout_dev(sets: dict[str, list[MCQuestion]], train: list[MCQuestion]) -> list[MCQuestion]:
    seen = {q.text_id for q in train}
    return [q for q in sets["dev"] if q.text_id not in seen]

