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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from pipeline.common.transient import RETRYABLE_HTTP_STATUS

def user_agent(contact: str | None) -> str:
    """Who is asking and how to reach them (``crawl.contact``), as archives ask of research crawlers: the
    one User-Agent of the CDX client and the crawler."""
    return "qa-pipeline/0.1 (reading-comprehension research crawler" + (f"; +{contact})" if contact else ")")


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


class CdxFormatError(ValueError):
    """A CDX reply that is not either server's JSON output."""


_MAX_LINE = 1 << 20  # a CDX row is a few hundred bytes


def iter_cdx_json(lines: Iterable[str]) -> Iterator[CdxCapture | _ResumeKey]:
    """Captures (and a final resume key) from either server's JSON output, one line at a time: a reply of
    a million rows (a server that ignores ``limit``) is never held whole. The Internet Archive writes one
    row per line inside one array (``[["urlkey",...],\n["com,bbc)/...",...],\n...]``), or the whole array
    on one line; pywb writes one object per line."""
    header: list[str] | None = None
    after_empty = False
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                yield CdxCapture.from_fields(json.loads(line))
            except (ValueError, AttributeError) as exc:
                raise CdxFormatError(f"not a CDX JSON line ({exc}): {line[:120]!r}") from None
            continue
        if line.startswith("[["):
            line = line[1:]
        if line.endswith("]]"):
            line = line[:-1]
        try:
            rows = json.loads("[" + line.rstrip(",") + "]")
        except ValueError as exc:
            raise CdxFormatError(f"not a CDX JSON row ({exc}): {line[:120]!r}") from None
        for row in rows:
            if not isinstance(row, list):
                raise CdxFormatError(f"not a CDX JSON row: {str(row)[:120]!r}")
            if header is None:
                header = [str(f) for f in row]
            elif not row:
                after_empty = True
            elif after_empty and len(row) == 1:
                yield _ResumeKey(str(row[0]))
            else:
                yield CdxCapture.from_fields(dict(zip(header, row, strict=False)))


class _ResumeKey(str):
    """The Internet Archive's resume key, the last row of a page."""


def parse_cdx_json(text: str) -> tuple[list[CdxCapture], str | None]:
    """Captures and the resume key (if any) from either server's JSON output."""
    caps: list[CdxCapture] = []
    resume = None
    for item in iter_cdx_json(text.splitlines()):
        if isinstance(item, _ResumeKey):
            resume = str(item)
        else:
            caps.append(item)
    return caps, resume


def _response_lines(resp: requests.Response, max_line: int = _MAX_LINE) -> Iterator[str]:
    """Lines of a streamed reply, each bounded: one endless line cannot fill memory either."""
    buf = b""
    for chunk in resp.iter_content(1 << 16):
        buf += chunk
        *complete, buf = buf.split(b"\n")
        for line in complete:
            yield line.decode("utf-8", "replace")
        if len(buf) > max_line:
            raise CdxFormatError(f"{resp.url}: a CDX line longer than {max_line} bytes")
    if buf:
        yield buf.decode("utf-8", "replace")


MAX_RETRY_AFTER_S = 300.0  # a server asking for more is asked again after this long
MAX_REDIRECTS = 5


class CappedRetry(Retry):
    """urllib3's retry, whose ``Retry-After`` wait is capped: ``Retry-After: 100000`` from a server (or a
    stranger in the middle) would otherwise stall discover for 28 hours."""

    def parse_retry_after(self, retry_after: str) -> float:
        return min(super().parse_retry_after(retry_after), MAX_RETRY_AFTER_S)


def retrying_session(total: int = 5, backoff: float = 2.0, contact: str | None = None) -> requests.Session:
    session = requests.Session()
    retry = CappedRetry(total=total, backoff_factor=backoff, status_forcelist=sorted(RETRYABLE_HTTP_STATUS),
                        allowed_methods=frozenset({"GET", "HEAD"}), respect_retry_after_header=True,
                        raise_on_status=False, backoff_max=MAX_RETRY_AFTER_S)
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = user_agent(contact)
    return session


class CdxClient:
    def __init__(self, cdx_url: str, session: requests.Session | None = None, timeout: float = 60.0):
        self.cdx_url = cdx_url
        self.session = session or retrying_session()
        self.timeout = timeout

    def query(self, url: str, *, match_type: str = "prefix", start: str | None = None, end: str | None = None,
              filters: tuple[str, ...] = ("statuscode:200", "mimetype:text/html"), page_size: int,
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
            resume = None
            with self._get(params) as resp:
                resp.raise_for_status()
                for cap in iter_cdx_json(_response_lines(resp)):
                    if isinstance(cap, _ResumeKey):
                        resume = str(cap)
                        continue
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

    def _get(self, params: dict[str, object]) -> requests.Response:
        """The CDX reply, following redirects on the archive's own host only: a 302 to another host would send
        the query (and the contact address) wherever the reply says, and take its answer as the archive's."""
        home = urlsplit(self.cdx_url)
        url: str = self.cdx_url
        query: dict[str, object] | None = params
        for _ in range(MAX_REDIRECTS + 1):
            resp = self.session.get(url, params=query, timeout=self.timeout, stream=True, allow_redirects=False)
            if not resp.is_redirect:
                return resp
            target = urljoin(resp.url, resp.headers.get("Location", ""))
            resp.close()
            there = urlsplit(target)
            if (there.scheme, there.hostname, there.port) != (home.scheme, home.hostname, home.port):
                raise CdxFormatError(f"{self.cdx_url}: redirected to another host ({there.scheme}://{there.hostname}"
                                     f"{':' + str(there.port) if there.port else ''}); not followed")
            url, query = target, None  # the Location carries the query
        raise CdxFormatError(f"{self.cdx_url}: more than {MAX_REDIRECTS} redirects")
