"""``wiki_paragraphs`` stage: Wikipedia paragraphs. The work is ``pipeline.stages.wiki_paragraphs.run``; this is its Prefect flow."""

from __future__ import annotations

import sys

from prefect import flow

from flows._common import params_of, stage_main
from pipeline.stages import wiki_paragraphs as stage


@flow(name="wiki_paragraphs", log_prints=True)
def wiki_paragraphs_flow(params_file: str = "params.yaml") -> dict:
    return stage.run(params_of(params_file))


if __name__ == "__main__":
    sys.exit(stage_main(wiki_paragraphs_flow))
