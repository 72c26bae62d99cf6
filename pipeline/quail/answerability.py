"""When to answer "not enough information": one bias on that option's score, chosen on selection-dev.

Every QuAIL question offers "not enough information" and it is right for 11% of them (the Unanswerable type).
A multiple-choice model trained with cross-entropy over the four options learns to rank the three content
options above it for almost every question: on the CPU budget it picked it for none, and Unanswerable
accuracy was 0.0 for every variant. The paper's BERT reaches 54.2% on that type with an answerability step.

Here the step is the simplest decision that can be chosen without touching an eval set: add ``bias`` to the
logit of the question's "not enough information" option before the argmax. ``bias`` is chosen on the
selection-dev questions (texts carved out of the training share, the ones the checkpoint was chosen on) by
accuracy over all their questions, from a fixed grid that includes 0, so a model whose picks it cannot improve
keeps them; ties go to the bias nearest 0. The held-out dev texts and the challenge set only receive it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.quail.data import NOT_ENOUGH_INFO, MCQuestion
from pipeline.quail.sets import split_texts

# logit offsets tried on selection-dev: 0 (the model as trained) and steps of 0.25 up to 6 either way
GRID = tuple(round(0.25 * i, 2) for i in range(-24, 25))


def selection_dev(train: Sequence[MCQuestion], dev_share: float, seed: int) -> list[MCQuestion]:
    """The training share's texts carved out to choose the checkpoint (``train_quail_mc``: by text, per domain,
    seeded with ``quail_mc.seed``); a test holds the two to the same questions."""
    fit_texts, _ = split_texts(list(train), 1 - dev_share, seed)
    return [q for q in train if q.text_id not in fit_texts]


def nei_index(q: MCQuestion) -> int | None:
    """The index of the question's "not enough information" option (QuAIL words it the same everywhere)."""
    found = [i for i, o in enumerate(q.options) if o.strip().lower().rstrip(".") == NOT_ENOUGH_INFO]
    return found[0] if len(found) == 1 else None


def picks(logits: Sequence[Sequence[float]], questions: Sequence[MCQuestion], bias: float) -> list[int]:
    """The argmax of each question's option logits after adding ``bias`` to its "not enough information"
    option (the first option wins a tie, as ``choice_model.argmax``)."""
    out = []
    for row, q in zip(logits, questions, strict=True):
        nei = nei_index(q)
        scores = [v + (bias if i == nei else 0.0) for i, v in enumerate(row)]
        out.append(max(range(len(scores)), key=lambda i: (scores[i], -i)))
    return out


def choose_bias(logits: Sequence[Sequence[float]], questions: Sequence[MCQuestion]) -> dict:
    """The grid's bias with the best selection-dev accuracy (nearest 0 among ties), with the accuracy it
    gives and the model's own (bias 0), and how often each answers "not enough information"."""
    keyed = [(row, q) for row, q in zip(logits, questions, strict=True) if q.answer is not None]
    if not keyed:
        raise ValueError("no selection-dev question has an answer key to choose the bias on")
    rows, qs = [r for r, _ in keyed], [q for _, q in keyed]

    def accuracy(bias: float) -> float:
        return 100.0 * sum(p == q.answer for p, q in zip(picks(rows, qs, bias), qs)) / len(qs)

    def nei_share(bias: float) -> float:
        return 100.0 * sum(p == nei_index(q) for p, q in zip(picks(rows, qs, bias), qs)) / len(qs)

    scored = {b: accuracy(b) for b in GRID}
    best = max(GRID, key=lambda b: (scored[b], -abs(b), -b))
    return {"bias": best, "selection_dev_questions": len(qs),
            "selection_dev_accuracy": round(scored[best], 2), "selection_dev_accuracy_bias_0": round(scored[0.0], 2),
            "selection_dev_nei_picked": round(nei_share(best), 2), "selection_dev_nei_picked_bias_0": round(nei_share(0.0), 2),
            "selection_dev_nei_right": round(100.0 * sum(q.answer == nei_index(q) for q in qs) / len(qs), 2)}
