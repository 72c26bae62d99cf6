"""Plumbing every stage shares: whole-file writes, logging and progress, retryable errors, sentence splitting,
the benchmark files read in place, and the offline plot template."""
