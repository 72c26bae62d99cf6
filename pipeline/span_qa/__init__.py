"""Span question answering: sliding windows and Longformer, training, prediction and scoring."""
