"""Which failures are worth retrying.

Retrying a bad URL, a parse error or a full disk only repeats the failure and hides it behind a delay; a
dropped connection, a timeout or an HTTP 429/5xx often succeeds a moment later. Prefect tasks retry only
when :func:`is_transient` says so (see ``flows/_common.py``).
"""

from __future__ import annotations

import errno

# The one list of retryable HTTP statuses: Prefect's retry condition, the crawler's RETRY_HTTP_CODES and the CDX
# client's urllib3 Retry all read it. 522/524: origin timeouts reported by a CDN edge in front of an archive.
RETRYABLE_HTTP_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504, 522, 524})
_RETRYABLE_ERRNO = frozenset({errno.EAGAIN, errno.EBUSY, errno.ETIMEDOUT, errno.ECONNRESET, errno.ECONNREFUSED,
                              errno.ECONNABORTED, errno.EPIPE, errno.ENETUNREACH, errno.EHOSTUNREACH})


def http_status_of(exc: BaseException) -> int | None:
    """The HTTP status carried by a requests/httpx/elasticsearch/urllib error, if any."""
    for attr in ("status_code", "status", "code"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(exc, "response", None)
    for attr in ("status_code", "status"):
        value = getattr(response, attr, None)
        if isinstance(value, int):
            return value
    return None


def is_transient(exc: BaseException) -> bool:
    """True for network hiccups and server-side overload; False for everything a retry cannot fix."""
    status = http_status_of(exc)
    if status is not None:
        return status in RETRYABLE_HTTP_STATUS
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    if isinstance(exc, OSError) and exc.errno in _RETRYABLE_ERRNO:
        return True
    name = type(exc).__name__  # client libraries' own connection/timeout classes, without importing them all
    return any(key in name for key in ("ConnectionError", "Timeout", "ConnectTimeout", "ReadTimeout"))
