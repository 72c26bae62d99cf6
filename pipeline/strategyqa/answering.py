"""StrategyQA yes/no answering inputs in the paper's settings (Geva et al. 2021, Table 5 rows), each under its
key here and its name in the paper (``PAPER_NAMES``):

- ``question_only`` (the paper's no-context row): the question alone (the model answers from what pre-training
  left in it);
- ``ir_q`` (IR-Q): question + the top-k paragraphs retrieved by the question;
- ``ir_d`` (IR-D): question + the top-k paragraphs retrieved by the *predicted* decomposition steps (BART-DECOMP's,
  ``strategyqa_qa.predicted_decompositions``) for the eval questions, merged by score; trained, as in the paper,
  on paragraphs retrieved by the training questions' gold steps;
- ``ir_ora_d`` (IR-ORA-D): the same with the *gold* decomposition steps of the eval questions too (an oracle:
  the annotators' steps are not available at test time);
- ``ora_p`` (ORA-P): question + the gold evidence paragraphs (all annotators, first-seen order), only where their
  texts exist: StrategyQA's ids refer to its 2020-05-11 Wikipedia paragraphs, so another dump cannot stand in;
- ``ctl_facts``, a control, not a paper setting: question + the annotators' ``facts`` (the few sentences that
  answer it, a short input that fits 128 tokens). A positive control: a classifier that cannot learn this
  cannot learn StrategyQA-shaped input at all, and a setting level with the majority means nothing until it does;
- ``ctl_ora_p1``, a control: ORA-P with one annotator's evidence (the first annotator who gave any), so far fewer
  inputs are cut at ``max_seq_len`` than with every annotator's paragraphs (about 54% of them at 512 tokens).

Paragraphs enter in rank order as ``title: text`` and the tokenizer cuts the tail at the model's length.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pipeline.common.jsonl import iter_jsonl
from pipeline.strategyqa.data import StrategyQuestion, load_paragraphs, load_questions

SETTINGS = ("question_only", "ir_q", "ir_d", "ir_ora_d", "ora_p", "ctl_facts", "ctl_ora_p1")
PAPER_NAMES = {"question_only": "no context", "ir_q": "IR-Q", "ir_d": "IR-D", "ir_ora_d": "IR-ORA-D",
               "ora_p": "ORA-P", "ctl_facts": "control: question + facts",
               "ctl_ora_p1": "control: ORA-P, one annotator's evidence"}
CONTROLS = ("ctl_facts", "ctl_ora_p1")  # not the paper's settings: checks of the classifier, labelled so everywhere
# the settings whose context is retrieved, and by what (strategyqa_contexts' runs)
RETRIEVED = ("ir_q", "ir_d", "ir_ora_d")


def gold_ids(q: StrategyQuestion) -> list[str]:
    """The ORA-P paragraphs: evidence ids over all annotators and steps, each once, in first-seen order."""
    return q.evidence_ids()


def one_annotator_ids(q: StrategyQuestion) -> list[str]:
    """The ``ctl_ora_p1`` paragraphs: the evidence ids of the first annotator who gave any, each once."""
    for chosen in q.gold_paragraphs():  # per annotator, as sets; the order is that of every annotator's ids
        if chosen:
            return [i for i in q.evidence_ids() if i in chosen]
    return []


# the gold-paragraph settings and the ids each gives a question
GOLD_CONTEXT = {"ora_p": gold_ids, "ctl_ora_p1": one_annotator_ids}


def read_paragraphs(path: str | Path, wanted: set[str]) -> dict[str, dict]:
    """``{id: {"title", "text"}}`` for the ``wanted`` ids, streaming the file so a full dump's paragraphs
    never sit in memory. Reads our ``paragraphs.jsonl`` (``id``, ``title``, ``text``) or StrategyQA's
    paragraphs JSON (``{id: {"title", "content"}}``)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"paragraph file not found: {path}")
    out: dict[str, dict] = {}
    if path.suffix == ".json":
        raw = load_paragraphs(path)
        return {pid: raw[pid] for pid in wanted & raw.keys()}
    for pid, row in iter_jsonl(path, "paragraph line", lambda r: (str(r["id"]), r)):
        if pid in wanted:
            out[pid] = {"title": row.get("title", ""), "text": row.get("text", "")}
    return out


