"""StrategyQA records (Geva et al. 2021): question, yes/no answer, decomposition, per-annotator evidence.

``evidence[annotator][step]`` is a list whose items are lists of paragraph ids ``"{title}-{para_index}"``,
or the strings ``"operation"`` / ``"no_evidence"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.common.jsonl import iter_jsonl


@dataclass(frozen=True)
class StrategyQuestion:
    qid: str
    question: str
    answer: bool | None
    decomposition: tuple[str, ...]
    evidence: tuple  # as in the file
    term: str = ""
    facts: tuple[str, ...] = field(default_factory=tuple)
    generated: bool = False

    def gold_paragraphs(self) -> list[set[str]]:
        """Per annotator: the union of evidence paragraph ids over all steps."""
        return [set(_paragraph_ids(annotator)) for annotator in self.evidence]

    def evidence_ids(self) -> list[str]:
        """Every annotator's evidence paragraph ids, each once, in first-seen order."""
        return list(dict.fromkeys(pid for annotator in self.evidence for pid in _paragraph_ids(annotator)))


def _paragraph_ids(annotator) -> Iterator[str]:
    """The paragraph ids of one annotator's steps, skipping "operation" and "no_evidence"."""
    for step in annotator:
        for item in step:
            if isinstance(item, list):
                yield from (x for x in item if isinstance(x, str))


_FIELD_TYPES = {"qid": (str,), "question": (str,), "answer": (bool, type(None)), "term": (str,),
                "decomposition": (list, type(None)), "evidence": (list, type(None)), "facts": (list, type(None))}


def _check_fields(path: Path, i: int, r: dict) -> None:
    """A wrong type names file, record and field, instead of a bare TypeError several calls later."""
    for name, types in _FIELD_TYPES.items():
        if name in r and not isinstance(r[name], types):
            raise ValueError(f"{path}: item {i} (qid {r.get('qid')!r}): field {name!r} is a "
                             f"{type(r[name]).__name__}, expected {' or '.join(t.__name__ for t in types)}")
    for name in ("decomposition", "facts"):
        bad = [x for x in r.get(name) or [] if not isinstance(x, str)]
        if bad:
            raise ValueError(f"{path}: item {i} (qid {r.get('qid')!r}): field {name!r} holds a "
                             f"{type(bad[0]).__name__}, expected strings")
    for a, annotator in enumerate(r.get("evidence") or []):
        if not isinstance(annotator, list) or not all(isinstance(step, list) for step in annotator):
            raise ValueError(f"{path}: item {i} (qid {r.get('qid')!r}): field 'evidence'[{a}] is not a list of "
                             "steps (lists)")


def _read_json(path: Path, kind: str, expected: type, shape: str):
    """The file's JSON, or an error naming the file and what is wrong with it."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"StrategyQA {kind} not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(raw, expected):
        raise ValueError(f"{path}: expected {shape}, got a {type(raw).__name__}")
    return raw


def load_questions(path: str | Path) -> list[StrategyQuestion]:
    path = Path(path)
    raw = _read_json(path, "file", list, "a JSON list of questions")
    out = []
    for i, r in enumerate(raw):
        if not isinstance(r, dict):
            raise ValueError(f"{path}: item {i} is a {type(r).__name__}, not a question object")
        missing = {"qid", "question"} - set(r)
        if missing:
            raise ValueError(f"{path}: item {i} lacks {sorted(missing)}")
        _check_fields(path, i, r)
        out.append(StrategyQuestion(
            qid=r["qid"], question=r["question"], answer=r.get("answer"),
            decomposition=tuple(r.get("decomposition") or ()), evidence=tuple(r.get("evidence") or ()),
            term=r.get("term", ""), facts=tuple(r.get("facts") or ()), generated=bool(r.get("generated"))))
    return out


def load_paragraphs(path: str | Path) -> dict[str, dict]:
    """StrategyQA's evidence paragraphs as ``{id: {"title", "text"}}``."""
    return {pid: {"title": row["title"], "text": row["text"]} for pid, row in load_paragraph_records(path).items()}


def load_paragraph_records(path: str | Path) -> dict[str, dict]:
    """StrategyQA's evidence paragraphs JSON (``{id: {"title", "content", "section", "headers", "para_index"}}``,
    the release's ``strategyqa_train_paragraphs.json``) with ``content`` as ``text``; a malformed record
    names itself."""
    path = Path(path)
    raw = _read_json(path, "paragraphs file", dict, "StrategyQA's {id: {title, content}} paragraphs JSON")
    out = {}
    for pid, row in raw.items():
        text = row.get("content", row.get("text")) if isinstance(row, dict) else None
        if not isinstance(text, str) or not isinstance(row.get("title", ""), str):
            raise ValueError(f"{path}: paragraph {pid!r} lacks a string 'title'/'content'")
        section = row.get("section") if isinstance(row.get("section"), str) else ""
        headers = [h for h in row.get("headers") or [] if isinstance(h, str)]
        index = row.get("para_index") if isinstance(row.get("para_index"), int) else 0
        out[pid] = {"title": row.get("title", ""), "text": text, "section": section, "headers": headers,
                    "para_index": index}
    return out


def load_predicted_decompositions(path: str | Path) -> dict[str, list[str]]:
    """``{qid: [step, ...]}`` from a predictions jsonl such as ``bart_decomp_dev_predictions.jsonl``."""
    return dict(iter_jsonl(path, "prediction line (qid, decomposition)",
                           lambda r: (r["qid"], list(r["decomposition"]))))
