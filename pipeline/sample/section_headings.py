"""Question sub-headings written for the section under them, without naming it (``sample.question_headings:
section``, the default).

On BBC News a journalist writes the sub-heading for its section: "How did we get here?" heads the history, "Who
is Xi Jinping?" the biography, "What happens next?" the outlook. The link is in meaning, not in a shared rare
word, and it is what NLQuAD's models learn. A heading here is chosen from what its section is:

- its **subject's Wikipedia description** in place of its title: "Who was the German playwright and poet?" (a
  person: the description carries life years), "Where is the largest desert in North America?" (a place),
  "What is the phylum of photosynthesising prokaryotes?" (anything else), unless that heading would name its
  answer (a term found in the section and nowhere else in the document: real sub-headings seldom do);
- otherwise its **discourse function**, read off the section's own sentences: a section about the past (several
  years before 1990 with past-tense history words) takes a history question, one dense with figures a size
  question, one about plans or the future an outlook question, any other a general one.

The choice reads the section and its subject only and draws nothing from the story's random stream, so the
documents and answer spans are the other modes' byte for byte; within a story each function's phrasings are
taken in turn, so two sections never share a heading.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

PAST_HEADINGS = ("How did we get here?", "What is the background?", "How did it all begin?",
                 "What happened before?")
FIGURE_HEADINGS = ("How big is it?", "What do the numbers say?", "How much has changed?")
FUTURE_HEADINGS = ("What happens next?", "What could change?", "Where does it go from here?")
PERSON_HEADINGS = ("Who is the {d}?", "What did the {d} do?")
PERSON_PAST_HEADINGS = ("Who was the {d}?", "What did the {d} do?")
PLACE_HEADINGS = ("Where is the {d}?", "What is the {d} like?")
THING_HEADINGS = ("What is the {d}?", "Why does the {d} matter?", "How does the {d} work?")
FALLBACK_HEADINGS = ("What do we know?", "What is it about?", "Why does it matter?", "What else is there to know?",
                     "What are the details?", "What is the wider picture?", "Is there more to it?",
                     "What should you know?")  # a story has at most 6 sections: none repeats

_YEAR = re.compile(r"\b(1\d{3})\b")
_LIFE = re.compile(r"\s*\((?:born |b\. |c\. )?(\d{3,4})(?:\s*(?:BC|AD|BCE|CE))?(?:\s*[–-]\s*(?:c\. )?(\d{3,4}))?[^)]*\)\s*$")
_NUMBER = re.compile(r"\b\d[\d,.]*\b|%|\b(?:million|billion|percent|per cent)\b", re.I)
_PAST_WORDS = frozenset("""was were became founded established ancient century centuries history historical
historically originally medieval empire dynasty war conquered reigned ruled began emerged""".split())
_FUTURE_WORDS = frozenset("will future plans planned proposed expected projected predicted upcoming".split())
_PLACE_WORDS = frozenset("""country city capital river mountain mountains island islands region state continent sea
ocean lake desert province peninsula archipelago town territory strait canal gulf bay valley""".split())


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def function_of(sentences: Sequence[str]) -> str | None:
    """``past``, ``figures`` or ``future`` when the section's sentences say so clearly; None otherwise."""
    text = " ".join(sentences)
    words = _words(text)
    years = [int(y) for y in _YEAR.findall(text)]
    numbers = len(_NUMBER.findall(text)) - len(years)
    if sum(w in _FUTURE_WORDS for w in words) >= 3:
        return "future"
    if sum(y < 1990 for y in years) >= 2 and sum(w in _PAST_WORDS for w in words) >= 3:
        return "past"
    if numbers >= 8:
        return "figures"
    return None


def described(description: str, extract: str) -> tuple[str, str]:
    """``(kind, phrase)`` of a subject's Wikipedia description: a person (life years in brackets; ``person_past``
    when they died), a place, or a thing; the phrase without the years, its first letter lowered unless the
    extract writes that word capitalised mid-sentence (a proper adjective: "German")."""
    life = _LIFE.search(description)
    phrase = description[:life.start()] if life else description
    phrase = phrase.strip().rstrip(".")
    if not phrase:
        return "none", ""
    first = phrase.split()[0]
    if first[1:] == first[1:].lower() and not re.search(r"[a-z,;] " + re.escape(first) + r"\b", extract):
        phrase = phrase[:1].lower() + phrase[1:]  # "Family of birds" -> "family of birds"; "SI unit", "German" kept
    if life:
        return ("person_past" if life.group(2) else "person"), phrase
    if _words(phrase) and _words(phrase)[0] in _PLACE_WORDS or any(w in _PLACE_WORDS for w in _words(phrase)[:4]):
        return "place", phrase
    return "thing", phrase


def section_heading(sentences: Sequence[str], description: str, extract: str, taken: dict[str, int],
                    names_answer: Callable[[str], bool]) -> str:
    """The question heading for one section: by its subject's description, unless that heading would name its
    answer (``names_answer``: a term of it found in this section and nowhere else in the document; real BBC
    sub-headings seldom do, 8.3% in NLQuAD), else by the section's function, else a general question;
    ``taken`` counts, per kind, the headings the story already has (the next phrasing is used, so none
    repeats)."""
    kind, phrase = described(description, extract)
    options = {"person": PERSON_HEADINGS, "person_past": PERSON_PAST_HEADINGS, "place": PLACE_HEADINGS,
               "thing": THING_HEADINGS}.get(kind, ())
    k = taken.get(kind, 0)
    if k < len(options) and not names_answer(options[k].format(d=phrase)):
        taken[kind] = k + 1
        return options[k].format(d=phrase)
    function = function_of(sentences) or "general"
    options = {"past": PAST_HEADINGS, "figures": FIGURE_HEADINGS, "future": FUTURE_HEADINGS,
               "general": FALLBACK_HEADINGS}[function]
    if taken.get(function, 0) >= len(options):  # every phrasing of this function used: a general question
        function, options = "general", FALLBACK_HEADINGS
    k = taken.get(function, 0)
    taken[function] = k + 1
    return options[k % len(options)]
