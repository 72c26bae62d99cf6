"""How much of a section's vocabulary the rest of its article shares: the offline sample against real BBC pages.

BM25L places a window by the terms a question shares with it, so how it fares depends on how a question's terms
spread over its article. The sample's articles are read from several Wikipedia extracts in turn
(``pipeline/sample/story_text.py``); if their sections were far more distinct in vocabulary than a news article's,
a shared term would point at its section more surely than on BBC News, which would explain BM25L's cue. This
measures it on both, with the search stages' English analysis (``pipeline.nlquad.baselines.analyze``): for each
section (the text before the first sub-heading counts as one) with at least ``MIN_TERMS`` distinct terms, the
share of them found in another section of its article; each article's mean; the mean over articles with a
bootstrap interval over articles (the unit sampled), for the sample's extracted articles (``extract``'s output in
this checkout) and for the real pages in ``../shared/fixtures/bbc`` that extract as articles with two or more
sections (every era, 2004-2024: seven of the twenty from 2016 on).

    .venv/bin/python -m benchmarks.nlquad_section_vocabulary
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from scipy.stats import bootstrap

from benchmarks._common import write_result
from pipeline.common.layout import PATHS
from pipeline.nlquad.baselines import analyze
from pipeline.nlquad.extract import extract_page
from pipeline.nlquad.page_limits import PageLimits
from pipeline.params import project_section

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures" / "bbc"
MIN_TERMS = 10  # a section of a few terms gives a share of a few values (0, 1/3, ...): left out


def shared_shares(parts: list[list[str]]) -> list[float]:
    """For each part (a section's paragraphs) with ``MIN_TERMS`` distinct terms or more: the share of its distinct
    terms found in another part of the same article."""
    terms = [set(analyze(" ".join(p))) for p in parts]
    out = []
    for i, own in enumerate(terms):
        if len(own) < MIN_TERMS:
            continue
        others = set().union(*(t for j, t in enumerate(terms) if j != i))
        out.append(len(own & others) / len(own))
    return out


def _parts(intro: list[str], sections: Iterable[list[str]]) -> list[list[str]]:
    return ([intro] if intro else []) + [list(s) for s in sections]


def summary(per_article: list[list[float]], words: list[int], seed: int = 0) -> dict:
    """The articles' mean shares: their mean with a 95% bootstrap interval over articles, counts, and the
    articles' median length in words (a longer article has more other text to share a term with)."""
    means = np.array([np.mean(a) for a in per_article])
    if len(means) < 2:
        raise SystemExit("fewer than two articles with two measurable sections")
    ci = bootstrap((means,), np.mean, n_resamples=2000, confidence_level=0.95, method="percentile",
                   random_state=np.random.default_rng(seed)).confidence_interval
    sections = [s for a in per_article for s in a]
    return {"articles": int(len(means)), "sections": len(sections), "mean_over_articles": round(float(means.mean()), 3),
            "ci95": [round(float(ci.low), 3), round(float(ci.high), 3)],
            "median_over_sections": round(float(np.median(sections)), 3),
            "words_per_article_median": int(np.median(words))}


def _words(parts: list[list[str]]) -> int:
    return sum(len(p.split()) for part in parts for p in part)


def sample_articles(path: Path) -> tuple[list[list[float]], list[int]]:
    out, words = [], []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            a = json.loads(line)
            if a.get("rejected") or not a.get("sections"):
                continue
            parts = _parts(a.get("intro") or [], (s["paragraphs"] for s in a["sections"]))
            shares = shared_shares(parts) if len(parts) >= 2 else []
            if shares:
                out.append(shares)
                words.append(_words(parts))
    return out, words


def real_articles(folder: Path) -> tuple[list[list[float]], list[int], list[str]]:
    limits = PageLimits.of(project_section("extract"))
    out, words, names = [], [], []
    for page in sorted(folder.glob("*.html")):
        ex = extract_page(page.read_bytes(), None, limits)
        parts = _parts(ex.intro, (s.paragraphs for s in ex.sections))
        if ex.rejected or len(parts) < 2:
            continue
        shares = shared_shares(parts)
        if shares:
            out.append(shares)
            words.append(_words(parts))
            names.append(page.name)
    return out, words, names


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m benchmarks.nlquad_section_vocabulary",
                            description=__doc__.split("\n")[0]).parse_args(argv)
    articles = REPO / PATHS.extract.articles
    if not articles.is_file():
        raise SystemExit(f"{articles}: no extracted sample (run `dvc repro extract` first)")
    if not FIXTURES.is_dir():
        raise SystemExit(f"{FIXTURES}: the real BBC pages are not there (../shared)")
    real, real_words, names = real_articles(FIXTURES)
    write_result("nlquad_section_vocabulary", {
        "what": "share of a section's distinct terms (English analysis, stop words out, stemmed) found in another "
                "section of its article; sections with at least 10 distinct terms; mean per article, then over "
                "articles with a 95% bootstrap interval over articles",
        "sample": summary(*sample_articles(articles)), "real_bbc": {**summary(real, real_words), "pages": names},
        "note": "the real pages span 2004-2024 and every layout; the sample's articles are extract's output in "
                "this checkout",
    })
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
