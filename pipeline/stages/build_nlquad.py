"""``build_nlquad``: interrogative sub-headings -> questions, their sections -> answer spans (SQuAD format), and
the build's calibration against the paper (``pipeline.nlquad.calibration``): lengths, how often a question names
its answer, BM25L against the random window."""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
from collections import Counter

from pipeline.common.layout import PATHS
from pipeline.common.files import write_json
from pipeline.nlquad.articles import load_articles
from pipeline.nlquad.build import build_dataset, check_offsets, dataset_statistics
from pipeline.nlquad.calibration import calibrate
from pipeline.nlquad.question_cues import heading_names_answer
from pipeline.nlquad.release import load_release

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    if params.build_nlquad.source == "release":
        dataset, dropped = load_release(PATHS.build_nlquad.release_dir), Counter()
        check_offsets(dataset)
        rejected: dict = {}
        where = str(PATHS.build_nlquad.release_dir)
    else:
        articles = load_articles(PATHS.extract.articles)
        dataset, dropped = build_dataset(articles)
        extract_counts = json.loads(PATHS.extract.report.read_text(encoding="utf-8"))
        rejected = {k.removeprefix("rejected_"): v for k, v in extract_counts.items() if k.startswith("rejected_")}
        where = f"the {len(articles)} articles in {PATHS.extract.articles}"
    if not any(qa for doc in dataset["data"] for par in doc["paragraphs"] for qa in par["qas"]):
        raise ValueError(f"build_nlquad: none of {where} has an interrogative sub-heading with a section under it "
                         f"(dropped: {dict(sorted(dropped.items()))}); nothing was written, the previous data set "
                         "is kept")
    write_json(PATHS.build_nlquad.dataset, dataset, indent=None)
    stats = dataset_statistics(dataset) | {
        "source": params.build_nlquad.source,
        "dropped": dict(sorted(dropped.items())),
        "rejected": rejected,
        # how often the question's words single out its answer section: the cue BM25L ranks windows by
        "heading_names_answer": heading_names_answer(dataset),
    }
    b = params.nlquad_baselines
    stats["calibration"] = calibrate(dataset, stats, stats["heading_names_answer"]["share"], b.window_words, b.seed)
    write_json(PATHS.build_nlquad.report, stats)
    return stats
