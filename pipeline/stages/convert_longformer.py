"""``convert_longformer``: the source checkpoint as a long Longformer (or copied as is if it is one already)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.common.layout import PATHS
from pipeline.span_qa.longformer import prepare_longformer
from pipeline.training.model_names import resolve_model_path

if TYPE_CHECKING:
    from pipeline.params import Params


def run(params: Params) -> dict:
    p = params.longformer
    converted = prepare_longformer(resolve_model_path(p.source_model), PATHS.convert_longformer.model, p.max_seq_len,
                                   p.attention_window)
    return {"converted": converted, "source": p.source_model}
