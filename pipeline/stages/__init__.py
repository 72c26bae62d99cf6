"""One module per DVC stage: the plain function ``run`` a stage executes (inputs read, outputs written whole).

The module name is the stage name in ``dvc.yaml`` (``train_span`` and its kin share ``span_qa``); ``flows.stage``
runs it as a Prefect flow (its ``STAGES`` table names the function). Nothing here imports ``flows``."""
