"""Tools around the pipeline: code deps, profiles, sweeps, the results table, publishing."""
