"""Evaluation runs in other tools' formats: Inspect AI logs out and in,
lm-evaluation-harness samples in. Serialization is pure; imports go through
judging.evaluation.importing, so they are checked and written as any run import."""
