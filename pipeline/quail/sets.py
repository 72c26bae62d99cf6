"""What the QuAIL stages share: the sets named in the benchmark manifest and the dev split by text (train share
and held-out texts). Plain Python: the heuristics and the difficulty study read it without the trainer."""

from __future__ import annotations

import random

from pipeline.common.manifest import source_path
from pipeline.quail.data import MCQuestion, load_quail


def quail_sets(train_share: float, seed: int) -> tuple[dict[str, list[MCQuestion]], list[MCQuestion]]:
    """``({"dev": ..., "challenge": ...}, dev training questions)``: the dev texts split ``train_share`` /
    held out, per domain, with ``seed`` (``quail.train_share``, ``quail.seed``)."""
    sets = {"dev": load_quail(source_path("quail_dev")), "challenge": load_quail(source_path("quail_challenge"))}
    train_texts, _ = split_texts(sets["dev"], train_share, seed)
    return sets, [q for q in sets["dev"] if q.text_id in train_texts]


def heldout_dev(sets: dict[str, list[MCQuestion]], train: list[MCQuestion]) -> list[MCQuestion]:
    seen = {q.text_id for q in train}
    return [q for q in sets["dev"] if q.text_id not in seen]


def split_texts(questions: list[MCQuestion], train_share: float, seed: int) -> tuple[set[str], set[str]]:
    """Texts (not questions) go to train or held-out, within each domain, so no passage is in both."""
    rng = random.Random(seed)
    train, held = set(), set()
    by_domain: dict[str, list[str]] = {}
    for q in questions:
        ids = by_domain.setdefault(q.domain, [])
        if q.text_id not in ids:
            ids.append(q.text_id)
    for domain in sorted(by_domain):
        ids = sorted(by_domain[domain])
        rng.shuffle(ids)
        cut = round(len(ids) * train_share)
        train.update(ids[:cut])
        held.update(ids[cut:])
    return train, held
