"""QuAIL questions from either release format, with question type and domain kept.

The XML (``quail_1.3_*.xml``: ``<text domain id><text_body/><questions><q id type>`` with four ``<a correct>``)
and the jsonl (one question per line: ``id``, ``question_type``, ``answers``, ``correct_answer_id``, ``domain``,
``context_id``, ``context``) carry the same content; both load into :class:`MCQuestion`. A question id is
``{text id}_{q id}`` as in the leaderboard keys.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass
from pathlib import Path

from pipeline.common.jsonl import iter_jsonl

QUESTION_TYPES = ("Factual", "Temporal_order", "Character_identity", "Causality", "Entity_properties",
                  "Belief_states", "Subsequent_state", "Event_duration", "Unanswerable")
DOMAINS = ("fiction", "news", "blogs", "user_stories")
NOT_ENOUGH_INFO = "not enough information"


@dataclass(frozen=True)
class MCQuestion:
    qid: str
    text_id: str
    domain: str
    question_type: str
    question: str
    options: tuple[str, ...]
    answer: int | None  # index into options; None where the key is withheld
    context: str


class QuailFormatError(ValueError):
    """The file is not QuAIL XML/jsonl; the message names the file and the record."""


def _clean(text: str | None) -> str:
    # the XML indents element text; the passage keeps its line breaks, other fields are single-line
    return "\n".join(line.strip() for line in (text or "").strip().splitlines()).strip()


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def load_xml(path: Path) -> list[MCQuestion]:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise QuailFormatError(f"{path}: not well-formed XML ({exc})") from None
    out = []
    for t in root.iter("text"):
        text_id, domain = t.get("id"), t.get("domain")
        body = t.find("text_body")
        if not text_id or body is None:
            raise QuailFormatError(f"{path}: a <text> lacks its id or <text_body>")
        context = _clean(body.text)
        questions = t.find("questions")
        for q in questions if questions is not None else []:
            answers = q.findall("a")
            qid = f"{text_id}_{q.get('id')}"
            if len(answers) < 2:
                raise QuailFormatError(f"{path}: question {qid} has {len(answers)} options")
            flags = [a.get("correct") for a in answers]
            correct = [i for i, f in enumerate(flags) if f == "True"]
            if flags and all(f is not None for f in flags) and len(correct) != 1:
                raise QuailFormatError(f"{path}: question {qid} has {len(correct)} options marked correct")
            out.append(MCQuestion(qid, text_id, domain or "", q.get("type") or "", _one_line(q.text),
                                  tuple(_one_line(a.text) for a in answers), correct[0] if correct else None,
                                  context))
    return out


def answer_index(value: object, what: str = "correct_answer_id") -> int | None:
    """An option index from a file: an integer or a string of digits; absent or "" is a withheld key. A
    float (1.7), a boolean (true) or any other text is refused, not rounded or read as 1."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{what} must be an option index such as 0 or \"2\", got {value!r}")
    if isinstance(value, str):
        if not value.strip().isdigit():
            raise ValueError(f"{what} must be an option index such as 0 or \"2\", got {value!r}")
        return int(value.strip())
    return value


def _text_field(row: dict, key: str) -> str:
    value = row[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a string, got {type(value).__name__}")
    return value


def load_jsonl(path: Path) -> list[MCQuestion]:
    def question(r: dict) -> MCQuestion:
        options = r["answers"]
        if not isinstance(options, list) or not all(isinstance(a, str) for a in options):
            # a string would become one option per letter ("abcd" -> a, b, c, d)
            raise TypeError(f"answers must be a list of option strings, got {type(options).__name__}")
        if len(options) < 2:
            raise ValueError(f"answers has {len(options)} option(s)")
        return MCQuestion(_text_field(r, "id"), _text_field(r, "context_id"), r.get("domain", ""),
                          r.get("question_type", ""), _one_line(_text_field(r, "question")),
                          tuple(_one_line(a) for a in options), answer_index(r.get("correct_answer_id")),
                          _text_field(r, "context").strip())

    return list(iter_jsonl(path, "QuAIL question line", question, error=QuailFormatError))


def load_quail(path: str | Path) -> list[MCQuestion]:
    """Questions from a QuAIL ``.xml`` or ``.jsonl`` file, in file order."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"QuAIL file not found: {path}")
    if path.suffix == ".xml":
        questions = load_xml(path)
    elif path.suffix in (".jsonl", ".json"):
        questions = load_jsonl(path)
    else:
        raise QuailFormatError(f"{path}: expected a .xml or .jsonl QuAIL file")
    if not questions:
        raise QuailFormatError(f"{path}: no questions found")
    seen: set[str] = set()
    for q in questions:
        if q.qid in seen:
            raise QuailFormatError(f"{path}: question id {q.qid} occurs twice")
        seen.add(q.qid)
        if q.answer is not None and not 0 <= q.answer < len(q.options):
            raise QuailFormatError(f"{path}: question {q.qid} answer {q.answer} is not an option index")
    return questions


def apply_key(questions: list[MCQuestion], key_path: str | Path) -> list[MCQuestion]:
    """Fill answers from a leaderboard key (``{type: {qid: "index"}}``), checking it agrees where both exist."""
    raw = json.loads(Path(key_path).read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or not all(isinstance(g, dict) for g in raw.values()):
        raise QuailFormatError(f"{key_path}: expected {{question type: {{question id: answer index}}}}")
    try:
        flat = {qid: answer_index(v, f"answer of {qid}") for group in raw.values() for qid, v in group.items()}
    except ValueError as exc:
        raise QuailFormatError(f"{key_path}: {exc}") from None
    if None in flat.values():
        raise QuailFormatError(f"{key_path}: an answer is empty")
    out = []
    for q in questions:
        if q.qid in flat and q.answer is not None and flat[q.qid] != q.answer:
            raise QuailFormatError(f"{key_path}: key for {q.qid} ({flat[q.qid]}) disagrees with the data ({q.answer})")
        out.append(q if q.qid not in flat else MCQuestion(**{**asdict(q), "answer": flat[q.qid]}))
    return out
