"""Search backends behind one interface (BEIR's): ``index(docs)`` and ``search({qid: text}, k) -> {qid: {doc_id: score}}``."""

from __future__ import annotations

from pipeline.search.base import SearchBackend, make_backend

__all__ = ["SearchBackend", "make_backend"]
