"""NLQuAD metrics on hand-computed cases, the split's grouping, and the window baselines."""

from __future__ import annotations

import pytest

from pipeline.nlquad.baselines import run_baselines, sentence_windows
from pipeline.nlquad.metrics import (
    evaluate,
    exact_match,
    f1,
    iou_positions,
    iou_script,
    normalize_answer,
    rouge,
    span_scores,
)
from pipeline.nlquad.split import split_dataset, split_sizes

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


def _literal_script_iou(context: str, gold: str, prediction: str) -> float:
    """The authors' procedure transcribed literally (character-index sets, sorted lists), to check the
    interval arithmetic of ``iou_script`` against: same inputs, same number."""
    from nltk.tokenize import word_tokenize

    def jaccard(pred: str) -> float:
        text = " ".join(word_tokenize(context)).lower()
        g = " ".join(word_tokenize(gold)).lower()
        p = " ".join(word_tokenize(pred)).lower()

        def chars(piece: str) -> set[int]:
            if piece == "":
                return set()
            start, end = text.find(piece), len(text) - text[::-1].find(piece[::-1])
            return set() if start == -1 or end == -1 else set(range(start, end))

        inter, union = sorted(chars(p) & chars(g)), sorted(chars(p) | chars(g))
        n_i = len(word_tokenize(text[inter[0]:inter[-1] + 1] if inter else ""))
        n_u = len(word_tokenize(text[union[0]:union[-1] + 1] if union else ""))
        return 1.0 if n_i == 0 and n_u == 0 else n_i / n_u

    pred = prediction.strip()
    score = jaccard(pred)
    return jaccard(pred[0:-5]) if score == 0 else score


CLITICS = "It's the end. Isn't it?"
#  whitespace tokens: It's | the | end. | Isn't | it?                       (5)
#  NLTK tokens, lower-cased: it 's the end . is n't it ?                     (9)


def test_script_iou_counts_nltk_tokens_not_whitespace_tokens():
    gold, pred = "It's the end.", "the end. Isn't it?"
    g, p = (0, len(gold)), (CLITICS.index(pred), len(CLITICS))
    assert iou_positions(CLITICS, p, g) == pytest.approx(2 / 5)  # {the, end.} / all 5 whitespace tokens
    assert iou_script(CLITICS, pred, gold) == pytest.approx(3 / 9)  # {the, end, .} / all 9 NLTK tokens
    assert iou_script(CLITICS, pred, gold) == _literal_script_iou(CLITICS, gold, pred)


def test_script_iou_is_case_blind_and_spans_first_to_last_occurrence():
    ctx = "The cat sat. The dog ran. The cat sat."
    gold = "The dog ran."
    # the prediction is the third sentence; the script's span for "the cat sat ." runs from its first
    # occurrence to the end of its last, so it covers the whole document and contains the gold answer
    pred_span = (ctx.rindex("The cat sat."), len(ctx))
    assert iou_positions(ctx, pred_span, (13, 25)) == 0.0
    assert iou_script(ctx, "The cat sat.", gold) == pytest.approx(4 / 12)
    assert iou_script(ctx, "THE DOG RAN.", gold) == 1.0


def test_script_iou_empty_answers_and_the_five_character_retry():
    ctx = "The cat sat. The dog ran."
    assert iou_script(ctx, "", "") == 1.0  # both empty
    assert iou_script(ctx, "", "The dog ran.") == 0.0  # nothing predicted: the retry is empty too
    # not in the document as predicted; cutting the last 5 characters ("XYZZY") finds it
    assert iou_script(ctx, "The dog ran. XYZZY", "The dog ran.") == 1.0
    assert iou_script(ctx, "The dog ran. XYZZYXX", "The dog ran.") == 0.0  # 5 characters are not enough
    for pred in ("The dog ran. XYZZY", "dog ran. The", "cat", "sat. The dog"):
        assert iou_script(ctx, pred, "The dog ran.") == _literal_script_iou(ctx, "The dog ran.", pred)


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


