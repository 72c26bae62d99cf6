"""Reproducible article-level splits: an article's questions never span two splits."""

from __future__ import annotations

import random
from typing import Any

from pipeline.nlquad.squad_format import iter_qas


def split_dataset(dataset: dict[str, Any], ratios: dict[str, float], seed: int, group_key: str
                  ) -> dict[str, dict[str, Any]]:
    """Shuffle groups (articles, by ``group_key``) with ``seed`` and cut them by ``ratios`` in order.

    Groups are sorted before shuffling, so the result depends only on the data and the seed, not on the
    order articles arrived in. Split sizes are rounded down except the last, which takes the remainder.
    """
    groups: dict[str, list[dict]] = {}
    for art in dataset["data"]:
        if group_key not in art:
            raise KeyError(f"split.group_key {group_key!r} is not a field of the articles (have: {sorted(art)})")
        groups.setdefault(str(art[group_key]), []).append(art)
    keys = sorted(groups)
    random.Random(seed).shuffle(keys)
    names = list(ratios)
    total = sum(ratios.values())
    out, start = {}, 0
    for i, name in enumerate(names):
        end = len(keys) if i == len(names) - 1 else start + int(len(keys) * ratios[name] / total)
        out[name] = {"version": dataset.get("version"), "data": [a for k in keys[start:end] for a in groups[k]]}
        start = end
    return out


def split_sizes(splits: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    return {name: {"documents": len(d["data"]),
                   "questions": sum(1 for _ in iter_qas(d))}
            for name, d in splits.items()}
