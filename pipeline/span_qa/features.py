"""Sliding-window features for BERT/RoBERTa-style extractive QA, as the NLQuAD baselines build them.

Each window is ``[CLS] question [SEP] context[s : s + budget] [SEP]`` (the model's own special tokens), where
``budget = max_seq_len - len(question) - specials`` and window starts move by ``doc_stride`` tokens: the
stride is the *step* between windows, not HF's overlap. (HF's ``stride=`` is an overlap applied with one
``max_length`` for a whole batch, so with questions of different lengths the step would vary; building the
windows from one tokenisation of each document keeps the step exact and tokenises every document once.)

Labels (``answer_windows``): ``every`` (the NLQuAD paper's): in every window the gold answer's token span
clipped to the window; ``fullest``: only in the windows of a question that hold the most of its answer (all of
it where a window does), every other window pointing at CLS. A window without any part of the answer points at
the CLS position (0, 0). Why ``fullest``: NLQuAD's answers are whole sections, longer than a window's step, so
under ``every`` most positive windows hold a piece cut by the window's own edges, and the labels teach "from
the window's first token to its last" wherever an answer runs on; a model can learn that without the question.
``offset_mapping`` keeps character offsets for context tokens and ``None``
elsewhere, so predictions map back to exact substrings of the document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

AnswerWindows = Literal["every", "fullest"]


@dataclass
class WindowFeatures:
    input_ids: list[list[int]] = field(default_factory=list)
    attention_mask: list[list[int]] = field(default_factory=list)
    token_type_ids: list[list[int]] = field(default_factory=list)
    offset_mapping: list[list[tuple[int, int] | None]] = field(default_factory=list)
    example_index: list[int] = field(default_factory=list)
    start_positions: list[int] = field(default_factory=list)
    end_positions: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.input_ids)


def _token_span(offsets: list[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """First and last context token overlapping characters [start, end)."""
    first = next((i for i, (s, e) in enumerate(offsets) if e > start), None)
    last = next((i for i in range(len(offsets) - 1, -1, -1) if offsets[i][0] < end), None)
    if first is None or last is None or last < first:
        return None
    return first, last


def build_windows(tokenizer, questions: list[str], contexts: list[str],
                  answers: list[tuple[int, int] | None] | None, max_seq_len: int, doc_stride: int | None,
                  max_question_len: int, answer_windows: AnswerWindows = "every") -> WindowFeatures:
    """Windows for every (question, context); ``answers`` are character spans, or None at prediction time.

    ``doc_stride=None``: each window starts where the previous one's context ended (no overlap, no gap), the
    step being that example's own context budget; the Longformer's way past ``max_seq_len``."""
    if doc_stride is not None and doc_stride <= 0:
        raise ValueError(f"doc_stride must be positive, got {doc_stride}")
    if answer_windows not in ("every", "fullest"):
        raise ValueError(f"answer_windows {answer_windows!r}: every or fullest")
    q_enc = tokenizer(questions, add_special_tokens=False, truncation=True, max_length=max_question_len)
    c_enc = tokenizer(contexts, add_special_tokens=False, return_offsets_mapping=True)
    template = PairTemplate.of(tokenizer)
    specials = template.n_special
    feats = WindowFeatures()
    for ex, (q_ids, c_ids, c_off) in enumerate(zip(q_enc["input_ids"], c_enc["input_ids"],
                                                    c_enc["offset_mapping"], strict=True)):
        budget = max_seq_len - len(q_ids) - specials
        if budget <= 0:
            raise ValueError(f"max_seq_len {max_seq_len} leaves no room for the context of example {ex}")
        step = budget if doc_stride is None else doc_stride
        if step > budget:  # the tokens between one window's end and the next one's start would never be seen
            raise ValueError(f"doc_stride {doc_stride} exceeds the {budget} context tokens a window of example {ex} "
                             f"holds (max_seq_len {max_seq_len} minus question and special tokens)")
        gold = None
        if answers is not None and answers[ex] is not None:
            gold = _token_span(c_off, *answers[ex])
        starts = list(range(0, max(len(c_ids) - budget, 0) + 1, step))
        if starts[-1] + budget < len(c_ids):  # the last step may not reach the end: one more window
            starts.append(starts[-1] + step)
        first_window = len(feats)
        for s in starts:
            window = c_ids[s:s + budget]
            ids, types, ctx_start = template.build(q_ids, window)
            offsets: list[tuple[int, int] | None] = [None] * len(ids)
            for j in range(len(window)):
                offsets[ctx_start + j] = tuple(c_off[s + j])
            start_pos = end_pos = 0
            if gold is not None:
                lo, hi = max(gold[0], s), min(gold[1], s + len(window) - 1)
                if lo <= hi:
                    start_pos, end_pos = ctx_start + lo - s, ctx_start + hi - s
            feats.input_ids.append(ids)
            feats.attention_mask.append([1] * len(ids))
            feats.token_type_ids.append(types)
            feats.offset_mapping.append(offsets)
            feats.example_index.append(ex)
            feats.start_positions.append(start_pos)
            feats.end_positions.append(end_pos)
        if answer_windows == "fullest":
            _keep_fullest(feats, first_window)
    return feats


def _keep_fullest(feats: WindowFeatures, first: int) -> None:
    """Of one question's windows (from ``first`` on), only those holding the most answer tokens keep their
    labels; the others point at CLS."""
    held = [0 if feats.start_positions[i] == 0 else feats.end_positions[i] - feats.start_positions[i] + 1
            for i in range(first, len(feats))]
    most = max(held, default=0)
    for i, h in zip(range(first, len(feats)), held, strict=True):
        if h < most:
            feats.start_positions[i] = feats.end_positions[i] = 0


@dataclass(frozen=True)
class PairTemplate:
    """The model's special tokens around a (question, context) pair, read off one real encoding.

    BERT: ``[CLS] q [SEP] c [SEP]`` with token types 0/1; RoBERTa: ``<s> q </s></s> c </s>``, all type 0.
    Reading it from the tokenizer (rather than hard-coding templates) keeps any model family working.
    """

    prefix: tuple[int, ...]
    middle: tuple[int, ...]
    suffix: tuple[int, ...]
    q_type: int
    c_type: int

    @property
    def n_special(self) -> int:
        return len(self.prefix) + len(self.middle) + len(self.suffix)

    @classmethod
    def of(cls, tokenizer) -> "PairTemplate":
        enc = tokenizer("question", "context", return_special_tokens_mask=True, return_token_type_ids=True)
        ids, mask = enc["input_ids"], enc["special_tokens_mask"]
        types = enc.get("token_type_ids") or [0] * len(ids)
        runs: list[list[int]] = [[]]
        kinds: list[int] = []
        for i, m in enumerate(mask):
            if not kinds or kinds[-1] != m:
                kinds.append(m)
                runs.append([])
            runs[-1].append(i)
        runs = runs[1:]
        if kinds != [1, 0, 1, 0, 1]:
            raise ValueError(f"unexpected special-token layout {kinds} for {type(tokenizer).__name__}")
        q_pos, c_pos = runs[1], runs[3]
        return cls(prefix=tuple(ids[i] for i in runs[0]), middle=tuple(ids[i] for i in runs[2]),
                   suffix=tuple(ids[i] for i in runs[4]), q_type=types[q_pos[0]], c_type=types[c_pos[0]])

    def build(self, q_ids: list[int], c_ids: list[int]) -> tuple[list[int], list[int], int]:
        ids = [*self.prefix, *q_ids, *self.middle, *c_ids, *self.suffix]
        first = len(self.prefix) + len(q_ids) + len(self.middle)
        types = [self.q_type] * first + [self.c_type] * (len(c_ids) + len(self.suffix))
        return ids, types, first
