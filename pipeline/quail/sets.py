"""What the QuAIL stages share: the sets named in the benchmark manifest, the dev split by text (train share and
held-out texts), and the record a stage leaves when its inputs are missing."""

from __future__ import annotations

from pathlib import Path

from pipeline.common.manifest import read_manifest, skipped
from pipeline.common.runtime import atomic_output, get_logger, write_json
from pipeline.params import QuailParams
from pipeline.quail.data import MCQuestion, load_quail
from pipeline.quail.mc_model import split_texts


def quail_sets(p: QuailParams) -> tuple[dict[str, list[MCQuestion]], list[MCQuestion], str | None]:
    """``({"dev": ..., "challenge": ...}, dev training questions, skip reason)``. The challenge set is optional;
    dev is what everything else needs."""
    manifest = read_manifest()
    reason = skipped(manifest, "quail_dev")
    if reason:
        return {}, [], reason
    sets = {"dev": load_quail(manifest["quail_dev"]["path"])}
    if not skipped(manifest, "quail_challenge"):
        sets["challenge"] = load_quail(manifest["quail_challenge"]["path"])
    else:
        get_logger().warning("QuAIL challenge set skipped: %s", skipped(manifest, "quail_challenge"))
    train_texts, _ = split_texts(sets["dev"], p.train_share, p.seed)
    return sets, [q for q in sets["dev"] if q.text_id in train_texts], None


def heldout_dev(sets: dict[str, list[MCQuestion]], train: list[MCQuestion]) -> list[MCQuestion]:
    seen = {q.text_id for q in train}
    return [q for q in sets["dev"] if q.text_id not in seen]


def skip_outputs(reason: str, json_paths: list[str | Path], text_paths: list[str | Path] = ()) -> dict:
    get_logger().warning("skipped: %s", reason)
    for path in json_paths:
        write_json(path, {"skipped": reason})
    for path in text_paths:
        with atomic_output(path) as fh:
            fh.write(f"Skipped: {reason}\n")
    return {"skipped": reason}
