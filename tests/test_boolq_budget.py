"""benchmarks.boolq_budget: a search may change the auxiliary model's training settings, never its data."""

from __future__ import annotations

import pytest

from benchmarks.boolq_budget import parse_run


def test_a_run_reads_training_settings_as_yaml_scalars():
    assert parse_run("max_seq_len=256, learning_rate=1e-4,max_steps=600") == {
        "max_seq_len": 256, "learning_rate": 1e-4, "max_steps": 600}


@pytest.mark.parametrize("text", ["file=/etc/passwd", "heldout_share=0.5", "seed=1", "max_steps", ""])
def test_a_run_that_would_change_the_questions_or_is_malformed_is_refused(text):
    with pytest.raises(SystemExit, match="--run"):
        parse_run(text)
