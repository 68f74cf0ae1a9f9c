"""The forum pipeline's LLM stages (LPFQA §3.2.2), as chunks of construction
stage runs (construction.pipeline dispatches here; the run lifecycle, the
ledger and the gateway are the IndustryBench stages' own):

    extract_qa: one call per forum post — its text, and its screenshots as image
                parts of the message (the OpenAI content-part format) — to a
                question, answer and explanation. A post that asks nothing gets
                no candidate (its Generation says why); one whose replies hold no
                answer gets a candidate rejected here (nothing to check it by).
    qa_filter:  one call per candidate → pass / reject with the reason.
    convert:    one call per candidate, with the multiple-choice prompt (the
                run's `template`) or the short-answer one (`verifier_template`)
                as its post's `format` asks → the item form, kept on the
                candidate (`Candidate.form`) and in the decision's evidence.

A failed or unparseable call is `pending`, never a rejection, as everywhere on
the ledger."""

from __future__ import annotations

from functools import partial

from construction.calls import count_calls, pending_reason, record_decisions
from construction.forum import outputs
from construction.models import (
    Candidate,
    Generation,
    Source,
    Stage,
    StageDecision,
    StageRun,
)
from judging.llm.gateway import LLMRequest, run_requests
from judging.llm.prompts import render_messages
from judging.runs import lifecycle

Outcome = StageDecision.Outcome
NO_QUESTION = "The post asks no question the model could find"
NO_ANSWER = "The replies hold no answer: the question has nothing to check it by"
MULTIPLE_CHOICE, SHORT_ANSWER = "multiple_choice", "short_answer"


def _send(run, requests, save) -> None:
    run_requests(
        requests,
        on_results=partial(save, run),
        should_stop=lambda: not lifecycle.keep_alive(StageRun, run.pk),
    )


# -- extraction ------------------------------------------------------------------


def post_messages(template, source: Source) -> list[dict]:
    """The extraction prompt for one post: the template's messages, the user
    message carrying the post's screenshots as image parts after its text."""
    fields = source.fields
    messages = render_messages(
        template,
        {
            "forum": fields.get("forum") or source.reference,
            "title": fields.get("title", ""),
            "post_text": source.text,
        },
    )
    images = fields.get("images") or []
    if images:
        user = messages[-1]
        user["content"] = [
            {"type": "text", "text": user["content"]},
            *({"type": "image_url", "image_url": {"url": url}} for url in images),
        ]
    return messages


def extract(run, source_ids: list[int]) -> None:
    sources = Source.objects.filter(pk__in=source_ids).order_by("id")
    _send(
        run,
        [
            LLMRequest(
                key=source.pk,
                endpoint=run.endpoint,
                template=run.template,
                messages=post_messages(run.template, source),
                validate=outputs.extraction,
            )
            for source in sources
        ],
        _save_extractions,
    )


def _save_extractions(run, outcomes) -> None:
    """Each post's Generation (ok or pending) and, for a post with a question,
    its candidate with the extraction's decision; in the gateway's
    transaction."""
    version = run.prompt_version
    sources = Source.objects.in_bulk([outcome.key for outcome in outcomes])
    generations = Generation.objects.bulk_create(
        [
            Generation(
                source_id=outcome.key,
                prompt_version=version,
                questions=1,
                status=Generation.Status.OK
                if outcome.ok
                else Generation.Status.PENDING,
                reason=_generation_reason(outcome),
                run=run,
                call=outcome.call,
            )
            for outcome in outcomes
        ],
        update_conflicts=True,
        unique_fields=["source", "prompt_version", "questions"],
        update_fields=["status", "reason", "run", "call"],
    )
    asked = {}
    for generation, outcome in zip(generations, outcomes, strict=True):
        parsed = outcome.call.parsed_output if outcome.ok else None
        if not parsed or not parsed["is_valid"]:
            continue
        source = sources[outcome.key]
        asked[outcome.key] = (outcome.call, parsed["has_answer"])
        Candidate.objects.get_or_create(
            generation=generation,
            position=0,
            defaults={
                "source": source,
                "question": parsed["question"],
                "reference_answer": parsed["answer"],
                "knowledge_text": source.text,
                "label": str(source.fields.get("field", ""))[:100],
                "form": {"explanation": parsed["explanation"]},
            },
        )
    StageDecision.objects.bulk_create(
        [
            StageDecision(
                candidate=candidate,
                stage=Stage.EXTRACT_QA,
                outcome=Outcome.PASS
                if asked[candidate.source_id][1]
                else Outcome.REJECT,
                reason="" if asked[candidate.source_id][1] else NO_ANSWER,
                model=asked[candidate.source_id][0].model,
                prompt_version=version,
                evidence={
                    "generation": candidate.generation_id,
                    "screenshots": len(candidate.source.fields.get("images") or []),
                },
                run=run,
                call=asked[candidate.source_id][0],
            )
            for candidate in Candidate.objects.filter(
                source_id__in=asked, generation__prompt_version=version
            ).select_related("source")
        ],
        ignore_conflicts=True,
    )
    count_calls(run.pk, outcomes)


