"""QuAIL's params sections: the heuristic baselines and the multiple-choice transformer."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure, Science
from pipeline.training.config import POOLING_DESCRIPTION, Pooling, TrainBudget


class HeldoutExclusion(StrictModel):
    """An earlier build's texts that choices were made on, kept out of a fresh held-out draw: its held-out texts
    (its split seed) and its selection-dev texts (its run seed and share)."""

    split_seed: Science[int]
    selection_seed: Science[int]
    selection_share: Science[float] = Field(gt=0, lt=1)


class QuailParams(StrictModel):
    """QuAIL heuristic baselines (``quail_baselines`` stage) and the dev split the transformer trains on."""

    train_share: Science[float] = Field(gt=0, lt=1, description="dev texts (per domain) the transformer trains on")
    seed: Science[int]
    exclude_from_heldout: Science[HeldoutExclusion | None] = Field(
        description="an earlier split whose held-out and selection-dev texts the held-out draw leaves out (they "
                    "train): a held-out set no choice has touched; null: a plain draw")
    pmi_window: Science[int] = Field(ge=1, le=1000, description="words between co-occurring n-grams")
    pmi_max_ngram: Science[int] = Field(ge=1, le=10)
    pmi_stop_word_ngrams: Science[bool] = Field(
        description="count n-grams made only of stop words (Clark et al.'s PMI solver, the paper's); false drops "
                    "them")
    ir_require_overlap: Science[bool] = Field(
        description="a sentence counts for an option only if it shares a non-stop word with the question and one "
                    "with the option (Clark et al.'s IR solver, the paper's)")
    word_vectors: Infrastructure[str] = Field(
        description="PyPI package with the AvgCos/LSTM word vectors (GloVe 6B 50-d stands "
                    "in for FastText CommonCrawl)")
    lstm_hidden: Science[int] = Field(ge=1, le=4096, description="BiLSTM state size of the LSTM baseline")


class QuailMCParams(TrainBudget):
    """The multiple-choice transformer and its partial-input variants (``train_``, ``predict_`` and
    ``evaluate_quail_mc@<variant>``)."""

    model_name_or_path: Science[str] = Field(description="hub name, local path, or the PyPI MiniLM")
    max_seq_len: Science[int] = Field(ge=32, description="per option; QuAIL passages average ~450 tokens")
    batch_size: Science[int] = Field(ge=1, description="questions per batch (x4 options)")
    select_metric: Science[Literal["accuracy"]] = Field(description="dev figure the kept checkpoint is chosen by")
    pooling: Science[Pooling] = Field(description=POOLING_DESCRIPTION)
    dev_share: Science[float] = Field(gt=0, lt=1, description="training texts (per domain, seeded) held out to choose "
                                                              "the checkpoint; the held-out dev texts are never seen")