def context_text(ids: Iterable[str], paragraphs: dict[str, dict]) -> str:
    return " ".join(f"{paragraphs[i]['title']}: {paragraphs[i]['text']}" for i in ids if i in paragraphs)


def build_inputs(questions: list[StrategyQuestion], setting: str, ranked_ids: dict[str, list[str]] | None,
                 paragraphs: dict[str, dict]) -> tuple[list[str], list[str] | None]:
    """(first texts, second texts or None): the question, and the context the setting gives it."""
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; choose one of {', '.join(SETTINGS)}")
    first = [q.question for q in questions]
    if setting == "question_only":
        return first, None
    if setting in GOLD_CONTEXT:
        return first, [context_text(GOLD_CONTEXT[setting](q), paragraphs) for q in questions]
    if setting == "ctl_facts":
        return first, [" ".join(q.facts) for q in questions]
    if ranked_ids is None:
        raise ValueError(f"setting {setting} needs retrieved paragraph ids")
    return first, [context_text(ranked_ids.get(q.qid, []), paragraphs) for q in questions]


def labels(questions: list[StrategyQuestion]) -> list[int]:
    missing = [q.qid for q in questions if q.answer is None]
    if missing:
        raise ValueError(f"{len(missing)} question(s) have no yes/no answer, e.g. {missing[:3]}")
    return [int(bool(q.answer)) for q in questions]


def split_off_dev(questions: list[StrategyQuestion], dev_share: float,
                  seed: int) -> tuple[list[StrategyQuestion], list[StrategyQuestion]]:
    """(train, dev): a seeded share of the training questions held out to choose the checkpoint. By question id,
    so the same questions are dev in every setting; the eval questions are never among them."""
    ids = sorted(q.qid for q in questions)
    random.Random(seed).shuffle(ids)
    dev_ids = set(ids[:max(1, round(dev_share * len(ids)))])
    return [q for q in questions if q.qid not in dev_ids], [q for q in questions if q.qid in dev_ids]


def all_paragraphs(contexts: dict) -> dict[str, dict]:
    """Retrieved and gold paragraphs of the ``strategyqa_contexts`` output, by id."""
    return {**contexts["paragraphs"], **contexts["gold_paragraphs"]}


def setting_questions(train_file: str | Path, eval_file: str | Path, paragraphs: dict[str, dict], setting: str,
                      dev_share: float, seed: int) -> tuple[list[StrategyQuestion], ...]:
    """(train, dev, eval) questions of one setting, the same in its train, predict and evaluate stages: ``ora_p``
    asks only the questions whose gold paragraphs exist in ``paragraphs``."""
    if setting not in SETTINGS:
        raise ValueError(f"unknown StrategyQA setting {setting!r}; one of {', '.join(SETTINGS)}")
    train, dev = split_off_dev(load_questions(train_file), dev_share, seed)
    evaluation = load_questions(eval_file)
    if setting in GOLD_CONTEXT:
        ids = GOLD_CONTEXT[setting]
        train, dev, evaluation = ([q for q in qs if any(i in paragraphs for i in ids(q))]
                                  for qs in (train, dev, evaluation))
    return train, dev, evaluation


def majority_label(train_labels: list[int]) -> int:
    """The more frequent training label; a tie goes to no (0)."""
    counts = Counter(train_labels)
    return 1 if counts[1] > counts[0] else 0


def accuracy(pred: list[int], gold: list[int]) -> float:
    if len(pred) != len(gold):
        raise ValueError(f"{len(pred)} predictions for {len(gold)} questions")
    return round(100.0 * sum(p == g for p, g in zip(pred, gold)) / len(gold), 2) if gold else 0.0
