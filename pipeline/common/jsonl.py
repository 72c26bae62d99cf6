"""Reading JSON Lines: one reader for every ``.jsonl`` the pipeline consumes, so a bad line is reported the
same way everywhere: the file, the line number and what was expected there."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def iter_jsonl(path: str | Path, what: str = "JSON line", parse: Callable[[Any], T] | None = None,
               error: type[ValueError] = ValueError) -> Iterator[T]:
    """Each non-blank line parsed as JSON and, with ``parse``, turned into a record; a line that is not JSON,
    or that ``parse`` rejects (a missing key, a wrong type), raises ``error`` naming ``path:line``."""
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                record = parse(row) if parse is not None else row
            except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
                raise error(f"{path}:{lineno}: not a {what} ({type(exc).__name__}: {exc})") from None
            yield record
