"""QuAIL (Rogers et al. 2020): loader, heuristic baselines, multiple-choice model and accuracy tables."""
