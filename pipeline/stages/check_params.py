"""``check_params``: the whole params.yaml validated before any stage runs.

Why a stage: DVC deletes a stage's (non-persist) outputs before it runs the stage's command, so a stage that
refuses a bad params.yaml has already lost its data by the time it says so. Every stage depends on this
one's stamp, so under a plain ``dvc repro`` a bad file stops the run here, before DVC touches anything else.
The stamp's content does not change with valid edits: it orders the graph and reruns nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.files import write_json
from pipeline.common.layout import PATHS

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    """The whole file was validated on the way in (``flows.stage`` validates every section for this stage)."""
    stamp = {"params": "valid"}  # the same bytes for every valid file: adding a section reruns nothing after it
    write_json(PATHS.check_params.stamp, stamp)
    return stamp
