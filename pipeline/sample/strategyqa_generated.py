"""Generated StrategyQA-format questions over the sample dump, so retrieval runs offline end to end.

These are NOT StrategyQA questions: each pairs two sample articles, its decomposition steps are built from
the words of the evidence paragraphs, and its evidence ids (``"{title}-{i}"``) are paragraphs that exist in
the sample. Every record carries ``"generated": true``. Real StrategyQA evidence ids point at 2020
Wikipedia paragraphs that the sample does not contain, so the real questions are used in tests and
benchmarks only where that does not matter.
"""

from __future__ import annotations

import random
import re

from pipeline.common.stop_words import ENGLISH_STOP_WORDS

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")
TEMPLATES = ("Did {a} exist before {b}?", "Could {a} be found in the same place as {b}?",
             "Is {a} more widely known than {b}?", "Would {a} have influenced {b}?")


def _keywords(text: str, rng: random.Random, n: int = 5) -> str:
    words = [w for w in _WORD.findall(text) if w.lower() not in ENGLISH_STOP_WORDS]
    if len(words) <= n:
        return " ".join(words)
    start = rng.randrange(len(words) - n)
    return " ".join(words[start:start + n])


def generate_questions(paragraphs: dict[str, list[str]], n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    titles = sorted(t for t, ps in paragraphs.items() if len(ps) >= 2)
    out = []
    for i in range(n):
        a, b = rng.sample(titles, 2)
        ia, ib = rng.randrange(len(paragraphs[a])), rng.randrange(len(paragraphs[b]))
        ev_a, ev_b = f"{a}-{ia}", f"{b}-{ib}"
        steps = [f"What is {a} known for, {_keywords(paragraphs[a][ia], rng)}?",
                 f"What is {b} known for, {_keywords(paragraphs[b][ib], rng)}?",
                 "Is #1 related to #2?"]
        alt = f"{a}-{(ia + 1) % len(paragraphs[a])}"
        out.append({
            "qid": f"gen{i:04d}", "generated": True, "term": a, "description": "generated sample question",
            "question": rng.choice(TEMPLATES).format(a=a, b=b), "answer": rng.random() < 0.5,
            "facts": [paragraphs[a][ia], paragraphs[b][ib]], "decomposition": steps,
            "evidence": [
                [[[ev_a]], [[ev_b]], ["operation"]],
                [[[ev_a, alt]], [[ev_b]], ["operation"]],
                [["no_evidence"], [[ev_b]], ["operation"]],
            ],
        })
    return out