def test_span_scores_are_evaluates_figures_in_its_order():
    """compare and the calibration read span_scores instead of evaluate's rows: the same EM, F1 and IoU per
    question, in the same order (the paired bootstrap lines questions up by position)."""
    ds = _dataset()
    g, o = span("The dog ran in the park."), span("The cat ate the fish.")
    preds = {f"q{i}": ({"text": CTX[g[0]:g[1]], "start": g[0], "end": g[1]} if i % 3 == 0 else
                       {"text": CTX[o[0]:o[1]], "start": o[0], "end": o[1]} if i % 3 == 1 else
                       {"text": "the dog", "start": g[0], "end": g[0] + 7}) for i in range(19)}  # q19: none
    rows = evaluate(preds, ds)[1]
    scores = span_scores(preds, ds)
    assert list(scores) == [r["id"] for r in rows]
    assert scores == {r["id"]: {k: r[k] for k in ("em", "f1", "iou")} for r in rows}
    # exact, partial (F1 0.4, IoU 1/3), and nothing shared (another sentence; no prediction)
    assert len({(s["em"], s["f1"], s["iou"]) for s in scores.values()}) == 3


def test_split_keeps_articles_together_and_is_seeded():
    ds = _dataset()
    a = split_dataset(ds, {"train": 0.8, "dev": 0.1, "test": 0.1}, seed=1, group_key="url")
    b = split_dataset(ds, {"train": 0.8, "dev": 0.1, "test": 0.1}, seed=1, group_key="url")
    assert a == b
    urls = {name: {art["url"] for art in d["data"]} for name, d in a.items()}
    assert not (urls["train"] & urls["dev"]) and not (urls["train"] & urls["test"]) and not (urls["dev"] & urls["test"])
    assert split_sizes(a) == {"train": {"documents": 16, "questions": 16}, "dev": {"documents": 2, "questions": 2},
                              "test": {"documents": 2, "questions": 2}}
    c = split_dataset(ds, {"train": 0.8, "dev": 0.1, "test": 0.1}, seed=2, group_key="url")
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


def test_script_iou_equals_the_literal_procedure_on_a_real_article(shared):
    """120 seeded prediction/gold pairs cut from a real BBC article (word-aligned and ragged cuts, spans that
    overlap, nest, repeat or miss): the interval arithmetic equals the character-set transcription."""
    import random

    from tests.extract_helpers import extract_page

    ex = extract_page((shared / "fixtures/bbc/bbc_2022-10-10_explainers-63159607.html").read_bytes(),
                      "https://www.bbc.com/news/explainers-63159607")
    ctx = " ".join(ex.intro + [p for s in ex.sections for p in s.paragraphs])
    rng = random.Random(13)
    for _ in range(120):
        a, b = sorted(rng.sample(range(len(ctx)), 2))
        c, d = sorted(rng.sample(range(len(ctx)), 2))
        gold = ctx[a:b] if rng.random() < 0.5 else ctx[ctx.rfind(" ", 0, a) + 1:ctx.find(" ", b) % len(ctx)]
        pred = ctx[c:d] if rng.random() < 0.8 else ctx[c:d] + " no such words"
        assert iou_script(ctx, pred, gold) == pytest.approx(_literal_script_iou(ctx, gold, pred), abs=0), (pred, gold)


def test_punkt_data_installs_offline_and_its_absence_is_named(tmp_path, monkeypatch):
    import nltk

    from pipeline.nlquad import punkt_data

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    with pytest.raises(punkt_data.PunktDataMissing, match="make setup"):
        punkt_data.ensure()
    target = punkt_data.install(tmp_path)
    assert sorted(p.name for p in target.iterdir()) == sorted(punkt_data.FILES)
    punkt_data.ensure()
    from nltk.tokenize import word_tokenize

    assert word_tokenize("Mr. Smith isn't here. He left.") == ["Mr.", "Smith", "is", "n't", "here", ".", "He",
                                                               "left", "."]
    punkt_data.install(tmp_path)  # again, over the first: replaced whole
    assert sorted(p.name for p in target.parent.iterdir()) == ["english"]
