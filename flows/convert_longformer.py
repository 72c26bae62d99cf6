"""``convert_longformer`` stage: the source checkpoint as a 4096-position Longformer (or used as is if it is one)."""

from __future__ import annotations

import shutil
import sys

from prefect import flow

from flows._common import params_of, stage_main
from flows._span import LONGFORMER_INIT
from pipeline.span_qa.longformer import convert_to_longformer
from pipeline.finetune import resolve_model_path


@flow(name="convert_longformer", log_prints=True)
def convert_longformer_flow(params_file: str = "params.yaml") -> dict:
    from transformers import AutoConfig, AutoModelForQuestionAnswering, AutoTokenizer

    p = params_of(params_file).longformer
    source = resolve_model_path(p.source_model)
    shutil.rmtree(LONGFORMER_INIT, ignore_errors=True)
    if AutoConfig.from_pretrained(source).model_type == "longformer":
        AutoModelForQuestionAnswering.from_pretrained(source).save_pretrained(LONGFORMER_INIT)
        AutoTokenizer.from_pretrained(source).save_pretrained(LONGFORMER_INIT)
        return {"converted": False, "source": p.source_model}
    convert_to_longformer(source, LONGFORMER_INIT, p.max_seq_len, p.attention_window)
    return {"converted": True, "source": p.source_model}


if __name__ == "__main__":
    sys.exit(stage_main(convert_longformer_flow))
