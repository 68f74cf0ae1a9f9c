"""Django loads the judging app's models from here; code imports each model from its
domain's own `models` module (judging.llm.models, judging.labelling.models, …)."""

from judging.evaluation.models import (
    EvaluationChunk,
    EvaluationRun,
    Judgment,
    Response,
    ScoreOverride,
)
from judging.labelling.models import AnnotatorLabel, LabelConsensus, LabellingRun
from judging.llm.models import Endpoint, LLMCall, PromptTemplate
from judging.robustness.models import Resource, VariantDraft, VariantRun
from judging.translation.models import (
    FaithfulnessReview,
    TranslationRun,
    TranslationTask,
)

__all__ = [
    "AnnotatorLabel",
    "Endpoint",
    "EvaluationChunk",
    "EvaluationRun",
    "FaithfulnessReview",
    "Judgment",
    "LLMCall",
    "LabelConsensus",
    "LabellingRun",
    "PromptTemplate",
    "Resource",
    "Response",
    "ScoreOverride",
    "TranslationRun",
    "TranslationTask",
    "VariantDraft",
    "VariantRun",
]
