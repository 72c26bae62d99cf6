"""A small, deterministic Wayback-style archive of BBC News: what to capture, when, and the WARC itself.

The archive reproduces the situations a real crawl of 2016-2020 BBC News meets: two template eras,
articles linking to each other, the same article captured many times (byte-identical re-captures that CDX
``collapse=digest`` removes, and later edits that it does not), the same story under ``bbc.co.uk`` and
``bbc.com``, pages that are not articles (section fronts, ``/av/`` video, ``/live/``, ``in_pictures``), a
redirect, a 404, and captures just outside the time range. ``articles.jsonl`` records the ground truth of
every article page (headline, date, sections, which are bullet lists), so extraction can be checked against
what was written rather than against itself.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import random
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from pipeline.sample.config import SampleParams
from pipeline.sample.bbc_templates import (
    Paragraph,
    SampleArticle,
    Section,
    plain,
    render_data_component,
    render_gallery_page,
    render_index_page,
    render_live_page,
    render_story_body,
    render_video_page,
)
from pipeline.nlquad.question_cues import question_terms
from pipeline.sample.section_headings import section_heading
from pipeline.sample.story_text import Neighbours, compose, heading, naming_control
from pipeline.sample.wiki_vital import VitalArticle

# After this date the sample writes the 2020+ data-component layout (BBC switched in spring 2020).
DATA_COMPONENT_FROM = dt.date(2020, 4, 15)

NEWS_SECTIONS = {  # BBC URL slug -> section label, by vital-article topic
    "People": ("world", "World"),
    "Biology and health sciences": ("health", "Health"),
    "Geography": ("world-europe", "Europe"),
    "Uncategorized": ("uk", "UK"),
    "Physical sciences": ("science-environment", "Science & Environment"),
    "Society and social sciences": ("uk-politics", "UK Politics"),
    "Arts": ("entertainment-arts", "Entertainment & Arts"),
    "Technology": ("technology", "Technology"),
    "History": ("world-asia", "Asia"),
    "Everyday life": ("business", "Business"),
    "Philosophy and religion": ("education", "Family & Education"),
    "Mathematics": ("education", "Family & Education"),
}

@dataclass
class Capture:
    """One archived HTTP response: the unit a CDX index lists."""

    url: str
    timestamp: str  # 14-digit Wayback timestamp
    status: int
    html: str
    kind: str  # article | duplicate | cross_domain | index | video | live | gallery | redirect | not_found
    article_id: str | None = None
    template: str | None = None
    location: str | None = None  # redirect target
    in_range: bool = True
    extra_headers: list[tuple[str, str]] = field(default_factory=list)


def wayback_timestamp(when: dt.datetime) -> str:
    return when.strftime("%Y%m%d%H%M%S")


def _random_datetime(rng: random.Random, start: dt.date, end: dt.date) -> dt.datetime:
    span = (end - start).days
    day = start + dt.timedelta(days=rng.randrange(span + 1))
    return dt.datetime.combine(day, dt.time(rng.randrange(6, 23), rng.randrange(60), rng.randrange(60)))


def _article_number(published: dt.datetime, rng: random.Random) -> int:
    """Story ids grow with time the way BBC's did (about 35.2M in Jan 2016, 55.5M in Dec 2020)."""
    days = (published.date() - dt.date(2016, 1, 1)).days
    return 35_200_000 + days * 11_150 + rng.randrange(11_000)


def _paragraph(text: str, link: tuple[str, str] | None = None) -> Paragraph:
    """Wrap a few words of ``text`` in a hyperlink when ``link`` = (href, _) is given."""
    if not link:
        return ((text, None),)
    words = text.split(" ")
    if len(words) < 6:
        return ((text, None),)
    a, b = 2, min(len(words) - 1, 5)
    return ((" ".join(words[:a]) + " ", None), (" ".join(words[a:b]), link[0]), (" " + " ".join(words[b:]), None))


