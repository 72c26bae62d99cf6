"""What a rebuild's run log shows of ``dvc repro``'s output: the message at the level it was written at, once.
The stages print a time and a level on every line; the run's log has its own columns for both, so a line read
"INFO | INFO | Flow run ..." before."""

from __future__ import annotations

import logging

from flows.rebuild import readable_line


def test_bars_go_and_a_stage_line_keeps_its_message_and_level():
    assert readable_line("Loading weights:   0%|   | 0/105 [00:00<?, ?it/s]\rLoading weights: 100%|█| 105/105") is None
    assert readable_line("predict:  25%|██▌  | 2/8 [00:01<00:05]\r    2026-11-24 02:33:59,740 INFO qa_pipeline: "
                         "predict: 8/8 batch (100%)") == (logging.INFO, "qa_pipeline: predict: 8/8 batch (100%)")
    assert readable_line("02:45:11.264 | INFO    | Flow run 'train_span' - train: 41/60 steps (68%)") == \
        (logging.INFO, "Flow run 'train_span' - train: 41/60 steps (68%)")
    assert readable_line("02:45:11.264 | WARNING | Flow run 'crawl' - 3 pages failed") == \
        (logging.WARNING, "Flow run 'crawl' - 3 pages failed")
    assert readable_line("Running stage 'split':") == (logging.INFO, "Running stage 'split':")  # DVC's own
    assert readable_line("  File \"x.py\", line 3") == (logging.INFO, "  File \"x.py\", line 3")  # tracebacks keep their shape
    assert readable_line("   \n") is None
