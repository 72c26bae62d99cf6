"""The section-vocabulary record: a section's share of distinct terms found elsewhere in its article."""

import pytest

from benchmarks.nlquad_section_vocabulary import MIN_TERMS, shared_shares, summary

WORDS = ["harbour", "glacier", "tariff", "orchestra", "volcano", "senate", "vaccine", "pipeline", "lantern",
         "cathedral", "meadow", "satellite"]


def test_a_section_sharing_half_its_terms_scores_a_half_and_a_short_one_is_left_out():
    own = " ".join(WORDS[:10])                         # ten distinct terms
    other = " ".join(WORDS[5:10] + ["quarry", "falcon"])  # five of them again, and two others
    shares = shared_shares([[own], [other], ["quarry falcon"]])
    # the first: 5 of its 10 terms elsewhere; the second has 7 terms (< MIN_TERMS), the third 2: not measured
    assert MIN_TERMS == 10 and shares == [0.5]
    assert shared_shares([[own], [own]]) == [1.0, 1.0]


def test_the_summary_resamples_articles_and_needs_two():
    out = summary([[0.2, 0.4], [0.6]], [100, 300])
    assert out["articles"] == 2 and out["sections"] == 3 and out["mean_over_articles"] == 0.45
    assert out["ci95"][0] <= 0.45 <= out["ci95"][1] and out["words_per_article_median"] == 200
    with pytest.raises(SystemExit, match="fewer than two articles"):
        summary([[0.5]], [10])
