"""What would move BM25L and its oracle apart on the NLQuAD sample: the calibration's two window checks
(``pipeline.nlquad.calibration``: BM25L level with the random window, the BM25L oracle above it, F1 and IoU,
articles resampled) on the committed build and on copies whose question headings are rewritten as a generator
could write them. Each probe is a hypothesis about what the paper's real headings have that the sample's lack:

- ``subject_where_no_term``: a heading with no term in its document asks about the story's subject ("What do
  we know about Pachisi?"), as real BBC headings often do;
- ``subject_where_unanchored``: the same for every heading sharing no term with its answer (the subject's words
  fall across the article, not in one section);
- ``function_word``: a function or general heading carries the past/future word its section uses most ("What
  about the war?"), a weak anchor found across the article but densest in its section.

The documents, answers and split are the build's; only question text changes, so a probe measures what the
headings alone do to the two checks. Reference in the same run: the committed build, unchanged.

    .venv/bin/python -m benchmarks.nlquad_heading_probes
"""

from __future__ import annotations

import argparse
import copy
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._common import write_result
from pipeline.common.layout import PATHS
from pipeline.nlquad.baselines import analyze, run_baselines
from pipeline.nlquad.calibration import bm25l_versus_random, by_lexical_anchor
from pipeline.nlquad.metrics import span_scores
from pipeline.sample.section_headings import (_FUTURE_WORDS, _PAST_WORDS, FALLBACK_HEADINGS, FIGURE_HEADINGS,
                                              FUTURE_HEADINGS, PAST_HEADINGS)

Rewrite = Callable[[str, str, dict, dict], str]  # (question, story subject, qa, paragraph) -> question
FIXED = set(PAST_HEADINGS + FUTURE_HEADINGS + FIGURE_HEADINGS + FALLBACK_HEADINGS)
STOPPED = {"will", "was", "were"}  # stop words of the analysis: they would anchor nothing


def _shares(question: str, text: str) -> bool:
    return bool(set(analyze(question)) & set(analyze(text)))


def subject_where_no_term(question: str, subject: str, qa: dict, para: dict) -> str:
    return question if _shares(question, para["context"]) else f"{question.rstrip('?')} about {subject}?"


def subject_where_unanchored(question: str, subject: str, qa: dict, para: dict) -> str:
    return question if _shares(question, qa["answers"][0]["text"]) else f"{question.rstrip('?')} about {subject}?"


def function_word(question: str, subject: str, qa: dict, para: dict) -> str:
    if question not in FIXED:
        return question
    words = Counter(w for w in re.findall(r"[a-z]+", qa["answers"][0]["text"].lower())
                    if (w in _PAST_WORDS or w in _FUTURE_WORDS) and w not in STOPPED)
    if not words:
        return question
    return f"What about the {min(words.items(), key=lambda kv: (-kv[1], kv[0]))[0]}?"


PROBES: dict[str, Rewrite] = {"subject_where_no_term": subject_where_no_term,
                              "subject_where_unanchored": subject_where_unanchored,
                              "function_word": function_word}


def rewritten(dataset: dict[str, Any], rewrite: Rewrite) -> tuple[dict[str, Any], int]:
    """A copy of the build with every question passed through ``rewrite``, and how many changed."""
    out, changed = copy.deepcopy(dataset), 0
    for article in out["data"]:
        subject = article["title"].split(":")[0].strip()
        for para in article["paragraphs"]:
            for qa in para["qas"]:
                new = rewrite(qa["question"], subject, qa, para)
                changed += new != qa["question"]
                qa["question"] = new
    return out, changed


def checks(dataset: dict[str, Any], window_words: int, seed: int) -> dict[str, Any]:
    """BM25L and its oracle against the random window (difference and 95% interval, F1 and IoU), and the
    anchored / elsewhere / no-term groups' shares and IoU."""
    predictions = run_baselines(dataset, window_words, seed)
    scored = {m: span_scores(predictions[m], dataset) for m in ("random_window", "bm25l", "bm25l_oracle")}
    out: dict[str, Any] = {}
    for system in ("bm25l", "bm25l_oracle"):
        pair = bm25l_versus_random(dataset, window_words, seed, system, predictions, scored)
        out[f"{system}_minus_random_window"] = {f: {"difference": pair[f]["difference"], "ci95": pair[f]["ci95"]}
                                                for f in ("f1", "iou")}
    groups = by_lexical_anchor(dataset, scored)
    out["groups"] = {g: {"share_percent": v["share_percent"], **{m: v[m]["iou"] for m in scored}}
                     for g, v in groups.items()}
    bm, oracle = out["bm25l_minus_random_window"], out["bm25l_oracle_minus_random_window"]
    out["paper_pattern"] = all(bm[f]["ci95"][0] <= 0 <= bm[f]["ci95"][1] and oracle[f]["ci95"][0] > 0
                               for f in ("f1", "iou"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.nlquad_heading_probes", description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", type=Path, default=PATHS.build_nlquad.dataset)
    ap.add_argument("--window-words", type=int, default=512, help="nlquad_baselines.window_words")
    ap.add_argument("--seed", type=int, default=0, help="nlquad_baselines.seed")
    args = ap.parse_args(argv)
    dataset = json.loads(args.dataset.read_text(encoding="utf-8"))
    result: dict[str, Any] = {"dataset": args.dataset.as_posix(), "window_words": args.window_words,
                              "committed_build": checks(dataset, args.window_words, args.seed), "probes": {}}
    for name, rewrite in PROBES.items():
        probe, changed = rewritten(dataset, rewrite)
        result["probes"][name] = {"questions_rewritten": changed, **checks(probe, args.window_words, args.seed)}
    result["what"] = ("the calibration's BM25L and BM25L-oracle checks on the committed build and on copies with "
                      "rewritten question headings (paper_pattern: BM25L level with the random window and the "
                      "oracle above it on F1 and IoU)")
    write_result("nlquad_heading_probes", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
