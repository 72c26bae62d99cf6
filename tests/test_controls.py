"""The controls that tell reading from its shortcuts, and the verdicts read over many pairs, on constructed data
where the answer is known: a model that ignores its question comes out level with its shuffled-question control
and with own-vs-other 0; a reader does not; Holm removes a verdict that 95% kept; a one-run verdict is refused."""

from __future__ import annotations

import random

import pytest

from pipeline.stages.compare import _pair, with_verdicts


def _dataset(n_articles: int = 40, sections: int = 3, words: int = 30, seed: int = 0) -> dict:
    """Articles of ``sections`` sections of ``words`` words each, one question per section, its answer the
    section (character spans, as NLQuAD's files give them)."""
    rng = random.Random(seed)
    data = []
    for a in range(n_articles):
        parts, qas, pos = [], [], 0
        for s in range(sections):
            text = " ".join(f"w{a}_{s}_{rng.randrange(1000)}" for _ in range(words))
            start = pos + (1 if parts else 0)
            parts.append(text)
            pos = start + len(text)
            qas.append({"id": f"a{a}q{s}", "question": f"what about topic {a}-{s}?",
                        "answers": [{"text": text, "answer_start": start, "answer_end": start + len(text)}]})
        data.append({"title": f"a{a}", "paragraphs": [{"context": " ".join(parts), "qas": qas}]})
    return {"data": data}


def _window(context: str, first_word: int, n: int) -> dict:
    import re

    spans = [m.span() for m in re.finditer(r"\S+", context)]
    first = min(first_word, len(spans) - n)
    start, end = spans[first][0], spans[first + n - 1][1]
    return {"text": context[start:end], "start": start, "end": end}


def _answers(dataset: dict, reader: bool, asked: dict[str, str] | None = None) -> dict[str, dict]:
    """A reader's window is the section its question names (``asked``: the question it is given in place of its
    own, by id of the question whose text it is); a position model's is the same place whatever it is asked."""
    out = {}
    for art in dataset["data"]:
        para = art["paragraphs"][0]
        by_id = {qa["id"]: qa for qa in para["qas"]}
        for qa in para["qas"]:
            if reader:
                target = by_id.get((asked or {}).get(qa["id"], qa["id"]), qa)["answers"][0]
                out[qa["id"]] = {"text": target["text"], "start": target["answer_start"], "end": target["answer_end"]}
            else:
                out[qa["id"]] = _window(para["context"], 30, 30)  # always the middle section's place
    return out


def _asked_ids(dataset: dict) -> dict[str, str]:
    """Which question's text each question gets under predict_span_shuffled's rule, by id."""
    from pipeline.stages.predict_span_shuffled import shuffled_questions

    text_to_id = {qa["question"]: qa["id"] for art in dataset["data"] for qa in art["paragraphs"][0]["qas"]}
    return {qid: text_to_id[text] for qid, text in shuffled_questions(dataset).items()}


def _iou_rows(dataset: dict, preds: dict) -> list[float]:
    from pipeline.nlquad.metrics import span_scores

    return [r["iou"] for r in span_scores(preds, dataset).values()]


def _own_other(dataset: dict, preds: dict) -> list[float]:
    from pipeline.nlquad.own_vs_other import own_and_other

    return [own - other for own, other in own_and_other(preds, dataset).values()]


def test_shuffled_questions_give_every_question_another_questions_text_of_its_article():
    from pipeline.stages.predict_span_shuffled import shuffled_questions

    dataset = _dataset(n_articles=3)
    dataset["data"].append({"title": "single", "paragraphs": [{"context": "one two", "qas": [
        {"id": "solo", "question": "a lone question?", "answers": [{"text": "one", "answer_start": 0,
                                                                     "answer_end": 3}]}]}]})
    swap = shuffled_questions(dataset)
    own = {qa["id"]: qa["question"] for art in dataset["data"] for qa in art["paragraphs"][0]["qas"]}
    assert set(swap) == set(own) and all(swap[q] != own[q] for q in own)
    assert swap["a0q0"] == own["a0q1"] and swap["a0q2"] == own["a0q0"]  # the next one of its article
    assert swap["solo"] == own["a0q0"]  # a one-question article takes the next article's first question


