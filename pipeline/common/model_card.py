"""What a trained model's card says about it, declared by the stage that scores the model (beside its
``headlines()``), so that a new model family brings its own card: ``model_cards`` finds these through the stage
table (``Stage.card``) and writes them; nothing about a family is written in that stage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ModelCard:
    """One trained model's card text, and where its story is."""

    title: str
    track: str
    system: str  # its name in reports/compare.json
    section: str  # its params section: the card's Settings table
    model_group: str  # the paths.yaml group holding its model_dir and model (``quail_mc.full``): the card goes there
    evaluation: Path  # the report with its figures and its training summary
    task: str  # one line; ``{key}`` fields are filled from its params section (``{max_seq_len}``)
    data: str
    loader: str  # the transformers Auto class that loads it
