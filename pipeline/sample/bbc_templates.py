"""HTML for sample BBC News captures, written in the real page templates.

The markup copies the structure of real BBC pages (see ``../shared/fixtures/bbc``): what an extractor must
find (headline, date, canonical URL, intro, sub-headings, paragraphs, bullet lists, in-body links) sits
inside the same elements and classes as on bbc.co.uk, and so does what it must strip (navigation, cookie
banner, figures with captions, advert slots, share tools, related links, tag lists, scripts and styles).

Template eras, by capture date:
- ``story-body`` (2014 to April 2020): ``div.story-body__inner``, ``h2.story-body__crosshead``,
  ``p.story-body__introduction``, ``ul.story-body__unordered-list``, date in ``div.date[data-seconds]``.
- ``data-component`` with emotion ``css-*`` classes (2020 on): ``div[data-component=text-block]``,
  ``div[data-component=crosshead-block] h2``, ``div[data-component=unordered-list-block]``,
  ``time[datetime]``.
- ``data-component`` with styled-components ``sc-*`` classes: the same blocks, sub-headings in
  ``div[data-component=subheadline-block] h2``, headline in ``div[data-component=headline-block] h1``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from html import escape

# A paragraph is a run of text segments; a segment with an href is an in-body hyperlink.
Segment = tuple[str, str | None]
Paragraph = tuple[Segment, ...]


def plain(paragraph: Paragraph) -> str:
    return "".join(text for text, _ in paragraph)


@dataclass(frozen=True)
class Section:
    heading: str
    paragraphs: tuple[Paragraph, ...]
    bullet: bool = False


@dataclass(frozen=True)
class SampleArticle:
    article_id: str  # e.g. "world-europe-36108166", the last path segment of its URL
    section_label: str  # e.g. "Europe"
    headline: str
    published: dt.datetime
    intro: Paragraph
    lead: tuple[Paragraph, ...]  # paragraphs between the intro and the first sub-heading
    sections: tuple[Section, ...]
    related: tuple[tuple[str, str], ...]  # (href, headline) for the related-links box, outside the body
    topic: str


# --------------------------------------------------------------------------------------------- shared chrome

_ORB_HEADER = """<div id="orb-banner" role="banner"><div id="bbccookies" class="bbccookies-banner">
<p class="bbccookies-text">We use cookies to give you the best online experience. Please let us know if you agree to all
of these cookies.</p> <ul class="orb-banner-options"> <li id="bbccookies-continue"><button type="button"
id="bbccookies-continue-button">Yes, I agree</button></li> <li id="bbccookies-settings"><a
href="/usingthebbc/cookies/how-can-i-change-my-bbc-cookie-settings/">No, take me to settings</a></li></ul></div>
<div id="orb-header" class="orb-nav-pri orb-nav-pri-white"><a href="https://www.bbc.co.uk" id="homepage-link">BBC
Homepage</a><ul id="orb-nav-links" class="orb-nav-links"><li class="orb-nav-home"><a href="/">Home</a></li><li
class="orb-nav-newsdotcom"><a href="/news">News</a></li><li class="orb-nav-sport"><a href="/sport">Sport</a></li>
<li class="orb-nav-weather"><a href="/weather">Weather</a></li><li class="orb-nav-iplayer"><a href="/iplayer">iPlayer</a>
</li></ul></div></div>"""

_ORB_FOOTER = """<div id="orb-footer" class="orb-footer"><ul class="orb-footer-links"><li><a href="/usingthebbc/terms/">
Terms of Use</a></li><li><a href="/aboutthebbc">About the BBC</a></li><li><a href="/usingthebbc/privacy/">Privacy
Policy</a></li><li><a href="/usingthebbc/cookies/">Cookies</a></li></ul><p class="orb-footer-copyright">Copyright
&copy; 2020 BBC. The BBC is not responsible for the content of external sites.
<a href="/editorialguidelines/guidance/feeds-and-links">Read about our approach to external linking.</a></p></div>"""

_SCRIPTS = """<script type="text/javascript">window.bbcpage = {"contentType":"article","section":"news"};
(function(){ if (window.bbcdotcom && bbcdotcom.init) { bbcdotcom.init({adsToDisplay:['leaderboard','mpu']}); } })();
</script><noscript><img src="https://ssc.api.bbc.com/?c1=2&amp;c2=19293874" alt=""/></noscript>"""


def _head(title: str, canonical: str, description: str, extra: str = "") -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en-GB" class="b-pw-1280"><head><meta charset="utf-8">'
        f"<title>{escape(title)} - BBC News</title>"
        f'<meta name="description" content="{escape(description)}">'
        '<meta property="og:site_name" content="BBC News"><meta property="og:type" content="article">'
        f'<meta property="og:title" content="{escape(title)}">'
        f'<meta property="og:url" content="{escape(canonical)}">'
        f'<link rel="canonical" href="{escape(canonical)}">{extra}'
        '<style>.orb-nav-pri{display:block}.story-body{margin:0 auto}</style></head>\n'
    )


def _inline(paragraph: Paragraph, link_class: str) -> str:
    out = []
    for text, href in paragraph:
        if href:
            out.append(f'<a href="{escape(href)}" class="{link_class}">{escape(text)}</a>')
        else:
            out.append(escape(text))
    return "".join(out)


def _share_tools() -> str:
    return (
        '<div class="share share--lightweight"><h2 class="share__title">Share this with</h2><ul class="share__tools">'
        '<li class="share__tool share__tool--email"><a href="mailto:?subject=Shared%20from%20BBC%20News">Email</a></li>'
        '<li class="share__tool share__tool--facebook"><a href="https://www.facebook.com/dialog/share">Facebook</a></li>'
        '<li class="share__tool share__tool--twitter"><a href="https://twitter.com/intent/tweet">Twitter</a></li>'
        "</ul></div>"
    )


# ---------------------------------------------------------------------------- story-body (2014 - April 2020)


def render_story_body(article: SampleArticle, canonical: str, image_seed: int) -> str:
    """The 'responsive news' article page of 2014 to spring 2020."""
    seconds = int(article.published.replace(tzinfo=dt.timezone.utc).timestamp())
    figure = (
        '<figure class="media-landscape has-caption full-width lead"><span class="image-and-copyright-container">'
        f'<img class="js-image-replace" alt="{escape(article.headline)}" '
        f'src="https://ichef.bbci.co.uk/news/624/cpsprodpb/{image_seed:05X}/production/_{image_seed}.jpg" '
        'width="976" height="549"><span class="off-screen">Image copyright</span>'
        '<span class="story-image-copyright">Getty Images</span></span>'
        '<figcaption class="media-caption"><span class="off-screen">Image caption</span>'
        f'<span class="media-caption__text">{escape(article.headline)}, pictured in an archive photograph'
        "</span></figcaption></figure>"
    )
    advert = (
        '<div id="bbccom_mpu_1_2_3" class="bbccom_slot mpu-ad" aria-hidden="true"><div class="bbccom_advert">'
        "<script type=\"text/javascript\">(function(){ if (window.bbcdotcom) { bbcdotcom.adverts.slotAsync('mpu',"
        " [1,2,3]); } })();</script></div></div>"
    )
    body = [figure, f'<p class="story-body__introduction">{_inline(article.intro, "story-body__link")}</p>']
    body += [f'<p>{_inline(p, "story-body__link")}</p>' for p in article.lead]
    body.append(advert)
    for i, section in enumerate(article.sections):
        body.append(f'<h2 class="story-body__crosshead">{escape(section.heading)}</h2>')
        if section.bullet:
            items = "".join(f'<li class="story-body__list-item">{_inline(p, "story-body__link")}</li>'
                            for p in section.paragraphs)
            body.append(f'<ul class="story-body__unordered-list">{items}</ul>')
        else:
            body += [f'<p>{_inline(p, "story-body__link")}</p>' for p in section.paragraphs]
        if i == 0 and len(article.sections) > 2:
            body.append(
                '<figure class="media-with-caption"><div class="media-player-wrapper">'
                '<div class="media-player" data-playable="true">Media playback is unsupported on your device</div>'
                '</div><figcaption class="media-with-caption__caption"><span class="off-screen">Media caption</span>'
                "Our correspondent explains what is at stake</figcaption></figure>"
            )
    related = "".join(
        f'<li class="unordered-list__item"><a class="unordered-list__link" href="{escape(href)}">'
        f"{escape(title)}</a></li>" for href, title in article.related
    )
    date_str = article.published.strftime("%-d %B %Y")
    return (
        _head(article.headline, canonical, plain(article.intro))
        + '<body class="news">'
        + _ORB_HEADER
        + '<div id="site-container"><div class="container-width-only"><div class="column--primary">'
        + '<div class="story-body"><h1 class="story-body__h1">'
        + escape(article.headline)
        + '</h1><div class="story-body__mini-info-list-and-share"><ul class="mini-info-list">'
        + f'<li class="mini-info-list__item"><div class="date date--v2" data-seconds="{seconds}" '
        + f'data-datetime="{date_str}">{date_str}</div></li>'
        + '<li class="mini-info-list__item"><span class="mini-info-list__section-desc off-screen">From the section '
        + f'</span><a href="/news/{article.article_id.rsplit("-", 1)[0]}" class="mini-info-list__section">'
        + f"{escape(article.section_label)}</a></li></ul>"
        + _share_tools()
        + '</div><div class="story-body__inner" property="articleBody">'
        + "".join(body)
        + "</div></div>"
        + '<div class="story-more"><div class="group story-alsos more-on-this-story"><h2 class="group__title">'
        + f'More on this story</h2><ul class="unordered-list">{related}</ul></div></div>'
        + '<div class="tags-container"><h2 class="tags-title">Related Topics</h2><ul class="tags-list">'
        + f'<li class="tags-list__tags"><a href="/news/topics/{escape(article.topic.lower())}">'
        + f"{escape(article.topic)}</a></li></ul></div>"
        + "</div></div></div>"
        + _ORB_FOOTER
        + _SCRIPTS
        + "</body></html>\n"
    )


# -------------------------------------------------------------------------- data-component (2020 and after)


def render_data_component(article: SampleArticle, canonical: str, image_seed: int, style: str) -> str:
    """The React-rendered article page: ``style`` 'css' (emotion, crosshead-block) or 'sc' (subheadline-block)."""
    if style not in ("css", "sc"):
        raise ValueError(f"style must be 'css' or 'sc', got {style!r}")
    css = style == "css"
    block = "css-uf6wea-RichTextComponentWrapper e1xue1i82" if css else "sc-18fde0d6-0 dlWCEZ"
    para_cls = "css-83cqas-RichTextContainer e5tfeyi2" if css else "sc-eb7bd5f6-0 fYAfXe"
    link_cls = "css-yidnqd-InlineLink e1no5rhv0" if css else "sc-f9178328-0 bGFWdi"
    heading_block = "crosshead-block" if css else "subheadline-block"
    iso = article.published.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def text_block(p: Paragraph, intro: bool = False) -> str:
        inner = _inline(p, link_cls)
        if intro:
            inner = f"<b>{inner}</b>"
        if css:
            return (f'<div data-component="text-block" class="{block}"><style data-emotion-css="83cqas">'
                    f'.css-83cqas-RichTextContainer{{color:#3F3F42;}}</style><div class="{para_cls}">'
                    f"<p>{inner}</p></div></div>")
        return f'<div data-component="text-block" class="{block}"><p class="{para_cls}">{inner}<!-- --></p></div>'

    def image_block(n: int) -> str:
        return (
            f'<div data-component="image-block" class="{block}"><figure><div><span><img alt="Archive image" '
            f'src="https://ichef.bbci.co.uk/news/976/cpsprodpb/{image_seed + n:05X}/production/_{image_seed + n}.jpg"'
            ' width="976" height="549"/><span role="text"><span class="visually-hidden">Image source, </span>'
            f"Getty Images</span></span></div><figcaption><span class=\"visually-hidden\">Image caption, </span>"
            f"{escape(article.headline)} in an archive photograph</figcaption></figure></div>"
        )

    blocks = [image_block(0), text_block(article.intro, intro=True)]
    blocks += [text_block(p) for p in article.lead]
    for i, section in enumerate(article.sections):
        h_cls = "css-1jlqpzd-StyledHeading e1fj1fc10" if css else "sc-518485e5-0 kRvAla"
        blocks.append(f'<div data-component="{heading_block}" class="{block}"><h2 class="{h_cls}">'
                      f"{escape(section.heading)}{'' if css else '<!-- -->'}</h2></div>")
        if section.bullet:
            items = "".join(f"<li>{_inline(p, link_cls)}</li>" for p in section.paragraphs)
            blocks.append(f'<div data-component="unordered-list-block" class="{block}"><div class="{para_cls}">'
                          f'<div class="BulletListContainer"><ul role="list">{items}</ul></div></div></div>')
        else:
            blocks += [text_block(p) for p in section.paragraphs]
        if i == 1:
            blocks.append(image_block(i + 1))
    related = "".join(f'<li><a href="{escape(href)}">{escape(title)}</a></li>' for href, title in article.related)
    headline_block = (
        f'<div data-component="headline-block" class="{block}"><h1 id="main-heading" '
        f'class="{"css-1nlxtg2-StyledHeading e1fj1fc10" if css else "sc-518485e5-0 bWszMR"}">'
        f"{escape(article.headline)}</h1></div>"
    )
    byline = (
        f'<div data-component="byline-block" class="{block}"><div><span><time dateTime="{iso}">'
        f'{article.published.strftime("%-d %B %Y")}</time></span></div></div>'
    )
    return (
        _head(article.headline, canonical, plain(article.intro),
              extra=f'<link rel="amphtml" href="{escape(canonical.replace("/news/", "/news/amp/"))}">')
        + '<body><div id="__next">'
        + _ORB_HEADER
        + '<div id="main-content"><article>'
        + headline_block
        + byline
        + "".join(blocks)
        + f'<section data-component="links-block" class="{block}"><h2>Related Internet Links</h2><ul role="list">'
        + related
        + "</ul></section>"
        + f'<section data-component="tag-list" class="{block}"><div><h2>More on this story</h2><ul role="list">'
        + f'<li><a href="/news/topics/{escape(article.topic.lower())}">{escape(article.topic)}</a></li></ul></div>'
        + "</section></article></div>"
        + _ORB_FOOTER
        + '<script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{"page":"article"}}}</script>'
        + "</div></body></html>\n"
    )


# ------------------------------------------------------------------------------------ non-article captures


def render_index_page(title: str, canonical: str, links: list[tuple[str, str]]) -> str:
    """A section front or the News home page: promo lists, no article body."""
    promos = "".join(
        f'<div class="gs-c-promo"><a class="gs-c-promo-heading" href="{escape(h)}"><h3 class="gs-c-promo-heading__title">'
        f"{escape(t)}</h3></a><p class=\"gs-c-promo-summary\">{escape(t)}: the latest.</p></div>" for h, t in links
    )
    return (_head(title, canonical, f"{title} news from the BBC") + "<body>" + _ORB_HEADER
            + f'<div id="site-container"><h1 class="gs-u-vh">{escape(title)}</h1>'
            + f'<div class="gel-layout">{promos}</div></div>' + _ORB_FOOTER + _SCRIPTS + "</body></html>\n")


def render_video_page(title: str, canonical: str, summary: str) -> str:
    """A ``/news/av/`` page: a media player and a one-line summary, no text body."""
    return (_head(title, canonical, summary) + "<body>" + _ORB_HEADER
            + '<div id="main-content"><article><div data-component="headline-block"><h1>'
            + escape(title) + '</h1></div><div data-component="media-block"><div class="media-player" '
            + 'data-playable="true">Media playback is unsupported on your device</div></div>'
            + f'<div class="video-summary"><p>{escape(summary)}</p></div></article></div>'
            + _ORB_FOOTER + _SCRIPTS + "</body></html>\n")


def render_live_page(title: str, canonical: str, entries: list[str]) -> str:
    """A ``/news/live/`` page: a stream of timestamped posts."""
    posts = "".join(
        f'<article class="lx-stream-post"><header class="lx-stream-post__header"><span class="qa-post-time">'
        f"{9 + i:02d}:{(7 * i) % 60:02d}</span><h3 class=\"lx-stream-post__header-title\">Update {i + 1}</h3></header>"
        f'<div class="lx-stream-post-body"><p>{escape(text)}</p></div></article>' for i, text in enumerate(entries)
    )
    return (_head(title, canonical, "Live coverage") + "<body>" + _ORB_HEADER
            + f'<div id="lx-stream" class="lx-stream"><h1 class="lx-stream__title">{escape(title)}</h1>{posts}</div>'
            + _ORB_FOOTER + _SCRIPTS + "</body></html>\n")


def render_gallery_page(title: str, canonical: str, captions: list[str]) -> str:
    """An ``in_pictures`` gallery: images with captions, no article text."""
    figures = "".join(
        f'<figure class="media-landscape has-caption"><img src="https://ichef.bbci.co.uk/news/624/{i}.jpg" alt="">'
        f'<figcaption class="media-caption"><span class="media-caption__text">{escape(c)}</span></figcaption></figure>'
        for i, c in enumerate(captions)
    )
    return (_head(title, canonical, "In pictures") + "<body>" + _ORB_HEADER
            + f'<div class="story-body"><h1 class="story-body__h1">{escape(title)}</h1>'
            + f'<div class="story-body__inner" property="articleBody">{figures}</div></div>'
            + _ORB_FOOTER + _SCRIPTS + "</body></html>\n")
