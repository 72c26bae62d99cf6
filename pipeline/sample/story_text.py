"""The prose of a sample BBC story: one text read in order, cut into sections where the topic does not change.

NLQuAD's construction hides where an answer starts and ends: the document is the article with its sub-headings
and section breaks removed, so a model has to find the span from what it says. A sample article that stacks
unrelated Wikipedia extracts, one per section, gives that away (every answer boundary is a change of subject),
and a heading that names its section's own article gives the answer's place to any bag of words. So here:

- **One subject, its neighbours.** A story is its lead article's extract followed by the extracts of the same
  vital-article topic that share the most (idf-weighted) content words with it, each read whole and in turn:
  one subject and the subjects nearest it, as a feature on a news subject reads.
- **Breaks inside a text.** The intro, the lead paragraphs and the sections are consecutive stretches of that one
  stream of sentences, each section about ``section_words`` words long; a break that would fall where one
  extract ends and the next begins is moved one sentence on, so the text on both sides of every section break is
  the same extract (the first section starts inside the lead's own extract).
- **Headings written for their section** (``sample.question_headings: section``, the default;
  ``pipeline.sample.section_headings``): a question sub-heading asks about its section's subject through its
  Wikipedia description, or about its function (history, figures, outlook), without naming it. The earlier
  construction, ``story``, asks about the story's subject ("Why does Gothic architecture matter?") or nothing in
  particular ("What happens next?"), about one in seventeen naming the section's own subject: headings not
  written for their sections, so a model has little but position to learn. ``explainer_share`` of the stories
  are explainers with question sub-headings (``question_heading_share`` of their sub-headings); the rest are
  news stories whose sub-headings are statements, as most real BBC pages are.

``reports/nlquad.json`` measures what this makes (lengths, questions per article, the share of questions with a
term found only in their answer) beside the paper's figures, every build.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.sample.wiki_vital import VitalArticle

SUBJECT_QUESTIONS = (
    "What is {t}?", "Why does {t} matter?", "How did {t} come about?", "What do we know about {t}?",
    "Who is behind {t}?", "How does {t} work?", "Is {t} really new?", "Where does {t} go from here?",
    "Why are people talking about {t}?", "What is the history of {t}?",
)
OPEN_QUESTIONS = (
    "What happens next?", "Why is this happening now?", "What does it mean for you?", "What has been the reaction?",
    "How did we get here?", "What are the arguments?", "Why does it matter?", "What do the experts say?",
    "How worried should we be?", "What is the background?", "Who decides?", "What could change?",
)
STATEMENT_HEADINGS = (
    "Background", "A long history", "'A turning point'", "Analysis", "{t} in numbers", "The wider picture",
    "Why now? The background",  # contains '?' but does not end with one: not a question heading
    "What we know so far", "'We were not expecting this'", "Reaction",
)
NAMING_SHARE = 0.06  # question headings that name their own section's main subject
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
_STOP = frozenset("""that this with from were which their have been also there they them than then into over such
most more other some these those when where what while after before about under between during only both each
many much very would could should being because first known used including however although""".split())


def content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


@dataclass(frozen=True)
class StreamSentence:
    text: str
    source: int  # index of the extract it comes from, in stream order


@dataclass(frozen=True)
class StoryText:
    """The story's prose: intro sentence, lead sentences, and each section's sentences with the title of the
    extract most of its words come from."""

    intro: str
    lead: tuple[str, ...]
    sections: tuple[tuple[tuple[str, ...], str], ...]
    subjects: tuple[VitalArticle, ...] = ()  # each section's main extract (its title is the section's subject)


class Neighbours:
    """Extracts of the same topic ranked by idf-weighted shared content words with a lead article."""

    def __init__(self, articles: Sequence[VitalArticle]):
        self.words = {id(a): content_words(a.extract) for a in articles}
        df = Counter(w for ws in self.words.values() for w in ws)
        n = len(articles)
        self.idf = {w: math.log(n / c) for w, c in df.items()}
        self.by_topic: dict[str, list[VitalArticle]] = {}
        for a in articles:
            if len(a.sentences) >= 2:
                self.by_topic.setdefault(a.topic, []).append(a)

    def ranked(self, lead: VitalArticle) -> list[VitalArticle]:
        mine = self.words[id(lead)]

        def score(other: VitalArticle) -> float:
            theirs = self.words[id(other)]
            shared = math.fsum(self.idf[w] for w in mine & theirs)  # exact: the same whatever order the set gives
            return shared / math.sqrt(1 + len(theirs))

        others = [a for a in self.by_topic.get(lead.topic, []) if a is not lead]
        return sorted(others, key=lambda a: (-score(a), a.title))


def _words(text: str) -> int:
    return len(text.split())


def cut_sections(stream: list[StreamSentence], start: int, targets: list[int]) -> list[list[StreamSentence]]:
    """Consecutive stretches of ``stream`` from ``start``, each at least its target in words, every break inside
    one extract where the stream allows (a break before an extract's first sentence moves one sentence on)."""
    sections, i = [], start
    for target in targets:
        if i >= len(stream):
            break
        taken: list[StreamSentence] = []
        while i < len(stream) and (sum(_words(s.text) for s in taken) < target
                                   or (i < len(stream) and taken and stream[i].source != taken[-1].source)):
            taken.append(stream[i])
            i += 1
        sections.append(taken)
    return sections


def compose(lead: VitalArticle, neighbours: list[VitalArticle], targets: list[int], lead_sentences: int) -> StoryText:
    """The story from the lead and its ranked neighbours: as many neighbours as the section targets need."""
    sources = [lead]
    need = sum(targets) + 80
    have = sum(_words(s) for s in lead.sentences)
    for other in neighbours:
        if have >= need:
            break
        sources.append(other)
        have += sum(_words(s) for s in other.sentences)
    stream = [StreamSentence(s, k) for k, src in enumerate(sources) for s in src.sentences]
    lead_n = max(1, min(lead_sentences, len(lead.sentences) - 2))  # the first section starts inside the lead
    parts = cut_sections(stream, 1 + lead_n, targets)
    sections, subjects = [], []
    for part in parts:
        main = Counter()
        for s in part:
            main[s.source] += _words(s.text)
        subject = sources[main.most_common(1)[0][0]]
        sections.append((tuple(s.text for s in part), subject.title))
        subjects.append(subject)
    return StoryText(stream[0].text, tuple(s.text for s in stream[1:1 + lead_n]), tuple(sections), tuple(subjects))


def naming_control(section_subject: str, k: int) -> str:
    """The positive control's question heading (``sample.question_headings: name_section``): it names its own
    section's subject, the k-th of a story's question headings taking the k-th template. It draws nothing from
    the story's random stream, so the control's documents, sections and answers are the default sample's, byte
    for byte; only what the questions say differs."""
    return SUBJECT_QUESTIONS[k % len(SUBJECT_QUESTIONS)].format(t=section_subject)


def heading(rng: random.Random, question: bool, subject: str, section_subject: str, used: set[str]) -> str:
    """A sub-heading, not one the story already has (ten tries)."""
    for _ in range(10):
        if not question:
            text = rng.choice(STATEMENT_HEADINGS).format(t=section_subject)
        elif rng.random() < NAMING_SHARE:
            text = rng.choice(SUBJECT_QUESTIONS).format(t=section_subject)
        elif rng.random() < 0.5:
            text = rng.choice(SUBJECT_QUESTIONS).format(t=subject)
        else:
            text = rng.choice(OPEN_QUESTIONS)
        if text not in used:
            break
    used.add(text)
    return text
