"""The ``crawl`` section of params.yaml: the crawler's politeness, retries and reach."""

from __future__ import annotations

from pydantic import Field

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure


class CrawlParams(StrictModel):
    """The Scrapy crawl of discovered captures (``crawl`` stage)."""

    requests_per_minute: Infrastructure[float] = Field(ge=0, description="hard average rate; 0 lifts the limit")
    autothrottle: Infrastructure[bool]
    concurrency: Infrastructure[int] = Field(ge=1, le=64)
    retries: Infrastructure[int] = Field(ge=0)
    backoff_base_s: Infrastructure[float] = Field(ge=0)
    backoff_max_s: Infrastructure[float] = Field(ge=0)
    timeout_s: Infrastructure[float] = Field(gt=0)
    follow_depth: Infrastructure[int] = Field(ge=0, description="links followed from article bodies, in hops")
    contact: Infrastructure[str | None] = Field(
        description="an e-mail or URL the archive can reach you at, sent in the User-Agent; "
                    "required when archive.endpoint is a live archive")