def test_a_model_that_ignores_its_question_is_level_with_its_shuffled_control_and_own_vs_other_is_zero():
    dataset = _dataset()
    clusters = [f"a{a}" for a in range(40) for _ in range(3)]
    asked = _asked_ids(dataset)
    blind, blind_shuffled = _answers(dataset, reader=False), _answers(dataset, reader=False, asked=asked)
    pair = _pair("nlquad", "test", "blind", "shuffled_questions", "IoU", [_iou_rows(dataset, blind)] * 3,
                 [_iou_rows(dataset, blind_shuffled)] * 3, clusters, baseline_trained=True, same_runs=True)
    own = _pair("nlquad", "test", "blind", "other_answers", "IoU own-other", [_own_other(dataset, blind)] * 3,
                [[0.0] * 120], clusters)
    [pair, own] = with_verdicts([pair, own])
    assert pair["difference"] == 0 and pair["verdict"] == "level"
    # its window is the middle section's: IoU 1 with that answer, 0 with the other two; own - other averages 0
    assert own["difference"] == pytest.approx(0.0, abs=1e-9) and own["verdict"] == "level"

    reader, reader_shuffled = _answers(dataset, reader=True), _answers(dataset, reader=True, asked=asked)
    pair = _pair("nlquad", "test", "reader", "shuffled_questions", "IoU", [_iou_rows(dataset, reader)] * 3,
                 [_iou_rows(dataset, reader_shuffled)] * 3, clusters, baseline_trained=True, same_runs=True)
    own = _pair("nlquad", "test", "reader", "other_answers", "IoU own-other", [_own_other(dataset, reader)] * 3,
                [[0.0] * 120], clusters)
    [pair, own] = with_verdicts([pair, own])
    assert pair["difference"] == 100.0 and pair["verdict"] == "above"
    assert own["difference"] == 100.0 and own["verdict"] == "above"


def _family_member(system: str, baseline: str, p: float, difference: float, t: tuple[float, float] | None,
                   figure: str = "acc") -> dict:
    return {"track": "quail", "eval": "dev_heldout", "system": system, "baseline": baseline, "figure": figure,
            "p_value": p, "difference": difference, "ci95": [difference - 5, difference + 5],
            "verdict_95": "above" if p < 0.05 and difference > 0 else "level",
            "seed_t": None if t is None else {"t_ci95": list(t)}}


def test_holm_removes_a_verdict_that_95_percent_kept_within_its_family_but_not_across_families():
    family = [_family_member("mc_full", b, p, 4.0, t) for b, p, t in (
        ("random", 0.001, (1.0, 7.0)), ("longchoice", 0.02, (-1.0, 9.0)), ("pmi", 0.3, (-2.0, 10.0)),
        ("ir", 0.04, (1.0, 7.0)))]
    alone = _family_member("mc_options", "random", 0.02, 4.0, (1.0, 7.0))
    out = {(p["system"], p["baseline"]): p for p in with_verdicts([*family, alone])}
    kept = out["mc_full", "longchoice"]
    assert kept["verdict_95"] == "above" and kept["p_holm"] == pytest.approx(0.06) and kept["verdict"] == "level"
    # Holm removes it, the seed t-interval keeps it: fragile, not above
    assert out["mc_full", "ir"]["p_holm"] == pytest.approx(0.08) and out["mc_full", "ir"]["verdict"] == "fragile"
    assert out["mc_full", "random"]["verdict"] == "above" and out["mc_full", "random"]["family_size"] == 4
    # the same p in a family of one survives: families are one system on one eval set and figure
    assert out["mc_options", "random"]["p_holm"] == 0.02 and out["mc_options", "random"]["verdict"] == "above"


def test_a_bootstrap_verdict_the_seed_t_interval_does_not_share_is_fragile():
    from pipeline.common.verdicts import seed_t_interval

    # three seeds 6.0, 3.9 and 9.2 points above a baseline that trains nothing: a t-interval with 2 degrees of
    # freedom spans 0 where a two-level bootstrap over three seeds can exclude it
    t = seed_t_interval([41.7 + 6.0, 41.7 + 3.9, 41.7 + 9.2], [41.7])
    assert t["df"] == 2 and t["t_ci95"][0] < 0 < t["t_ci95"][1]
    [pair] = with_verdicts([_family_member("mc_full", "longchoice", 0.001, 6.4, tuple(t["t_ci95"]))])
    assert pair["verdict"] == "fragile" and not pair["above"]
    # Welch's interval when the baseline is trained under seeds too
    welch = seed_t_interval([50.0, 51.0, 52.0], [40.0, 41.0, 42.0])
    assert welch["test"].startswith("Welch") and welch["t_ci95"][0] > 0


def test_a_one_run_system_gets_no_verdict_and_the_readings_refuse_to_say_it_reads():
    from pipeline.experiments.readings import shown_to_read

    one = _pair("strategyqa", "eval", "qa_ora_p", "qa_question_only", "acc", [[1.0] * 150 + [0.0] * 79],
                [[0.0] * 150 + [1.0] * 79], baseline_trained=True)
    [one] = with_verdicts([one])
    assert one["verdict_95"] == "one run" and one["verdict"] == "one run" and one["p_value"] < 0.01
    text = shown_to_read([one], "strategyqa", "qa_ora_p", "eval", "acc", ("qa_question_only",), "its paragraphs")
    assert "not shown" in text and "trained once" in text
    # a system above every control is said to read; one level with any is not
    above = {**one, "verdict": "above"}
    level = {**one, "baseline": "bow_question", "verdict": "level", "baseline_mean": 55.0}
    assert "shown to use" in shown_to_read([above], "strategyqa", "qa_ora_p", "eval", "acc", ("qa_question_only",), "x")
    said = shown_to_read([above, level], "strategyqa", "qa_ora_p", "eval", "acc",
                         ("qa_question_only", "bow_question"), "its paragraphs")
    assert said.startswith("So it is not shown") and "bag-of-words" in said


