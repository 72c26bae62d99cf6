"""NLQuAD (Soleimani et al. 2021): discovery, extraction, construction, the article-level split, window baselines."""
