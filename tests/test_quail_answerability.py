"""QuAIL answerability: a bias on the "not enough information" option, chosen on selection-dev only."""

from __future__ import annotations

from pipeline.quail.answerability import GRID, choose_bias, nei_index, picks, selection_dev
from pipeline.quail.data import MCQuestion

OPTIONS = ("the dog", "not enough information", "the cat", "a bird")


def _q(qid: str, answer: int, text: str = "t1", options: tuple[str, ...] = OPTIONS) -> MCQuestion:
    return MCQuestion(qid, text, "news", "Unanswerable" if answer == 1 else "Factual", "Who?", options, answer, "")


def test_the_bias_moves_only_the_not_enough_information_option():
    q = _q("a", 1)
    assert nei_index(q) == 1 and nei_index(_q("b", 0, options=("x", "y", "z", "w"))) is None
    assert picks([[2.0, 1.0, 0.5, 0.0]], [q], 0.0) == [0]
    assert picks([[2.0, 1.0, 0.5, 0.0]], [q], 1.5) == [1]
    assert picks([[2.0, 1.0, 0.5, 0.0]], [_q("b", 0, options=("x", "y", "z", "w"))], 5.0) == [0]  # no such option


def test_the_bias_is_the_one_that_helps_on_selection_dev_and_zero_when_nothing_helps():
    # four unanswerable questions whose NEI score is 0.8-1.2 below the top; six answerable ones 2+ ahead of NEI
    questions = [_q(f"u{i}", 1) for i in range(4)] + [_q(f"a{i}", 0) for i in range(6)]
    logits = [[2.0, 2.0 - d, 0.0, 0.0] for d in (0.8, 0.9, 1.0, 1.2)] + [[3.0, 0.5, 0.0, 0.0]] * 6
    chosen = choose_bias(logits, questions)
    assert chosen["bias"] == 1.25  # the smallest bias that wins all four, still below the answerable margin (2.5)
    assert (chosen["selection_dev_accuracy"], chosen["selection_dev_accuracy_bias_0"]) == (100.0, 60.0)
    assert chosen["selection_dev_nei_picked"] == 40.0 and chosen["selection_dev_nei_picked_bias_0"] == 0.0
    answerable = [_q(f"a{i}", 0) for i in range(5)]
    assert choose_bias([[3.0, 0.5, 0.0, 0.0]] * 5, answerable)["bias"] == 0.0  # nothing to gain: the model as trained
    assert 0.0 in GRID and min(GRID) < 0 < max(GRID)


def test_selection_dev_is_the_texts_the_checkpoint_was_chosen_on(shared, repo, monkeypatch):
    """The predict stage chooses the bias on exactly the questions train_quail_mc selected its checkpoint on,
    never on a held-out text."""
    from pipeline.params import load_params
    from pipeline.quail.sets import heldout_dev, quail_sets
    from pipeline.stages.train_quail_mc import fit_and_select

    monkeypatch.chdir(repo)
    params = load_params(repo / "params.yaml")
    sets, train = quail_sets(params.quail.train_share, params.quail.seed, params.quail.exclude_from_heldout)
    mine = selection_dev(train, params.quail_mc.dev_share, params.quail_mc.seed)
    assert [q.qid for q in mine] == [q.qid for q in fit_and_select(params)[1]]
    assert not {q.text_id for q in mine} & {q.text_id for q in heldout_dev(sets, train)}
