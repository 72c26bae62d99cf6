"""The offline NLQuAD sample as a stand-in for the paper's data: one text per story with no section break at a
change of subject, question headings that seldom name their answer, and lengths near NLQuAD's Table 2; and the
calibration every build reports, which says so when a build drifts."""

from __future__ import annotations

import logging
import statistics

import pytest

from pipeline.nlquad.calibration import LENGTH_TOLERANCE, NAMING_MAX, PAPER, bm25l_versus_random, calibrate
from pipeline.sample.story_text import StreamSentence, compose, cut_sections
from pipeline.sample.wiki_vital import VitalArticle


def _article(title: str, n: int, topic: str = "Arts") -> VitalArticle:
    text = " ".join(f"{title} sentence number {i} says something about {title.lower()} here." for i in range(n))
    return VitalArticle(title=title, extract=text, description="d", topic=topic)


def test_a_break_that_would_fall_between_two_extracts_moves_into_the_next_one():
    stream = [StreamSentence("a b c", 0), StreamSentence("d e f", 0), StreamSentence("g h i", 1),
              StreamSentence("j k l", 1), StreamSentence("m n o", 1)]
    first, second = cut_sections(stream, 0, [6, 3])
    assert [s.text for s in first] == ["a b c", "d e f", "g h i"]  # 6 words reached at the extract's end: one more
    assert first[-1].source == second[0].source == 1


def test_every_section_break_of_a_story_lies_inside_one_extract():
    lead = _article("Lead", 6)
    others = [_article(f"Other{i}", 4) for i in range(12)]
    text = compose(lead, others, [40, 55, 70, 45], lead_sentences=2)
    owner = {s: a.title for a in (lead, *others) for s in a.sentences}
    assert owner[text.intro] == owner[text.lead[-1]] == owner[text.sections[0][0][0]] == "Lead"
    for (before, _), (after, _) in zip(text.sections, text.sections[1:]):
        assert owner[before[-1]] == owner[after[0]]  # the same extract on both sides of the break
    flat = [text.intro, *text.lead, *(s for sentences, _ in text.sections for s in sentences)]
    assert flat == [s for a in (lead, *others) for s in a.sentences][:len(flat)]  # read in order, nothing skipped


def _planned_stories(p) -> list[tuple[str, list]]:
    """The sample ``p`` describes, planned without writing pages: each story's document (intro, lead, sections
    joined as build_nlquad joins them) and its question sections' (heading, span)."""
    from pipeline.sample.bbc_archive import ArchivePlanner
    from pipeline.sample.bbc_templates import plain
    from pipeline.sample.wiki_vital import load_vital_articles

    stories = []
    for art in ArchivePlanner(p, load_vital_articles()).plan_articles()[:p.n_articles]:
        context, spans = " ".join([plain(art.intro), *(plain(x) for x in art.lead)]), []
        for section in art.sections:
            start = len(context) + 1
            context += " " + " ".join(plain(x) for x in section.paragraphs)
            if section.heading.endswith("?") and not section.bullet:
                spans.append((section.heading, (start, len(context))))
        if spans:
            stories.append((context, spans))
    return stories


@pytest.fixture(scope="module")
def default_stories():
    """The project's default sample (params.yaml), planned without writing pages."""
    from pipeline.params import load_params
    from tests.params_files import PROJECT_PARAMS

    return _planned_stories(load_params(PROJECT_PARAMS).sample)


def test_the_default_sample_is_near_the_papers_lengths_and_density(default_stories):
    documents = [len(c.split()) for c, _ in default_stories]
    answers = [len(c[a:b].split()) for c, spans in default_stories for _, (a, b) in spans]
    per_article = len(answers) / len(documents)
    for value, paper in ((statistics.mean(documents), PAPER["document_words_mean"]),
                         (statistics.mean(answers), PAPER["answer_words_mean"]),
                         (per_article, PAPER["questions_per_document"])):
        assert abs(value - paper) <= LENGTH_TOLERANCE * paper, (value, paper)
    assert len(answers) >= 600  # enough for an eval split of about 75 questions


def test_the_default_samples_questions_seldom_name_their_answer(default_stories):
    from pipeline.nlquad.question_cues import names_answer

    flags = [names_answer(q, c, span) for c, spans in default_stories for q, span in spans]
    assert 100 * sum(flags) / len(flags) <= NAMING_MAX


