"""qa-pipeline: stage logic for building and benchmarking reading-comprehension data sets.

Every stage is a plain, typed function in this package; `flows/` wraps them in thin Prefect flows and
`dvc.yaml` wires them into one graph. Nothing here imports Prefect at module level, so the library stays
usable (and testable) without an orchestrator.
"""

__version__ = "0.1.0"
