"""A flow for tests/test_engine_guard.py: its body leaves a mark, so a test sees whether it ran."""

import os
from pathlib import Path

from prefect import flow


@flow(name="forced-state-probe")
def probe() -> str:
    Path(os.environ["QA_PIPELINE_PROBE_MARK"]).write_text("the flow body ran")
    return "ran"
