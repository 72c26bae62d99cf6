"""One module per DVC stage: the plain function ``run`` a stage executes (inputs read, outputs written whole).

The module name is the stage name in ``dvc.yaml`` (``train_span`` and its kin share ``span_qa``); ``flows/<stage>.py``
only wraps it in a Prefect flow."""
