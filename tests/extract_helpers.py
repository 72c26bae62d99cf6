"""``extract_page`` as the extract stage calls it: with the project's page limits (params.yaml ``extract``);
a test that is about one limit overrides it by name."""

from __future__ import annotations

from dataclasses import replace

from pipeline.nlquad.extract import Extraction
from pipeline.nlquad.page_limits import PageLimits
from pipeline.nlquad.extract import extract_page as _extract_page
from pipeline.params import project_section

LIMITS = PageLimits.of(project_section("extract"))


def extract_page(html: str | bytes, url: str | None = None, **limits: int) -> Extraction:
    return _extract_page(html, url, replace(LIMITS, **limits))