def test_the_position_prior_places_the_training_answers_typical_window_without_reading_the_question():
    from pipeline.nlquad import position_prior

    train = _dataset(n_articles=10)
    prior = position_prior.fit(train)
    # answers start at word 0, 30 and 60 of 90: median relative start 1/3, median length 30 words
    assert prior == {"relative_start": pytest.approx(1 / 3, abs=1e-6), "answer_words": 30}
    test = _dataset(n_articles=5, seed=1)
    preds = position_prior.predict(test, prior)
    blind = position_prior.predict({"data": [{**a, "paragraphs": [{**a["paragraphs"][0], "qas": [
        {**qa, "question": "something else entirely?"} for qa in a["paragraphs"][0]["qas"]]}]} for a in test["data"]]},
        prior)
    assert preds == blind  # the question is never read
    first = test["data"][0]["paragraphs"][0]
    assert preds["a0q1"]["text"] == first["qas"][1]["answers"][0]["text"]  # the middle section: words 30-59


def test_the_options_only_logit_learns_an_artifact_the_options_carry_and_not_one_they_lack():
    from pipeline.quail import options_features
    from pipeline.quail.data import MCQuestion

    rng = random.Random(0)

    def question(i: int, artifact: bool) -> MCQuestion:
        options = [" ".join("word" for _ in range(rng.randrange(2, 6))) for _ in range(3)] + ["not enough information"]
        answer = rng.randrange(3)
        if artifact:  # the keyed option is always the longest
            options[answer] = " ".join("word" for _ in range(9))
        return MCQuestion(f"q{i}", f"t{i // 10}", "fiction", "Causality", "why?", tuple(options), answer, "text")

    learnable = [question(i, True) for i in range(300)]
    weights = options_features.fit(learnable[:200])
    right = options_features.predict(learnable[200:], weights)
    assert sum(right[q.qid] == q.answer for q in learnable[200:]) == 100
    noise = [question(i, False) for i in range(600)]
    guessed = options_features.predict(noise[300:], options_features.fit(noise[:300]))
    assert sum(guessed[q.qid] == q.answer for q in noise[300:]) / 300 < 0.45  # about a third among 3 answerable


def test_the_bag_of_words_classifier_learns_a_cue_word_and_chooses_its_strength_on_selection_dev():
    from pipeline.strategyqa import bag_of_words
    from pipeline.strategyqa.data import StrategyQuestion

    rng = random.Random(0)

    def q(i: int, cue: bool) -> StrategyQuestion:
        answer = rng.random() < 0.5
        word = ("indeed" if answer else "hardly") if cue else rng.choice(["indeed", "hardly"])
        filler = " ".join(rng.choice(["cat", "dog", "river", "king", "moon"]) for _ in range(5))
        return StrategyQuestion(f"q{i}", f"Is it {word} a {filler}?", answer, (), ())

    train, test = [q(i, True) for i in range(400)], [q(i, True) for i in range(400, 500)]
    fitted = bag_of_words.fit(train, (0.01, 1.0, 100.0), 2, 0.2, 7)
    answers = bag_of_words.predict(fitted, test)
    assert all(answers[t.qid]["answer"] == t.answer for t in test)
    assert set(fitted.dev_log_loss) == {"0.01", "1.0", "100.0"} and fitted.c == min(
        (float(c) for c in fitted.dev_log_loss), key=lambda c: fitted.dev_log_loss[repr(c)])
    assert bag_of_words.auc_and_log_loss(answers, test)["auc"] == 1.0
    noise_train, noise_test = [q(i, False) for i in range(400)], [q(i, False) for i in range(400, 600)]
    guessed = bag_of_words.predict(bag_of_words.fit(noise_train, (0.01, 1.0), 2, 0.2, 7), noise_test)
    assert 0.35 < sum(guessed[t.qid]["answer"] == t.answer for t in noise_test) / 200 < 0.65


def test_the_f1_against_iou_finding_reads_the_share_at_iou_zero_and_the_gap_by_answer_length():
    from pipeline.nlquad.f1_against_iou import finding

    rows = [{"f1": 0.6, "iou": 0.0, "answer_bin": ">=200", "answer_words": 250},
            {"f1": 0.5, "iou": 0.0, "answer_bin": "0-49", "answer_words": 20},
            {"f1": 0.8, "iou": 0.6, "answer_bin": "0-49", "answer_words": 30},
            {"f1": 0.9, "iou": 0.3, "answer_bin": ">=200", "answer_words": 300}]
    out = finding(rows)
    assert out["f1_at_least_iou_percent"] == 100.0 and out["iou_zero_percent"] == 50.0
    assert out["iou_zero_f1"] == {"min": 50.0, "median": 55.0, "max": 60.0}
    gaps = out["f1_minus_iou_by_answer_words"]
    assert [g["answer_words"] for g in gaps] == ["0-49", ">=200"] and [g["gap"] for g in gaps] == [35.0, 60.0]
