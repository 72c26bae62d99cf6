"""Calls to a test's Prefect server as Prefect's own client makes them: retried on 429, 502 and 503.

The server's SQLite database answers 503 ("Service Unavailable": SQLITE_BUSY, ``is_client_retryable_exception``
in prefect/server/api/server.py) while another writer holds it, which a loaded CI machine makes likely; Prefect's
client retries those answers, so a test that calls the API directly does too, and fails on anything else."""

from __future__ import annotations

import time
from typing import Any

import httpx

RETRIED = (429, 502, 503)


def request(method: str, url: str, *, attempts: int = 6, **kwargs: Any) -> httpx.Response:
    kwargs.setdefault("timeout", 10)
    for attempt in range(attempts):
        res = httpx.request(method, url, **kwargs)
        if res.status_code not in RETRIED or attempt == attempts - 1:
            return res
        time.sleep(min(2 ** attempt, 10))
    raise AssertionError("unreachable")


def get(url: str, **kwargs: Any) -> httpx.Response:
    return request("GET", url, **kwargs)


def post(url: str, **kwargs: Any) -> httpx.Response:
    return request("POST", url, **kwargs)


def delete(url: str, **kwargs: Any) -> httpx.Response:
    return request("DELETE", url, **kwargs)
