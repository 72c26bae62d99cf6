"""A thin client for Wayback CDX servers: the Internet Archive's and pywb's, which answer differently.

- Internet Archive (``/cdx/search/cdx?output=json``): one JSON array of arrays, the first row the field
  names; with ``showResumeKey=true`` a page ends with an empty row and then ``[resume_key]``.
- pywb (``/{collection}/cdx?output=json``): one JSON object per line, with its own field names
  (``status`` rather than ``statuscode``, ``mime`` rather than ``mimetype``); no resume keys, and no
  ``collapse=digest`` (so digests are collapsed here too, whatever the server did).

Retries and back-off are urllib3's (``Retry`` honours ``Retry-After``); nothing here re-implements them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from pipeline.common.transient import RETRYABLE_HTTP_STATUS

USER_AGENT = "qa-pipeline/0.1 (reading-comprehension research; https://github.com/) python-requests"


@dataclass(frozen=True)
class CdxCapture:
    url: str
    timestamp: str
    status: str
    mime: str
    digest: str

    @staticmethod
    def from_fields(fields: dict[str, str]) -> "CdxCapture":
        return CdxCapture(
            url=fields.get("original") or fields["url"],
            timestamp=fields["timestamp"],
            status=str(fields.get("statuscode") or fields.get("status") or "-"),
            mime=fields.get("mimetype") or fields.get("mime") or "-",
            digest=fields.get("digest") or "-",
        )


def parse_cdx_json(text: str) -> tuple[list[CdxCapture], str | None]:
    """Captures and the resume key (if any) from either server's JSON output."""
    text = text.strip()
    if not text:
        return [], None
    if text.startswith("["):  # Internet Archive: array of arrays
        rows = json.loads(text)
        if not rows:
            return [], None
        header, body = rows[0], rows[1:]
        resume = None
        if len(body) >= 2 and body[-2] == [] and len(body[-1]) == 1:
            resume, body = body[-1][0], body[:-2]
        return [CdxCapture.from_fields(dict(zip(header, r, strict=False))) for r in body if r], resume
    caps = [CdxCapture.from_fields(json.loads(line)) for line in text.splitlines() if line.strip()]
    return caps, None


def retrying_session(total: int = 5, backoff: float = 2.0) -> requests.Session:
    session = requests.Session()
    retry = Retry(total=total, backoff_factor=backoff, status_forcelist=sorted(RETRYABLE_HTTP_STATUS),
                  allowed_methods=frozenset({"GET", "HEAD"}), respect_retry_after_header=True,
                  raise_on_status=False)
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = USER_AGENT
    return session


class CdxClient:
    def __init__(self, cdx_url: str, session: requests.Session | None = None, timeout: float = 60.0):
        self.cdx_url = cdx_url
        self.session = session or retrying_session()
        self.timeout = timeout

    def query(self, url: str, *, match_type: str = "prefix", start: str | None = None, end: str | None = None,
              filters: tuple[str, ...] = ("statuscode:200", "mimetype:text/html"), page_size: int = 5000,
              limit: int | None = None) -> Iterator[CdxCapture]:
        """All captures of ``url`` (a prefix by default) in [start, end], following resume keys."""
        params: dict[str, object] = {"url": url, "matchType": match_type, "output": "json",
                                     "filter": list(filters), "collapse": "digest", "showResumeKey": "true",
                                     "limit": page_size}
        if start:
            params["from"] = start
        if end:
            params["to"] = end
        served = 0
        while True:
            resp = self.session.get(self.cdx_url, params=params, timeout=self.timeout)
            resp.raise_for_status()
            caps, resume = parse_cdx_json(resp.text)
            for cap in caps:
                # pywb names filter fields differently and ignores unknown ones: re-apply them here
                if "statuscode:200" in filters and cap.status != "200":
                    continue
                if "mimetype:text/html" in filters and cap.mime != "text/html":
                    continue
                yield cap
                served += 1
                if limit and served >= limit:
                    return
            if not resume:
                return
            params["resumeKey"] = resume
