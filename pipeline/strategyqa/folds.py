"""k-fold cross-validation over every labelled StrategyQA question (train + dev), by question.

The official dev set has 229 questions: a paired 95% interval on it is about +-9 points, wider than every
difference the paper's Table 5 reports. Cross-validation scores each of the 2,290 labelled questions exactly
once, by a model that never saw it: fold ``f``'s questions are predicted by a model trained on the other folds,
whose checkpoint is chosen on a seeded share of *those* folds (``strategyqa_qa.dev_share``), so no question
a model is scored on helps choose it. Folds are drawn over question ids once, for every setting alike, so two
settings' out-of-fold answers pair question by question.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.strategyqa.answering import split_off_dev
from pipeline.strategyqa.data import StrategyQuestion

# settings whose every labelled question has its context in both the train and the eval runs of
# strategyqa_contexts. IR-D is not among them: BART-DECOMP's predicted decompositions exist for the dev questions
# only, so a training question in an eval fold would be retrieved with its gold steps (IR-ORA-D, not IR-D).
CV_SETTINGS = ("question_only", "ir_q", "ir_ora_d", "ora_p", "ctl_facts", "ctl_ora_p1")


@dataclass(frozen=True)
class FoldSplit:
    """One fold's questions: what the model trains on, chooses its checkpoint on, and is scored on."""

    fold: int
    train: list[StrategyQuestion]
    dev: list[StrategyQuestion]
    test: list[StrategyQuestion]


def labelled_pool(*files: Sequence[StrategyQuestion]) -> list[StrategyQuestion]:
    """Every question of the given files, once; a question id found twice, or a question without an answer,
    is refused by name (a duplicate would sit in two folds, one training on what the other scores)."""
    seen: dict[str, StrategyQuestion] = {}
    for questions in files:
        for q in questions:
            if q.qid in seen:
                raise ValueError(f"StrategyQA question {q.qid!r} appears twice among the labelled files")
            if q.answer is None:
                raise ValueError(f"StrategyQA question {q.qid!r} has no yes/no answer: cross-validation needs "
                                 "labelled questions only")
            seen[q.qid] = q
    return list(seen.values())


def assign_folds(qids: Sequence[str], folds: int, seed: int) -> dict[str, int]:
    """``{qid: fold}``: ids sorted, shuffled by ``seed``, dealt round-robin, so fold sizes differ by one at most
    and the assignment does not depend on the files' order."""
    if folds < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {folds}")
    ids = sorted(set(qids))
    if len(ids) < folds:
        raise ValueError(f"{len(ids)} question(s) cannot fill {folds} folds")
    random.Random(seed).shuffle(ids)
    return {qid: i % folds for i, qid in enumerate(ids)}


def fold_split(questions: Sequence[StrategyQuestion], assignment: dict[str, int], fold: int, dev_share: float,
               seed: int) -> FoldSplit:
    """Fold ``fold`` scored; the others trained on, less the seeded dev share that chooses the checkpoint."""
    test = [q for q in questions if assignment[q.qid] == fold]
    rest = [q for q in questions if assignment[q.qid] != fold]
    train, dev = split_off_dev(rest, dev_share, seed)
    return FoldSplit(fold, train, dev, test)


def fold_sizes(assignment: dict[str, int]) -> list[int]:
    counts = Counter(assignment.values())
    return [counts[f] for f in range(max(counts) + 1)] if counts else []
