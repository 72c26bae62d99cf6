"""Fine-tuning every transformer in the pipeline: one resumable loop, the pair encoding and the choice heads."""
