"""NLQuAD metrics on hand-computed cases, the split's grouping, and the window baselines."""

from __future__ import annotations

import pytest

from pipeline.span_qa.baselines import run_baselines, sentence_windows
from pipeline.span_qa.metrics import (
    evaluate,
    exact_match,
    f1,
    iou_positions,
    iou_string_search,
    normalize_answer,
    rouge,
)
from pipeline.span_qa.split import split_dataset, split_sizes

CTX = "The cat sat on the mat. The dog ran in the park. The cat ate the fish."
#      tokens: 0 The 1 cat 2 sat 3 on 4 the 5 mat. 6 The 7 dog 8 ran 9 in 10 the 11 park. 12 The 13 cat 14 ate 15 the 16 fish.


def span(text: str, occurrence: int = 0) -> tuple[int, int]:
    at = -1
    for _ in range(occurrence + 1):
        at = CTX.index(text, at + 1)
    return at, at + len(text)


def test_squad_normalisation_em_f1():
    assert normalize_answer("The  Cat, sat!") == "cat sat"
    assert exact_match("the cat sat", "Cat sat.") == 1.0
    # pred {cat, sat}, gold {cat, sat, on, mat}: P = 1, R = 1/2, F1 = 2/3
    assert f1("cat sat", "cat sat on the mat") == pytest.approx(2 / 3)
    assert f1("", "") == 1.0 and f1("x", "") == 0.0


def test_iou_counts_token_positions():
    gold = span("The cat sat on the mat.")           # tokens 0-5
    pred = span("on the mat. The dog ran")            # tokens 3-8
    assert iou_positions(CTX, pred, gold) == pytest.approx(3 / 9)  # {3,4,5} / {0..8}
    assert iou_positions(CTX, gold, gold) == 1.0


def test_f1_positive_but_iou_zero_like_figure_5():
    """The prediction repeats the answer's words from another place in the document."""
    gold = span("The cat sat")                        # tokens 0-2
    pred = span("The cat ate")                        # tokens 12-14: 'cat' overlaps in words only
    # normalised: {cat, ate} vs {cat, sat} ("the" is an article): P = R = 1/2
    assert f1(CTX[pred[0]:pred[1]], CTX[gold[0]:gold[1]]) == pytest.approx(1 / 2)
    assert iou_positions(CTX, pred, gold) == 0.0


def test_string_search_iou_differs_when_the_text_repeats():
    gold = span("The cat", 1)                         # the second "The cat" (tokens 12-13)
    pred = span("The cat", 1)
    assert iou_positions(CTX, pred, gold) == 1.0
    assert iou_string_search(CTX, "The cat", "The cat") == 1.0  # both resolve to the first occurrence
    off = span("cat ate the")                         # tokens 13-15
    assert iou_positions(CTX, off, gold) == pytest.approx(1 / 4)  # {13} / {12,13,14,15}
    # string search finds the gold text "The cat" at its first occurrence (tokens 0-1): no overlap at all
    assert iou_string_search(CTX, "cat ate the", CTX[gold[0]:gold[1]]) == 0.0


def test_rouge():
    r = rouge("the cat sat", "the cat sat on the mat")
    assert r["rouge1"] == pytest.approx(2 * 1 * 0.5 / 1.5)  # P 3/3, R 3/6
    assert rouge("", "x") == {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}


def _dataset():
    return {"data": [{"url": f"u{i // 2}", "title": str(i), "paragraphs": [{"context": CTX, "qas": [
        {"id": f"q{i}", "question": "Where did the dog run?",
         "answers": [{"text": "The dog ran in the park.", "answer_start": span("The dog ran in the park.")[0],
                      "answer_end": span("The dog ran in the park.")[1]}]}]}]} for i in range(20)]}


def test_evaluate_aggregates_and_breaks_down():
    ds = _dataset()
    g = span("The dog ran in the park.")
    perfect = {f"q{i}": {"text": CTX[g[0]:g[1]], "start": g[0], "end": g[1]} for i in range(20)}
    summary, rows = evaluate(perfect, ds)
    assert summary["em"] == summary["iou"] == summary["f1"] == 100.0 and summary["n"] == 20
    empty, _ = evaluate({}, ds)
    assert empty["em"] == empty["iou"] == 0.0
    assert set(summary["by_document_words"]) == {"0-299"}


def test_split_keeps_articles_together_and_is_seeded():
    ds = _dataset()
    a = split_dataset(ds, {"train": 0.8, "dev": 0.1, "test": 0.1}, seed=1)
    b = split_dataset(ds, {"train": 0.8, "dev": 0.1, "test": 0.1}, seed=1)
    assert a == b
    urls = {name: {art["url"] for art in d["data"]} for name, d in a.items()}
    assert not (urls["train"] & urls["dev"]) and not (urls["train"] & urls["test"]) and not (urls["dev"] & urls["test"])
    assert split_sizes(a) == {"train": {"documents": 16, "questions": 16}, "dev": {"documents": 2, "questions": 2},
                              "test": {"documents": 2, "questions": 2}}
    c = split_dataset(ds, {"train": 0.8, "dev": 0.1, "test": 0.1}, seed=2)
    assert c != a
    with pytest.raises(KeyError, match="group_key 'nope'"):
        split_dataset(ds, {"train": 1.0}, seed=1, group_key="nope")


def test_windows_move_by_sentence_and_baselines_pick_spans():
    windows = sentence_windows(CTX, 4)
    assert [CTX[s:e] for s, e in windows] == ["The cat sat on", "The dog ran in", "The cat ate the"]
    preds = run_baselines(_dataset(), window_words=6, seed=0)
    assert preds["bm25l"]["q0"]["text"] == "The dog ran in the park."   # the window about the dog
    assert preds["bm25l_oracle"]["q0"]["text"] == "The dog ran in the park."
    assert preds["first_window"]["q0"]["text"] == "The cat sat on the mat."
    assert preds["last_window"]["q0"]["text"] == "park. The cat ate the fish."  # the last 6 words
    for p in preds["random_window"].values():
        assert CTX[p["start"]:p["end"]] == p["text"]
