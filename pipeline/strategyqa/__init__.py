"""StrategyQA (Geva et al. 2021): its files, retrieval by question and decomposition, yes/no answering."""
