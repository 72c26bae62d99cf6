"""benchmarks.gpu_strategyqa_search: a node run's archive read back as settings, figures and a paired interval."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from benchmarks.gpu_strategyqa_search import summarise


def _archive(path: Path, answers: dict[str, bool], extra_report: bool = False) -> Path:
    files = {
        "params.yaml": "strategyqa_qa:\n  learning_rate: 2.0e-05\n  max_steps: 6\n  patience: 10\n  max_seq_len: 512\n"
                       "  batch_size: 32\n  warmup_ratio: 0.1\n  weight_decay: 0.01\n  eval_every: 3\n",
        "reports/strategyqa_qa_ora_p.json": json.dumps({"majority_answer": "no", "accuracy": 75.0,
                                                         "eval_truncated_share": 0.5, "predicted_yes_share": 0.5}),
        "reports/train_strategyqa_qa_ora_p.json": json.dumps({"device": "cpu", "precision": "fp32", "steps": 6,
                                                               "stopped_early": False, "best_step": 6,
                                                               "dev_best": {"accuracy": 60.0}, "final_loss": 0.5}),
        "data/predictions/strategyqa_ora_p.json": json.dumps({q: {"answer": a} for q, a in answers.items()}),
        "dvclive/strategyqa_ora_p/plots/metrics/dev/accuracy.tsv": "step\taccuracy\n3\t50.0\n6\t60.0\n",
        "dvclive/strategyqa_ora_p/plots/metrics/train/loss.tsv":
            "step\tloss\n1\t0.7\n2\t0.7\n3\t0.7\n4\t0.4\n5\t0.4\n6\t0.4\n",
    }
    if extra_report:
        files["reports/strategyqa_qa_ir_d.json"] = "{}"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            member = tarfile.TarInfo(name)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
    return path


def test_a_run_is_scored_against_the_majority_answer_on_the_same_questions(tmp_path):
    gold = {"a": True, "b": False, "c": True, "d": False}
    row = summarise(_archive(tmp_path / "ora_p_lr2.0e-05.tar.gz", {"a": True, "b": False, "c": True, "d": True}), gold)
    assert row["setting"] == "ora_p" and row["params"]["learning_rate"] == 2e-5
    # majority "no" is right on b and d; the model on a, b, c
    assert row["vs_majority"]["system_mean"] == 75.0 and row["vs_majority"]["baseline_mean"] == 50.0
    assert row["vs_majority"]["wins"] == 2 and row["vs_majority"]["losses"] == 1
    assert row["dev_curve"] == [(3, 50.0), (6, 60.0)]
    assert row["loss_per_interval"] == [(3, 0.7), (6, 0.4)]


def test_an_archive_of_several_settings_is_refused(tmp_path):
    with pytest.raises(ValueError, match="one StrategyQA setting"):
        summarise(_archive(tmp_path / "x.tar.gz", {"a": True}, extra_report=True), {"a": True})
