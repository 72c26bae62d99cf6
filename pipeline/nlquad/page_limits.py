"""What a page may be before it is parsed: size, nesting depth, element count (``PageLimits``, from params'
``extract`` section). The crawler's link extraction and the extractor read the same limits, so a hostile page is
not parsed by one and refused by the other; the shape is probed with lxml's parser target, holding no tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lxml import etree


class _ShapeProbe:
    """lxml parser target that stops at ``max_depth`` levels of nesting or ``max_elements`` elements: a page
    built to be deep or wide (a million ``<li>``) costs BeautifulSoup seconds to minutes and hundreds of
    megabytes, this probe a fraction of that, holding no tree."""

    class TooDeep(Exception):
        pass

    class TooMany(Exception):
        pass

    def __init__(self, max_depth: int, max_elements: int):
        self.max_depth, self.max_elements, self.depth, self.count = max_depth, max_elements, 0, 0

    def start(self, tag, attrib) -> None:
        self.depth += 1
        self.count += 1
        if self.depth > self.max_depth:
            raise self.TooDeep
        if self.count > self.max_elements:
            raise self.TooMany

    def end(self, tag) -> None:
        self.depth -= 1

    def close(self) -> None:
        return None


def shape_rejection(html: str | bytes, max_depth: int, max_elements: int) -> str | None:
    """``too_deep``, ``too_many_elements`` or None."""
    parser = etree.HTMLParser(target=_ShapeProbe(max_depth, max_elements))
    try:
        parser.feed(html)
        parser.close()
    except _ShapeProbe.TooDeep:
        return "too_deep"
    except _ShapeProbe.TooMany:
        return "too_many_elements"
    except etree.LxmlError:
        return None  # left to the real parse, which is lenient
    return None


@dataclass(frozen=True)
class PageLimits:
    """What a page may be before it is rejected (params.yaml ``extract``; the crawler's link extraction uses
    the same, so a hostile page is not parsed by one and refused by the other)."""

    min_words: int
    max_bytes: int
    max_depth: int
    max_elements: int
    max_sections: int

    @classmethod
    def of(cls, extract: Any) -> "PageLimits":
        """From the ``extract`` params section (its ``max_page_bytes`` is ``max_bytes`` here)."""
        return cls(extract.min_words, extract.max_page_bytes, extract.max_depth, extract.max_elements,
                   extract.max_sections)