class ArchivePlanner:
    """Turns vital articles into sample BBC stories and a capture list, all from one seeded RNG."""

    def __init__(self, params: SampleParams, vital: tuple[VitalArticle, ...]):
        self.p = params
        self.rng = random.Random(params.seed)
        self.vital = vital
        self.neighbours = Neighbours(vital)
        self.leads = [a for a in vital if len(a.sentences) >= 4 and a.description]

    # ---- stories

    def plan_articles(self) -> list[SampleArticle]:
        rng = self.rng
        leads = rng.sample(self.leads, self.p.n_articles + self.p.out_of_range_captures)
        stories: list[tuple[VitalArticle, dt.datetime, str]] = []
        for i, lead in enumerate(leads):
            if i < self.p.n_articles:
                published = _random_datetime(rng, self.p.start, self.p.end - dt.timedelta(days=3))
            else:  # just outside the range, on either side
                before = i % 2 == 0
                published = _random_datetime(
                    rng,
                    self.p.start - dt.timedelta(days=200) if before else self.p.end + dt.timedelta(days=5),
                    self.p.start - dt.timedelta(days=5) if before else self.p.end + dt.timedelta(days=200),
                )
            slug, _ = NEWS_SECTIONS.get(lead.topic, ("world", "World"))
            stories.append((lead, published, f"{slug}-{_article_number(published, rng)}"))
        ids = [sid for _, _, sid in stories[: self.p.n_articles]]
        return [self._story(lead, published, sid, ids) for lead, published, sid in stories]

    def _story(self, lead: VitalArticle, published: dt.datetime, story_id: str, ids: list[str]) -> SampleArticle:
        """One story: the lead's extract and its nearest same-topic extracts read as one text
        (``pipeline.sample.story_text``), cut into sections under sub-headings, with links to other stories."""
        rng = self.rng
        _, label = NEWS_SECTIONS.get(lead.topic, ("world", "World"))
        lo, hi = self.p.sections_per_article
        targets = [rng.randint(*self.p.section_words) for _ in range(rng.randint(lo, hi))]
        text = compose(lead, self.neighbours.ranked(lead), targets, lead_sentences=rng.choice((1, 2)))
        explainer = rng.random() < self.p.explainer_share
        link_targets = [i for i in ids if i != story_id]
        n_links = rng.randint(*self.p.links_per_article)
        links = [(f"/news/{t}", t) for t in rng.sample(link_targets, min(n_links, len(link_targets)))]

        intro = _paragraph(text.intro)
        lead_paras = tuple(_paragraph(s) for s in text.lead)
        sections = []
        used_headings: set[str] = set()
        questions, taken = 0, {}
        section_terms = [question_terms(" ".join(sentences)) for sentences, _ in text.sections]
        story_terms = question_terms(" ".join([text.intro, *text.lead]))
        for number, ((sentences, subject), source) in enumerate(zip(text.sections, text.subjects, strict=True)):
            is_question = explainer and rng.random() < self.p.question_heading_share
            # drawn in every mode, so the documents are the same whatever the questions say
            title = heading(rng, is_question, lead.title, subject, used_headings)
            if is_question and self.p.question_headings == "name_section":  # the positive control
                title, questions = naming_control(subject, questions), questions + 1
            elif is_question and self.p.question_headings == "section":  # written for the section (the default)
                elsewhere = story_terms.union(*(t for i, t in enumerate(section_terms) if i != number))
                only_here = section_terms[number] - elsewhere
                title = section_heading(sentences, source.description, source.extract, taken,
                                        lambda q: bool(question_terms(q) & only_here))
            bullet = rng.random() < self.p.bullet_section_share
            paras: list[Paragraph] = []
            j = 0
            while j < len(sentences):
                take = 1 if bullet else rng.choice((1, 1, 2))
                link = links.pop() if links and rng.random() < 0.5 else None
                paras.append(_paragraph(" ".join(sentences[j : j + take]), link))
                j += take
            sections.append(Section(heading=title, paragraphs=tuple(paras), bullet=bullet))
        if links:  # links not yet placed go into the lead paragraphs, so every planned link appears in the body
            lead_paras = tuple(
                _paragraph(plain(p), links.pop()) if links and len(plain(p).split()) >= 6 else p for p in lead_paras
            )
        related = tuple((f"/news/{t}", f"Related: {t}") for t in rng.sample(link_targets, min(2, len(link_targets))))
        return SampleArticle(
            article_id=story_id,
            section_label=label,
            headline=f"{lead.title}: {lead.description[:1].upper()}{lead.description[1:]}",
            published=published,
            intro=intro,
            lead=lead_paras,
            sections=tuple(sections),
            related=related,
            topic=lead.topic,
        )

    # ---- captures

    def _render(self, art: SampleArticle, host: str, scheme: str, captured: dt.datetime) -> tuple[str, str]:
        canonical = f"{scheme}://{host}/news/{art.article_id}"
        seed = int(hashlib.sha256(art.article_id.encode()).hexdigest()[:6], 16)
        if captured.date() < DATA_COMPONENT_FROM:
            return render_story_body(art, canonical, seed), "story-body"
        style = "sc" if seed % 4 == 0 else "css"
        return render_data_component(art, canonical, seed, style), f"data-component-{style}"

    def plan_captures(self, articles: list[SampleArticle]) -> list[Capture]:
        rng = self.rng
        caps: list[Capture] = []
        in_range = articles[: self.p.n_articles]
        for art in articles:
            captured = art.published + dt.timedelta(hours=rng.randrange(1, 24 * 20))
            scheme = "http" if captured.date() < DATA_COMPONENT_FROM else "https"
            ok = self.p.start <= captured.date() <= self.p.end
            html, template = self._render(art, "www.bbc.co.uk", scheme, captured)
            caps.append(Capture(f"{scheme}://www.bbc.co.uk/news/{art.article_id}", wayback_timestamp(captured), 200,
                                html, "article", art.article_id, template, in_range=ok))
        # Re-captures of the same URL: half byte-identical (same digest), half a later edit of the page.
        for k in range(self.p.duplicate_captures):
            art = rng.choice(in_range)
            first = next(c for c in caps if c.article_id == art.article_id and c.kind == "article")
            first_dt = dt.datetime.strptime(first.timestamp, "%Y%m%d%H%M%S")
            later = min(first_dt + dt.timedelta(days=rng.randrange(1, 120)),
                        dt.datetime.combine(self.p.end, dt.time(23, 0)))
            html = first.html if k % 2 == 0 else first.html.replace(
                "</body>", f"<!-- updated {wayback_timestamp(later)} --></body>")
            caps.append(Capture(first.url, wayback_timestamp(later), 200, html, "duplicate", art.article_id,
                                first.template))
        # The same story under bbc.com, whose canonical link points at bbc.com: only a content hash unites them.
        for art in rng.sample(in_range, min(self.p.cross_domain_duplicates, len(in_range))):
            captured = art.published + dt.timedelta(hours=rng.randrange(1, 24 * 10))
            captured = min(captured, dt.datetime.combine(self.p.end, dt.time(23, 30)))
            scheme = "http" if captured.date() < DATA_COMPONENT_FROM else "https"
            html, template = self._render(art, "www.bbc.com", scheme, captured)
            caps.append(Capture(f"{scheme}://www.bbc.com/news/{art.article_id}", wayback_timestamp(captured), 200,
                                html, "cross_domain", art.article_id, template))
        caps += self._non_articles(in_range)
        caps.sort(key=lambda c: (c.timestamp, c.url))
        return caps

    def _non_articles(self, articles: list[SampleArticle]) -> list[Capture]:
        rng = self.rng
        caps: list[Capture] = []
        kinds = ("index", "video", "live", "gallery")
        for n in range(self.p.non_article_pages):
            kind = kinds[n % len(kinds)]
            when = _random_datetime(rng, self.p.start, self.p.end)
            number = _article_number(when, rng)
            picks = rng.sample(articles, min(5, len(articles)))
            if kind == "index":
                path = "news" if n % 8 == 0 else f"news/{rng.choice(sorted({a.article_id.rsplit('-', 1)[0] for a in articles}))}"
                url = f"https://www.bbc.co.uk/{path}"
                html = render_index_page("BBC News" if path == "news" else f"BBC News - {path}", url,
                                         [(f"/news/{a.article_id}", a.headline) for a in picks])
            elif kind == "video":
                url = f"https://www.bbc.co.uk/news/av/{picks[0].article_id.rsplit('-', 1)[0]}-{number}"
                html = render_video_page(f"Video: {picks[0].headline}", url, plain(picks[0].intro))
            elif kind == "live":
                url = f"https://www.bbc.co.uk/news/live/{picks[0].article_id.rsplit('-', 1)[0]}-{number}"
                html = render_live_page(f"Live: {picks[0].headline}", url, [plain(a.intro) for a in picks])
            else:
                url = f"https://www.bbc.co.uk/news/in_pictures-{number}"
                html = render_gallery_page("In pictures: a week around the world", url,
                                           [a.headline for a in picks])
            caps.append(Capture(url, wayback_timestamp(when), 200, html, kind))
        if articles:
            target = articles[0]
            when = _random_datetime(rng, self.p.start, self.p.end)
            old = f"http://www.bbc.co.uk/news/{target.article_id.rsplit('-', 1)[0]}-{_article_number(when, rng)}"
            caps.append(Capture(old, wayback_timestamp(when), 301, "<html><body>Moved</body></html>\n", "redirect",
                                location=f"https://www.bbc.co.uk/news/{target.article_id}"))
            when = _random_datetime(rng, self.p.start, self.p.end)
            caps.append(Capture(f"https://www.bbc.co.uk/news/uk-{_article_number(when, rng)}", wayback_timestamp(when),
                                404, "<html><body><h1>Page not found</h1></body></html>\n", "not_found"))
        return caps


