"""Question difficulty analysis after Sugawara et al. (2022)."""
