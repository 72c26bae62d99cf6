"""What the QuAIL stages share: the sets named in the benchmark manifest and the dev split by text (train share
and held-out texts). Plain Python: the heuristics and the difficulty study read it without the trainer."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from pipeline.common.manifest import source_path
from pipeline.quail.data import MCQuestion, load_quail

if TYPE_CHECKING:
    from pipeline.quail.config import HeldoutExclusion


def quail_sets(train_share: float, seed: int, exclude: HeldoutExclusion | None = None
               ) -> tuple[dict[str, list[MCQuestion]], list[MCQuestion]]:
    """``({"dev": ..., "challenge": ...}, dev training questions)``: the dev texts split ``train_share`` /
    held out, per domain, with ``seed`` (``quail.train_share``, ``quail.seed``); with ``exclude``
    (``quail.exclude_from_heldout``) the held-out texts are drawn only from texts no earlier choice was made on."""
    sets = {"dev": load_quail(source_path("quail_dev")), "challenge": load_quail(source_path("quail_challenge"))}
    touched = None if exclude is None else touched_texts(sets["dev"], train_share, exclude)
    train_texts, _ = split_texts(sets["dev"], train_share, seed, touched)
    return sets, [q for q in sets["dev"] if q.text_id in train_texts]


def touched_texts(questions: list[MCQuestion], train_share: float, exclude: HeldoutExclusion) -> set[str]:
    """The texts an earlier build chose on: its held-out texts (split seed ``exclude.split_seed``: the input
    format and an early budget were chosen on them) and the selection-dev texts its choices were made on
    (``exclude.selection_seed``'s share ``exclude.selection_share`` of its training texts: the step budget)."""
    train, held = split_texts(questions, train_share, exclude.split_seed)
    _, selection = split_texts([q for q in questions if q.text_id in train], 1 - exclude.selection_share,
                               exclude.selection_seed)
    return held | selection


def heldout_dev(sets: dict[str, list[MCQuestion]], train: list[MCQuestion]) -> list[MCQuestion]:
    seen = {q.text_id for q in train}
    return [q for q in sets["dev"] if q.text_id not in seen]


def split_texts(questions: list[MCQuestion], train_share: float, seed: int,
                touched: set[str] | None = None) -> tuple[set[str], set[str]]:
    """Texts (not questions) go to train or held-out, within each domain, so no passage is in both. With
    ``touched``, a domain's held-out texts (as many as without it) are drawn only from the texts not in it, and
    the touched ones train; a domain without enough untouched texts is an error naming it."""
    rng = random.Random(seed)
    train, held = set(), set()
    by_domain: dict[str, list[str]] = {}
    for q in questions:
        ids = by_domain.setdefault(q.domain, [])
        if q.text_id not in ids:
            ids.append(q.text_id)
    for domain in sorted(by_domain):
        ids = sorted(by_domain[domain])
        cut = round(len(ids) * train_share)
        if touched is None:
            rng.shuffle(ids)
            train.update(ids[:cut])
            held.update(ids[cut:])
            continue
        fresh = [i for i in ids if i not in touched]
        if len(fresh) < len(ids) - cut:
            raise ValueError(f"QuAIL domain {domain!r}: {len(fresh)} texts no earlier choice touched, "
                             f"{len(ids) - cut} needed for its held-out share")
        rng.shuffle(fresh)
        chosen = set(fresh[:len(ids) - cut])
        held.update(chosen)
        train.update(i for i in ids if i not in chosen)
    return train, held
