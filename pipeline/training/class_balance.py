"""Training examples drawn so that a yes/no model's loss does not reward the label prior.

Why: with cross-entropy summed over training examples, a classifier that has not yet learnt to read lowers its
loss fastest by moving its bias toward the majority answer; on BoolQ's dev split (62% "yes") every checkpoint
chosen so far answered "yes" everywhere. With ``oversample`` the rarer answer's examples are repeated until the
two answers are as many: a constant answer's expected loss is then ln 2, the same as a coin, and the only way
below it is to tell the answers apart. The repeats are spread evenly over the rarer class's examples (each is
repeated ``floor`` or ``ceil`` of the same ratio), so the drawn set is a function of the labels alone and the
loop's seeded shuffle stays the only randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import get_args

from pipeline.training.config import ClassBalance


def balanced_index(labels: Sequence[int], balance: ClassBalance) -> list[int]:
    """Example indices the training loop draws from: ``range(len(labels))`` under ``none``; under ``oversample``
    those followed by repeats of every class short of the largest one, spread evenly over that class's
    examples in index order."""
    if balance not in get_args(ClassBalance):
        raise ValueError(f"class_balance {balance!r}: {' or '.join(get_args(ClassBalance))}")
    index = list(range(len(labels)))
    if balance == "none" or not labels:
        return index
    by_class: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        by_class.setdefault(label, []).append(i)
    most = max(len(members) for members in by_class.values())
    for label in sorted(by_class):
        members = by_class[label]
        short = most - len(members)
        index += [members[(k * len(members)) // short] for k in range(short)] if short else []
    return index