def _dataset(naming: bool) -> dict:
    """Ten articles of three sections, each section about its own made-up subject; the questions name it or not."""
    subjects = ["zorbl", "quaxi", "plenth", "vardo", "mistrel", "fungal", "troval", "kelpin", "ardux", "bensil",
                "corvat", "dilmex", "esprin", "folvak", "gintar", "holvex", "ispern", "jaltum", "kirvon", "lumbar",
                "morsec", "nuvrel", "oplant", "pertak", "qualso", "rendix", "sormel", "tulvar", "umbrix", "velkar"]
    data = []
    for a in range(10):
        sections = [" ".join(f"The {subjects[3 * a + k]} moved again in sentence {i}." for i in range(12))
                    for k in range(3)]
        context = " ".join(sections)
        qas, start = [], 0
        for k, text in enumerate(sections):
            question = f"What about the {subjects[3 * a + k]}?" if naming else "What happens next?"
            qas.append({"id": f"{a}-{k}", "question": question,
                        "answers": [{"text": text, "answer_start": start, "answer_end": start + len(text)}]})
            start += len(text) + 1
        data.append({"title": f"a{a}", "paragraphs": [{"context": context, "qas": qas}]})
    return {"data": data}


def test_bm25l_is_above_the_random_window_only_where_questions_name_their_answers():
    named = bm25l_versus_random(_dataset(True), 30, seed=0)
    assert not named["f1"]["level"] and named["f1"]["difference"] > 5 and named["f1"]["unit"] == "article"
    assert named["f1"]["units"] == 10
    assert bm25l_versus_random(_dataset(False), 30, seed=0)["f1"]["difference"] <= 0


def test_a_build_outside_the_tolerances_says_so(caplog):
    stats = {"document_words_mean": 498.0, "answer_words_mean": 80.0, "questions_per_document": 3.78, "questions": 30}
    with caplog.at_level(logging.WARNING):
        report = calibrate(_dataset(True), stats, naming_share=71.5, window_words=30, seed=0)
    assert not report["within_tolerance"]
    assert set(report["drift"]) == {"document_words_mean", "answer_words_mean", "questions_per_document",
                                    "questions_naming_their_answer_percent", "bm25l_minus_random_window_f1",
                                    "bm25l_minus_random_window_iou"}
    assert "outside the tolerance" in caplog.text and "questions_naming_their_answer_percent" in caplog.text
    assert report["answer_ranking"]["signal"] and report["drift_by_kind"]["signal"] == []  # naming: easy to find
    # every question names its section: all anchored, where the oracle's answer-length window finds it exactly
    anchor = report["by_lexical_anchor"]
    assert anchor["anchored"]["questions"] == 30 and anchor["elsewhere"]["questions"] == anchor["no_term"]["questions"] == 0
    assert anchor["anchored"]["bm25l_oracle"]["iou"] == 100.0 > anchor["anchored"]["random_window"]["iou"]


def test_a_build_whose_questions_are_not_written_for_their_sections_says_it_has_no_signal(caplog):
    """Every question "What happens next?": neither the BM25L oracle nor a sentence encoder can tell one
    section from another, and the calibration says so, as missing signal (not as a cue)."""
    stats = {"document_words_mean": 877.0, "answer_words_mean": 175.0, "questions_per_document": 2.38, "questions": 30}
    with caplog.at_level(logging.WARNING):
        report = calibrate(_dataset(False), stats, naming_share=0.0, window_words=30, seed=0)
    assert report["drift_by_kind"]["cue"] == [] and report["drift_by_kind"]["shape"] == []
    assert "own_answer_ranked_first_minus_chance" in report["drift_by_kind"]["signal"]
    assert report["answer_ranking"]["signal"] is False and report["answer_ranking"]["articles"] == 10
    assert "lacks the signal the paper's data has" in caplog.text
    # "What happens next?": its terms are in no document, so every window scores 0 and the first is taken
    anchor = report["by_lexical_anchor"]
    assert anchor["no_term"]["questions"] == 30 and anchor["no_term"]["share_percent"] == 100.0
    assert anchor["anchored"]["questions"] == 0 and anchor["anchored"]["bm25l"]["iou"] is None


def test_the_naming_control_changes_what_the_questions_say_and_nothing_else(default_stories):
    """``sample.question_headings: name_section``, the positive control: the same documents and answer spans as
    the default sample, byte for byte, and questions that name their section's subject, which the default's
    seldom do (the cue the calibration reports)."""
    from pipeline.nlquad.question_cues import names_answer
    from pipeline.params import load_params
    from tests.params_files import PROJECT_PARAMS

    control = _planned_stories(load_params(PROJECT_PARAMS).sample.model_copy(
        update={"question_headings": "name_section"}))
    assert [(c, [s for _, s in spans]) for c, spans in control] == [
        (c, [s for _, s in spans]) for c, spans in default_stories]
    naming = [names_answer(q, c, span) for c, spans in control for q, span in spans]
    default = [names_answer(q, c, span) for c, spans in default_stories for q, span in spans]
    assert 100 * sum(naming) / len(naming) > 3 * NAMING_MAX >= 3 * 100 * sum(default) / len(default)
