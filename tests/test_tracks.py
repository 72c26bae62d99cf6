"""`python -m pipeline.experiments.tracks`: the tracks, eval sets, sizes and pairs in one listing."""

from __future__ import annotations

import json


def test_the_track_list_names_each_eval_set_its_size_and_what_each_system_is_set_beside(repo):
    from pipeline.experiments.tracks import summarise

    pairs = [{"track": "quail", "eval": "challenge", "system": "mc_full", "baseline": b, "figure": "acc_challenge",
              "questions": 556, "unit": "text", "units": 30, "seeds": 3} for b in ("random", "pmi", "random")]
    pairs.append({"track": "strategyqa", "eval": "eval", "system": "bow_question", "baseline": "majority",
                  "figure": "acc", "questions": 229, "unit": "question", "units": 229, "seeds": 1})
    assert summarise({"pairs": pairs}) == [
        "quail", "  challenge: 556 questions in 30 texts (intervals resample texts); figures: acc_challenge",
        "    mc_full (3 runs) against random, pmi",
        "strategyqa", "  eval: 229 questions (intervals resample questions); figures: acc",
        "    bow_question (1 run) against majority"]
    report = json.loads((repo / "reports" / "compare.json").read_text())
    lines = summarise(report)
    assert [line for line in lines if not line.startswith(" ")] == sorted({p["track"] for p in report["pairs"]},
                                                                         key=[p["track"] for p in report["pairs"]].index)
