"""Retry with exponential back-off that honours ``Retry-After``; no redirect off the archive's host.

Scrapy's RetryMiddleware re-queues a failed request at once and ignores ``Retry-After``; against the
Wayback Machine that turns a 429 into a burst of 429s. This subclass waits before handing the retry back:
``max(Retry-After, base * 2**attempt)``, capped at ``RETRY_BACKOFF_MAX``. The wait is an asyncio sleep on
this one request; the rest of the crawl goes on (Scrapy runs on the asyncio reactor).
"""

from __future__ import annotations

import asyncio
import email.utils
import time

from urllib.parse import urljoin, urlsplit

from scrapy.downloadermiddlewares.retry import RetryMiddleware, get_retry_request
from scrapy.utils.response import response_status_message


def retry_after_seconds(value: bytes | str | None) -> float | None:
    """``Retry-After`` as seconds: either delta-seconds or an HTTP date."""
    if not value:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class BackoffRetryMiddleware(RetryMiddleware):
    def __init__(self, settings):
        super().__init__(settings)
        self.base = settings.getfloat("RETRY_BACKOFF_BASE", 2.0)
        self.cap = settings.getfloat("RETRY_BACKOFF_MAX", 300.0)

    def _retry_request(self, request, reason):
        """Scrapy's public ``get_retry_request`` (counts, stats and the give-up log), with the per-request
        ``max_retry_times`` a request may carry in its meta."""
        return get_retry_request(request, spider=self.crawler.spider, reason=reason,
                                 max_retry_times=request.meta.get("max_retry_times", self.max_retry_times),
                                 priority_adjust=request.meta.get("priority_adjust", self.priority_adjust))

    def _delay(self, request, retry_after: float | None) -> float:
        attempt = request.meta.get("retry_times", 0)
        delay = min(self.cap, self.base * (2 ** attempt))
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.cap))
        return delay

    async def process_response(self, request, response, spider=None):
        if request.meta.get("dont_retry", False) or response.status not in self.retry_http_codes:
            return response
        retry = self._retry_request(request, response_status_message(response.status))
        if retry is None:
            return response  # out of retries: the spider records the failure
        await asyncio.sleep(self._delay(request, retry_after_seconds(response.headers.get("Retry-After"))))
        return retry

    async def process_exception(self, request, exception, spider=None):
        if request.meta.get("dont_retry", False) or not isinstance(exception, self.exceptions_to_retry):
            return None
        retry = self._retry_request(request, exception)
        if retry is None:
            return None
        await asyncio.sleep(self._delay(request, None))
        return retry


_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


class SameOriginRedirectMiddleware:
    """A redirect to another scheme, host or port is not followed: the archive's replay redirects only
    between its own captures, and a page from elsewhere (or a request to an internal address) has no place
    in the crawl. Runs before Scrapy's RedirectMiddleware (higher order: process_response goes first) and
    marks such a response ``dont_redirect``; the spider records it as a failure naming the target host."""

    def process_response(self, request, response, spider=None):
        if response.status in _REDIRECTS and b"Location" in response.headers:
            location = response.headers[b"Location"].decode("latin-1")
            target = urljoin(request.url, location)
            if _origin(target) != _origin(request.url):
                request.meta["dont_redirect"] = True
                request.meta["offsite_redirect"] = _origin(target)[1] or target[:100]
        return response
