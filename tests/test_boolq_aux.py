"""The auxiliary BoolQ link of the paper's RoBERTa* chain: the file read and split by article, a tiny model
trained on CPU and scored on held-out articles, and StrategyQA's classifiers started from it."""

from __future__ import annotations

import json

import pytest

from pipeline.strategyqa.boolq import load_boolq, split_by_title


def test_the_official_dev_split_reads_as_its_source_says(shared):
    questions = load_boolq(shared / "data/boolq/dev.jsonl")
    assert len(questions) == 3270
    assert round(100 * sum(q.answer for q in questions) / len(questions), 1) == 62.2  # SOURCE.md: 2,033 true
    assert questions[0].question == "does ethanol take more energy make that produces" and questions[0].answer is False


def test_bad_lines_are_refused_by_file_and_line(tmp_path):
    good = {"question": "is it?", "passage": "It is.", "title": "It", "answer": True}
    for bad, why in (({**good, "answer": "yes"}, "true or false"), ({**good, "passage": ""}, "non-empty"),
                     ({k: v for k, v in good.items() if k != "title"}, "title")):
        path = tmp_path / "b.jsonl"
        path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
        with pytest.raises(ValueError, match=rf"b\.jsonl:2: .*{why}"):
            load_boolq(path)
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ValueError, match="no BoolQ questions"):
        load_boolq(tmp_path / "empty.jsonl")


def test_the_split_is_by_article_seeded_and_in_the_stated_shares(shared):
    questions = load_boolq(shared / "data/boolq/dev.jsonl")
    train, dev, held = split_by_title(questions, 0.2, 0.1, 42)
    titles = [{q.title for q in part} for part in (train, dev, held)]
    assert not (titles[0] & titles[1] or titles[0] & titles[2] or titles[1] & titles[2])  # no article in two
    assert len(train) + len(dev) + len(held) == len(questions)
    n = len({q.title for q in questions})
    assert len(titles[2]) == round(0.2 * n) and len(titles[1]) == round(0.1 * (n - len(titles[2])))
    assert split_by_title(questions, 0.2, 0.1, 42) == (train, dev, held)
    assert split_by_title(questions, 0.2, 0.1, 7)[2] != held


@pytest.mark.slow  # trains three tiny models
def test_the_auxiliary_model_trains_and_strategyqa_starts_from_it(shared, small_sample, tmp_path, monkeypatch):
    """Two auxiliary runs (seeds 42 and 43): the accuracy is their mean with its SD, the interval against the
    majority resamples runs and articles, and StrategyQA starts from the first seed's model."""
    from flows.stage import stage_flow
    from tests.params_files import project_benchmark_sources, write_params
    from tests.test_strategyqa_tracks_flow import generated_workspace, strategyqa_qa

    monkeypatch.chdir(tmp_path)
    lines = (shared / "data/boolq/dev.jsonl").read_text().splitlines()[:300]
    (tmp_path / "boolq.jsonl").write_text("\n".join(lines) + "\n")
    generated, cut = generated_workspace(tmp_path, small_sample)
    (tmp_path / "predicted.jsonl").write_text("".join(
        json.dumps({"qid": q["qid"], "decomposition": q["decomposition"]}) + "\n" for q in generated[cut:]))
    tiny = {"max_steps": 2, "checkpoint_every": 2, "eval_every": 2, "batch_size": 4, "max_seq_len": 64,
            "device": "cpu"}
    params = write_params(tmp_path / "params.yaml", {
        "benchmark_sources": project_benchmark_sources(strategyqa_train="train.json", strategyqa_eval="eval.json"),
        "boolq_aux": {"file": "boolq.jsonl", **tiny, "seeds": [42, 43]},
        "strategyqa_qa": {"gold_paragraphs": "data/wiki/paragraphs.jsonl", "predicted_decompositions": "predicted.jsonl",
                          "start_from": "boolq_aux", "control_max_steps": None, **tiny},
    })
    aux = stage_flow("train_boolq_aux").fn(params_file=params)
    assert aux["steps"] == 2 and aux["train_questions"] + aux["dev_questions"] + aux["heldout_questions"] == 300
    report = json.loads((tmp_path / "reports/boolq_aux.json").read_text())
    assert report["versus_majority"]["unit"] == "article" and report["majority_paper"] == 62.2
    assert report["versus_majority"]["units"] == report["heldout_articles"]
    assert report["versus_majority"]["seeds"] == 2 and report["seeds"] == [42, 43]
    over = report["over_seeds"]
    assert over["seeds"] == 2 and report["accuracy"] == over["mean"] == round(sum(over["per_seed"]) / 2, 2)
    assert [r["seed"] for r in report["training_per_seed"]] == [42, 43]
    assert (tmp_path / "models/boolq_aux/final/config.json").exists()
    assert (tmp_path / "models/boolq_aux/seeds/43/final/config.json").exists()
    headline = json.loads((tmp_path / "metrics/strategyqa/boolq_aux.json").read_text())
    assert headline["acc"] == report["accuracy"] and headline["majority"] == report["majority_baseline"]
    assert json.loads((tmp_path / "metrics/strategyqa/boolq_aux.sd.json").read_text())["acc"] == over["sd"]
    for name in ("benchmark_sources", "strategyqa_contexts"):
        stage_flow(name).fn(params_file=params)
    # the StrategyQA classifier starts from the auxiliary weights: its first training loss is that model's
    # on the same batch, not the base model's freshly initialised head
    facts = strategyqa_qa(params, "ctl_facts")
    assert facts["steps"] == 2
    started = json.loads((tmp_path / "reports/train_strategyqa_qa_ctl_facts.json").read_text())
    assert started["start"] == "models/boolq_aux/final", started