def _record_id(rng: random.Random) -> str:
    return f"<urn:uuid:{uuid.UUID(int=rng.getrandbits(128), version=4)}>"


def write_warc(captures: list[Capture], path: Path, seed: int) -> Iterator[Capture]:
    """Write one gzipped response record per capture; record ids come from ``seed`` so bytes repeat."""
    rng = random.Random(seed)
    reasons = {200: "OK", 301: "Moved Permanently", 404: "Not Found"}
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for cap in captures:
            body = cap.html.encode("utf-8")
            when = dt.datetime.strptime(cap.timestamp, "%Y%m%d%H%M%S")
            headers = [
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Length", str(len(body))),
                ("Date", when.strftime("%a, %d %b %Y %H:%M:%S GMT")),
                ("Server", "Apache"),
            ]
            if cap.location:
                headers.append(("Location", cap.location))
            http = StatusAndHeaders(f"{cap.status} {reasons[cap.status]}", headers, protocol="HTTP/1.1")
            record = writer.create_warc_record(
                cap.url, "response", payload=io.BytesIO(body), http_headers=http,
                warc_headers_dict={"WARC-Date": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "WARC-Record-ID": _record_id(rng)},
            )
            writer.write_record(record)
            yield cap


def article_truth(art: SampleArticle) -> dict:
    """What the extractor should recover from an article page (the ``articles.jsonl`` record)."""
    return {
        "article_id": art.article_id,
        "headline": art.headline,
        "published": art.published.strftime("%Y-%m-%dT%H:%M:%S"),
        "intro": plain(art.intro),
        "lead": [plain(p) for p in art.lead],
        "sections": [
            {"heading": s.heading, "paragraphs": [plain(p) for p in s.paragraphs], "bullet": s.bullet}
            for s in art.sections
        ],
        "links": sorted({href for p in (art.intro, *art.lead, *(q for s in art.sections for q in s.paragraphs))
                         for _, href in p if href}),
        "topic": art.topic,
    }


def capture_row(cap: Capture) -> dict:
    row = asdict(cap)
    row.pop("html")
    row.pop("extra_headers")
    return row
