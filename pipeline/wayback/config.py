"""The ``archive`` section of params.yaml: which archive discover and crawl read."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure


class ArchiveParams(StrictModel):
    """Where discover and crawl read captures: ``local`` (pywb over WARC files) or a Wayback base URL."""

    endpoint: Infrastructure[str] = Field(description="'local' or e.g. https://web.archive.org")
    local_warcs: Infrastructure[list[str]]
    collection: Infrastructure[str] = Field(description="pywb collection name: letters, digits, '_' and '-'")

    @field_validator("collection")
    @classmethod
    def _check_collection(cls, value: str) -> str:
        # a name, never a path: the pywb helper rebuilds <root>/collections/<name>
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", value):
            raise ValueError("must be a plain name of letters, digits, '_' and '-' (not a path)")
        return value

    @field_validator("endpoint")
    @classmethod
    def _check_endpoint(cls, value: str) -> str:
        if value != "local" and not value.startswith(("http://", "https://")):
            raise ValueError("must be 'local' or an http(s) URL such as https://web.archive.org")
        return value