def _generation_reason(outcome) -> str:
    if not outcome.ok:
        return pending_reason(outcome.call)
    return "" if outcome.call.parsed_output["is_valid"] else NO_QUESTION


# -- quality filter and conversion -----------------------------------------------


def _pair(candidate: Candidate) -> dict:
    return {
        "question": candidate.question,
        "answer": candidate.reference_answer,
        "explanation": candidate.form.get("explanation", ""),
    }


def filter_quality(run, candidate_ids: list[int]) -> None:
    candidates = Candidate.objects.filter(pk__in=candidate_ids).order_by("id")
    _send(
        run,
        [
            LLMRequest(
                key=candidate.pk,
                endpoint=run.endpoint,
                template=run.template,
                variables=_pair(candidate),
                validate=outputs.qualification,
            )
            for candidate in candidates
        ],
        _save_qualifications,
    )


def _save_qualifications(run, outcomes) -> None:
    decisions = []
    for outcome in outcomes:
        call = outcome.call
        if outcome.ok:
            qualified = call.parsed_output["is_qualified"]
            verdict = Outcome.PASS if qualified else Outcome.REJECT
            reason = call.parsed_output["reason"]
        else:
            verdict, reason = Outcome.PENDING, pending_reason(call)
        decisions.append(_decision(run, Stage.QA_FILTER, outcome, verdict, reason))
    record_decisions(decisions)
    count_calls(run.pk, outcomes)


def item_format(candidate: Candidate) -> str:
    """The item form the candidate's post asks for (multiple choice unless it
    says short answer)."""
    wanted = candidate.source.fields.get("format")
    return SHORT_ANSWER if wanted == SHORT_ANSWER else MULTIPLE_CHOICE


def convert(run, candidate_ids: list[int]) -> None:
    candidates = (
        Candidate.objects.filter(pk__in=candidate_ids)
        .select_related("source")
        .order_by("id")
    )
    requests = []
    for candidate in candidates:
        short = item_format(candidate) == SHORT_ANSWER
        requests.append(
            LLMRequest(
                key=candidate.pk,
                endpoint=run.endpoint,
                template=run.verifier_template if short else run.template,
                variables=_pair(candidate),
                validate=outputs.short_answer if short else outputs.multiple_choice,
            )
        )
    _send(run, requests, _save_conversions)


def _save_conversions(run, outcomes) -> None:
    candidates = Candidate.objects.select_related("source").in_bulk(
        [outcome.key for outcome in outcomes]
    )
    decisions, converted = [], []
    for outcome in outcomes:
        candidate = candidates[outcome.key]
        if not outcome.ok:
            decisions.append(
                _decision(
                    run,
                    Stage.CONVERT,
                    outcome,
                    Outcome.PENDING,
                    pending_reason(outcome.call),
                )
            )
            continue
        form = {"format": item_format(candidate), **outcome.call.parsed_output}
        candidate.form = {**candidate.form, **form}
        converted.append(candidate)
        decisions.append(
            _decision(run, Stage.CONVERT, outcome, Outcome.PASS, "", evidence=form)
        )
    Candidate.objects.bulk_update(converted, ["form"])
    record_decisions(decisions)
    count_calls(run.pk, outcomes)


def _decision(run, stage, outcome, verdict, reason, evidence=None) -> StageDecision:
    return StageDecision(
        candidate_id=outcome.key,
        stage=stage,
        outcome=verdict,
        reason=reason,
        model=outcome.call.model,
        prompt_version=run.prompt_version,
        evidence=evidence or {},
        run=run,
        call=outcome.call,
    )
