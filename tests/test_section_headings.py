"""Question sub-headings written for the section under them (``sample.question_headings: section``): what a
heading asks follows what its section is, never a term only its own section has, and none repeats in a story."""

from __future__ import annotations

from pipeline.sample.section_headings import (FALLBACK_HEADINGS, FIGURE_HEADINGS, PAST_HEADINGS, described,
                                              function_of, section_heading)

HISTORY = ["The city was founded in 1102 and became a capital of the empire in 1320.",
           "It was ruled by a dynasty of kings until the war of 1648, when it was conquered."]
FIGURES = ["It has 3,400,000 people, 12% of them under 15, and 1,200 schools.",
           "Its budget rose from 4.5 billion to 6.1 billion, with 320 hospitals and 45 universities."]


def test_a_sections_function_is_read_off_its_own_sentences():
    assert function_of(HISTORY) == "past"
    assert function_of(FIGURES) == "figures"
    assert function_of(["The plan will be voted on and the project will start; the future is expected soon."]) == "future"
    assert function_of(["Frogs are amphibians that live near water."]) is None


def test_a_description_says_what_kind_of_subject_and_loses_its_life_years():
    assert described("German playwright and poet (1898–1956)", "Brecht was a German playwright.") == \
        ("person_past", "German playwright and poet")
    assert described("Indian singer (born 1929)", "She is an Indian singer.")[0] == "person"
    assert described("Largest desert in North America", "The desert ...") == ("place", "largest desert in North America")
    assert described("Family of seabirds (Fregatidae)", "Frigatebirds are ...") == ("thing", "family of seabirds (Fregatidae)")
    assert described("SI derived unit of illuminance", "The lux ...")[1] == "SI derived unit of illuminance"
    assert described("", "x") == ("none", "")


def test_a_heading_never_names_a_term_only_its_section_has_and_none_repeats():
    taken: dict[str, int] = {}
    never = lambda q: False  # noqa: E731
    first = section_heading(["Frogs are amphibians."], "Order of amphibians", "Frogs ...", taken, never)
    second = section_heading(["Toads are amphibians."], "Family of amphibians", "Toads ...", taken, never)
    assert first == "What is the order of amphibians?" and second == "Why does the family of amphibians matter?"
    # the description would name its answer: the section's function decides instead, then a general question
    assert section_heading(HISTORY, "City in Italy", "...", taken, lambda q: True) == PAST_HEADINGS[0]
    assert section_heading(HISTORY, "City in Italy", "...", taken, lambda q: True) == PAST_HEADINGS[1]
    assert section_heading(FIGURES, "", "...", taken, lambda q: True) == FIGURE_HEADINGS[0]
    assert section_heading(["Frogs croak."], "", "...", taken, lambda q: True) == FALLBACK_HEADINGS[0]


def test_the_default_samples_headings_are_written_for_their_sections():
    """Planned without writing pages: most question headings come from their section (its subject's description
    or its function), few are the general fallback, and no story repeats a heading."""
    from collections import Counter

    from pipeline.params import load_params
    from pipeline.sample.bbc_archive import ArchivePlanner
    from pipeline.sample.wiki_vital import load_vital_articles
    from tests.params_files import PROJECT_PARAMS

    p = load_params(PROJECT_PARAMS).sample
    assert p.question_headings == "section"
    headings, repeats = [], 0
    for art in ArchivePlanner(p, load_vital_articles()).plan_articles()[:p.n_articles]:
        mine = [s.heading for s in art.sections if s.heading.endswith("?")]
        repeats += len(mine) - len(set(mine))
        headings += mine
    kinds = Counter("general" if h in FALLBACK_HEADINGS else "function" if h in PAST_HEADINGS + FIGURE_HEADINGS
                    else "described" for h in headings)
    assert repeats == 0 and len(headings) > 600
    assert kinds["described"] / len(headings) > 0.3 and kinds["general"] / len(headings) < 0.5, kinds
