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
import socket
import threading
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


@dataclass(frozen=True, slots=True)
class CdxCapture:
    url: str
    timestamp: str
    status: str
    mime: str
    digest: str

    @staticmethod
    def from_fields(fields: dict[str, str]) -> "CdxCapture":
        if not isinstance(fields, dict) or "timestamp" not in fields or not (fields.get("original") or
                                                                             fields.get("url")):
            raise CdxFormatError(f"a CDX row without its url or timestamp: {str(fields)[:120]!r}")
        named = ("original", "url", "timestamp", "statuscode", "status", "mimetype", "mime", "digest")
        wrong = [k for k in named if fields.get(k) is not None and not isinstance(fields[k], str)]
        if wrong:  # every CDX field is text; a number here would fail later, far from the reply that sent it
            raise CdxFormatError(f"a CDX row whose {', '.join(wrong)} is not text: {str(fields)[:120]!r}")
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
                fields = json.loads(line)
            except ValueError as exc:
                raise CdxFormatError(f"not a CDX JSON line ({exc}): {line[:120]!r}") from None
            yield CdxCapture.from_fields(fields)
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


def _abort(resp: requests.Response) -> None:
    """Shut the reply's socket from another thread: a read blocked on it returns at once (closing alone does
    not wake a blocked ``recv``)."""
    connection = getattr(resp.raw, "_connection", None) or getattr(resp.raw, "connection", None)
    sock = getattr(connection, "sock", None)
    if sock is None:  # urllib3 2 hands the connection back while the body streams: the socket under http.client
        fp = getattr(getattr(resp.raw, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    resp.close()


def _response_lines(resp: requests.Response, max_line: int = _MAX_LINE, max_lines: int | None = None,
                    deadline_s: float | None = None) -> Iterator[str]:
    """Lines of a streamed reply, bounded three ways: each line (one endless line cannot fill memory), their
    number (a server that ignores ``limit`` and streams without end), and the whole reply's time (a server that
    drips a byte now and then never trips the socket's idle timeout)."""
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _abort(resp)

    timer = threading.Timer(deadline_s, expire) if deadline_s else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    buf, count = b"", 0
    try:
        for chunk in resp.iter_content(1 << 16):
            buf += chunk
            *complete, buf = buf.split(b"\n")
            for line in complete:
                count += 1
                if max_lines is not None and count > max_lines:
                    raise CdxFormatError(f"{resp.url}: more than {max_lines} lines in one CDX page, "
                                         f"{PAGE_LINES_FACTOR} times what the query asked for; stopped")
                yield line.decode("utf-8", "replace")
            if len(buf) > max_line:
                raise CdxFormatError(f"{resp.url}: a CDX line longer than {max_line} bytes")
        if expired.is_set():
            raise CdxFormatError(f"{resp.url}: the CDX reply took longer than {deadline_s:g} s; stopped")
    except (requests.RequestException, OSError, AttributeError, ValueError):
        if expired.is_set():  # the read the deadline cut short fails in whatever way the library reports it
            raise CdxFormatError(f"{resp.url}: the CDX reply took longer than {deadline_s:g} s; stopped") from None
        raise
    finally:
        if timer is not None:
            timer.cancel()
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


PAGE_DEADLINE_S = 600.0  # a page of 5,000 rows (about 1 MB) takes seconds; a drip would never end
# pywb and some archives ignore ``limit`` and answer a query whole: a page may hold many times the rows asked
# for, but not without end (an endless reply once grew discover to 3.7 GB in 90 s)
PAGE_LINES_FACTOR = 50
# a server that keeps answering with new resume keys (or one that ignores them) would page without end, each page
# under its own cap: the query stops after this many pages, or this many captures in all (the BBC News prefix
# 2016-2020 is some hundreds of thousands of captures at the default page size)
MAX_PAGES = 20_000
MAX_ROWS = 5_000_000


class CdxClient:
    def __init__(self, cdx_url: str, session: requests.Session | None = None, timeout: float = 60.0,
                 page_deadline_s: float = PAGE_DEADLINE_S):
        self.cdx_url = cdx_url
        self.session = session or retrying_session()
        self.timeout = timeout  # idle: between two reads
        self.page_deadline_s = page_deadline_s  # the whole page

    def query(self, url: str, *, match_type: str = "prefix", start: str | None = None, end: str | None = None,
              filters: tuple[str, ...] = ("statuscode:200", "mimetype:text/html"), page_size: int,
              limit: int | None = None, max_pages: int = MAX_PAGES,
              max_rows: int = MAX_ROWS) -> Iterator[CdxCapture]:
        """All captures of ``url`` (a prefix by default) in [start, end], following resume keys; at most
        ``max_pages`` pages and ``max_rows`` rows read in all (a reply past either is an error naming it)."""
        params: dict[str, object] = {"url": url, "matchType": match_type, "output": "json",
                                     "filter": list(filters), "collapse": "digest", "showResumeKey": "true",
                                     "limit": page_size}
        if start:
            params["from"] = start
        if end:
            params["to"] = end
        served = rows = pages = 0
        while True:
            resume = None
            pages += 1
            if pages > max_pages:
                raise CdxFormatError(f"{self.cdx_url}: more than {max_pages} CDX pages for {url!r}; stopped (a "
                                     "server that keeps sending new resume keys)")
            with self._get(params) as resp:
                resp.raise_for_status()
                lines = _response_lines(resp, max_lines=page_size * PAGE_LINES_FACTOR + 16,
                                        deadline_s=self.page_deadline_s)
                for cap in iter_cdx_json(lines):
                    if isinstance(cap, _ResumeKey):
                        resume = str(cap)
                        continue
                    rows += 1
                    if rows > max_rows:
                        raise CdxFormatError(f"{self.cdx_url}: more than {max_rows} CDX rows for {url!r}; stopped")
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
            if resume == params.get("resumeKey"):
                raise CdxFormatError(f"{self.cdx_url}: the same resume key twice ({resume[:60]!r}); stopped")
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
