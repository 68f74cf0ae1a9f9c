"""Evaluation runs, worker side: answer → judge → SV for each response.

Each response is asked only for what it lacks, so any stage can be re-run alone
(a new judge re-scores stored answers), and the judge and SV calls of an answer are
asked for as soon as it is stored, in the same gateway session (`evaluate_responses`):

* answer: responses still pending or failed are asked of the tested endpoint, each
  from its own rendering — its question and its own options under the answer
  key's letters (judging.llm.answer_prompts), with its format's prompt when the run
  has per-format prompts — in the run's mode as the endpoint declares it is
  switched (`judging.llm.thinking`: request fields or a model id of its own).
  The reasoning is split from the final answer (`split_reply`: the provider's
  reasoning field, plus any inline `<think>…</think>` block). Then, following
  the paper's protocol ("an empty or invalid response gets raw score 0 and counts"):
  - *empty*: the model replied, with nothing at all;
  - *invalid*: the model replied but gave no final answer once the reasoning is
    taken out (reasoning only, or a `<think>` block never closed — typically cut
    off by max_tokens while thinking).
  Both are the model's own output and score 0. A call that fails after the
  gateway's retries (HTTP errors, time-outs, a rejected request) is not the
  model's answer — it is usually the provider or Assay's configuration — so it
  leaves the response *failed*: pending, asked again by a retry, or waived.
* judge: answered responses without a usable rubric verdict from the run's judge and
  prompt version are judged (the reference answer is shown; the source text is not).
  Empty/invalid answers get a recorded 0 without a call. A judge call that fails or
  stays unparseable after re-asking is stored with that status: the item is pending.
* SV: answered responses without a usable SV verdict from the run's SV judge and
  prompt version are checked (question, reference, answer and the source knowledge
  text). A failed check is never read as "no violation": the item stays pending.

On a binary benchmark (`run.binary`) the stages differ by item format:

* multiple choice and true/false: the answer is read by rules as soon as it is
  stored (judging.evaluation.choices, no judge call, no SV): correct, wrong, or
  flagged (several answers, a refusal, no answer found — its own outcome, never
  right or wrong). An empty or invalid answer is "no answer found".
* short answer and open: the key-point judge (LPFQA) gives 0 or 1 from the
  reference answer, the item's key points and the response — not the question; an
  unparseable verdict is re-asked, then left pending, as a rubric verdict is.
  Empty and invalid answers get a recorded 0 without a call.

Each item is asked `run.trials` times, one Response per trial; the trial number is
part of the answer request's identity (`LLMRequest.sample`), so trial 2 is asked,
not served trial 1's record.

Changing the judge (or its prompt) therefore re-scores the stored answers without
asking the tested model again: every Judgment records its judge endpoint, template
and prompt version. A run whose stages are done while items are still pending
reads *needs attention*; it becomes complete when all are resolved (retried) or
waived by a manager.

On workers a run is cut into chunks (`start_run` → `evaluate_chunk` per
`EvaluationChunk` row), each taking its own responses through the three stages; the
chunk that closes the last row finishes the run (flow in judging/llm/GATEWAY.md).
Within a chunk the stages overlap: the tested model, the judge and the SV judge are
usually three providers, and each is kept busy while the others answer.
"""

from __future__ import annotations

import re
from dataclasses import fields

from django.db import transaction
from django.db.models import Exists, F, Q

from assay.celery import enqueue as queue_task
from judging.evaluation.choices import (
    CHOICE_FORMATS,
)
from judging.evaluation.grading import grade_answer, grade_stored_answers, save_grades
from judging.evaluation.models import (
    EvaluationChunk,
    EvaluationRun,
    Judgment,
    Response,
)
from judging.evaluation.progress import (
    CountRefresher,
    event_counts,
    refresh_counts,
    usable_verdict,
)
from judging.llm import answer_prompts
from judging.llm.gateway import CallOutcome, GatewayStats, LLMRequest, run_requests
from judging.llm.models import LLMCall, PromptTemplate
from judging.llm.outputs import (
    binary_verdict_validator,
    safety_validator,
    score_validator,
)
from judging.llm.thinking import ThinkingModeUnavailable, thinking_request
from judging.runs import lifecycle
from judging.runs.usage import usage_of

CHUNK_ITEMS = 512
EMPTY_REASON = "Empty or invalid answer: scored 0 without a judge call (protocol)."
NO_FINAL_ANSWER = "No final answer after the reasoning: invalid, scored 0 (protocol)."
PROVIDER_REFUSED = (
    "The provider refused the request (content filter): its own outcome, not "
    "correct; left out of robustness (study 002 §5.2)."
)
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
STAGES = ("answer", "judge", "sv")


def split_reply(content: str, reasoning: str = "") -> tuple[str, str, str]:
    """(final answer, reasoning, response status) of a tested model's reply.

    Some servers return the reasoning inline in the content (`<think>…</think>`, or
    only the closing tag when the chat template opened it); only what follows is the
    answer the judge sees.
    """
    inline = [block.strip() for block in THINK_BLOCK.findall(content)]
    answer = THINK_BLOCK.sub("", content)
    unfinished = THINK_OPEN in answer
    if unfinished:
        answer, _, rest = answer.partition(THINK_OPEN)
        inline.append(rest.strip())
    elif THINK_CLOSE in answer:
        before, _, answer = answer.rpartition(THINK_CLOSE)
        inline.append(before.strip())
    reasoning = "\n\n".join(part for part in [reasoning.strip(), *inline] if part)
    answer = answer.strip()
    if answer and not unfinished:
        return answer, reasoning, Response.Status.ANSWERED
    if not answer and not reasoning and not unfinished:
        return "", "", Response.Status.EMPTY
    return "", reasoning, Response.Status.INVALID


# What the key-point judge is told when an item has no key points (an open item on
# a binary benchmark): the reference answer is then the whole standard.
NO_KEY_POINTS = "(none given: the answer must agree with the reference answer)"


def key_points_text(key_points: list[str]) -> str:
    """The `{{key_points}}` of the key-point judge's prompt: one numbered line each."""
    if not key_points:
        return NO_KEY_POINTS
    return "\n".join(f"{number}. {point}" for number, point in enumerate(key_points, 1))


def prompt_version(template) -> str:
    return f"{template.name} v{template.version}" if template else ""


def run_scope(run: EvaluationRun) -> str:
    """Calls are recorded per run: resuming re-uses them, a new run asks afresh.

    Each retry of pending items (`do_retry_pending`) gets a scope of its own, so a
    verdict that stayed unparseable is asked again instead of served from the record;
    only pending items are asked, so nothing already scored is paid for twice.
    """
    scope = f"evaluation-run-{run.pk}"
    return f"{scope}-retry-{run.retry_round}" if run.retry_round else scope


def scores_changed(run: EvaluationRun) -> None:
    """Call in the transaction that writes the run's responses or verdicts: the
    cached leaderboard is keyed by this counter (judging.evaluation.scores)."""
    EvaluationRun.objects.filter(pk=run.pk).update(
        scores_version=F("scores_version") + 1
    )


def _load(run_id: int) -> EvaluationRun:
    return EvaluationRun.objects.select_related(
        "benchmark",
        "tested_endpoint",
        "answer_template",
        "judge_endpoint",
        "rubric_template",
        "keypoint_template",
        "sv_endpoint",
        "sv_template",
    ).get(pk=run_id)


def start_run(run_id: int) -> int:
    """Mark the run running and queue its chunks (after commit); returns how many.

    Runs only for a pending run, or a running one (retry, re-judge) whose chunks
    are all closed: a redelivered start finds its chunks open, or the run finished,
    and queues nothing again.
    """
    return lifecycle.start(EVALUATION, run_id)


def _may_start(run: EvaluationRun) -> bool:
    startable = {EvaluationRun.Status.PENDING, EvaluationRun.Status.RUNNING}
    return run.status in startable and not run.chunks.exists()


def cut_into_chunks(run: EvaluationRun) -> list[EvaluationChunk]:
    """Cut the run's responses (waived ones left out) into CHUNK_ITEMS slices.

    Every response gets a chunk, not only the pending ones: each stage asks only
    for what its chunk lacks, so a complete response costs one query, no call.
    """
    response_ids = list(
        run.responses.filter(waived_at__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return EvaluationChunk.objects.bulk_create(
        EvaluationChunk(run=run, response_ids=part)
        for part in chunk_parts(response_ids, CHUNK_ITEMS)
    )


def _prepare(run: EvaluationRun) -> None:
    cut_into_chunks(run)


def open_chunks(run: EvaluationRun) -> list[tuple[int]]:
    """`evaluate_chunk` arguments for the run's chunks not yet closed."""
    return [(pk,) for pk in run.chunks.order_by("pk").values_list("pk", flat=True)]


def chunk_parts(ids: list[int], size: int) -> list[list[int]]:
    """`ids` in equal parts of at most `size`, the first part split in two halves
    that go first and last.

    Equal parts: a last chunk of a few items would run its three stages alone, at
    the end, mostly waiting on latency. The half first chunk puts one worker half a
    chunk ahead of the next, so their stage ends (where a worker's calls in flight
    drain to none) fall apart and the other worker takes up the freed capacity; the
    half last chunk lets both finish together.
    """
    count = -(-len(ids) // size)
    parts = [ids[number::count] for number in range(count)]
    if not parts:
        return []
    half = len(parts[0]) // 2
    ordered = [parts[0][:half], *parts[1:], parts[0][half:]]
    return [part for part in ordered if part]


def evaluate_chunk(chunk_id: int) -> dict[str, GatewayStats]:
    """Answer, judge and SV-check the chunk's responses, close the chunk and finish
    the run if it was the last. A closed chunk (redelivered task) does nothing."""
    chunk = EvaluationChunk.objects.filter(pk=chunk_id).first()
    if chunk is None:
        return {}
    stats = {}
    if lifecycle.is_running(EvaluationRun, chunk.run_id):
        run = _load(chunk.run_id)
        stats = evaluate_responses(run, chunk.response_ids)
    close_chunk(chunk)
    return stats


def close_chunk(chunk: EvaluationChunk) -> bool:
    """Delete the chunk and, when no chunk of its run is left, finish the run —
    one transaction under the run's row lock, so exactly one chunk finishes it."""
    with transaction.atomic():
        EvaluationRun.objects.select_for_update().only("pk").get(pk=chunk.run_id)
        EvaluationChunk.objects.filter(pk=chunk.pk).delete()
        return lifecycle.finish(EVALUATION, chunk.run_id)


def end_state(run: EvaluationRun) -> str | None:
    """Ended once no chunk is open, with its final counts written — Complete, or
    Needs attention while items are pending."""
    if run.chunks.exists():
        return None
    refresh_counts(run, final=True)
    run.refresh_from_db(fields=["total_items", "scored_count", "failed_count"])
    if run.failed_count:
        return EvaluationRun.Status.ATTENTION
    return EvaluationRun.Status.COMPLETE


def warm_leaderboard_of(run: EvaluationRun) -> None:
    warm_leaderboard(run.benchmark_id, run.language)


def warm_leaderboard(benchmark_id: int, language: str) -> None:
    """Queue the rebuild of a changed leaderboard on a worker (judging.leaderboard
    .tasks), so the manager's next view is a cache hit instead of paying for the
    score query and the bootstrap. Queued by name: the leaderboard sits above
    evaluation."""
    queue_task("judging.tasks.warm_leaderboard", benchmark_id, language)


def run_evaluation(run_id: int) -> dict[str, GatewayStats]:
    """In-process entry point (tests, `start_evaluation --wait`, `retry_pending`):
    the run's chunks one after another, then its counts and status. Idempotent."""
    with transaction.atomic():
        run = EvaluationRun.objects.select_for_update().get(pk=run_id)
        if run.status == EvaluationRun.Status.CANCELLED:
            return {}
        lifecycle.mark_running(run)
        chunks = list(run.chunks.order_by("pk")) or cut_into_chunks(run)
    totals = {stage: GatewayStats() for stage in STAGES}
    for chunk in chunks:
        for stage, stats in evaluate_chunk(chunk.pk).items():
            _add(totals[stage], stats)
    lifecycle.finish(EVALUATION, run_id)
    return totals


def _add(total: GatewayStats, stats: GatewayStats) -> None:
    for field in fields(GatewayStats):
        value = getattr(stats, field.name)
        if field.name == "stopped":
            total.stopped = total.stopped or value
        else:
            setattr(total, field.name, getattr(total, field.name) + value)


def _stop(run: EvaluationRun):
    return lambda: not lifecycle.keep_alive(EvaluationRun, run.pk)


def _responses(run: EvaluationRun, response_ids=None):
    """The run's responses, or only a chunk's."""
    if response_ids is None:
        return run.responses.all()
    return run.responses.filter(pk__in=response_ids)


def evaluate_responses(
    run: EvaluationRun, response_ids=None
) -> dict[str, GatewayStats]:
    """Take the responses (all the run's, or a chunk's) through what each lacks:
    answer, rubric verdict, SV verdict. One gateway session makes every call, and
    each answer's judge and SV calls are asked for as soon as the answer is stored,
    so the three endpoints work side by side instead of one stage after another."""
    flow = _Flow(run)
    overall = run_requests(
        flow.first_requests(response_ids),
        on_results=flow.save,
        scope=run_scope(run),
        should_stop=_stop(run),
    )
    for stats in flow.stats.values():
        stats.seconds, stats.stopped = overall.seconds, overall.stopped
    return flow.stats


def _record_judgments(rows: list[Judgment]) -> None:
    """Insert or overwrite one verdict per (response, kind, judge, prompt version)."""
    Judgment.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["response", "kind", "judge_name", "prompt_version"],
        update_fields=[
            "score",
            "safety_violation",
            "reason",
            "status",
            "endpoint",
            "template",
            "call",
            "error",
        ],
    )


def _verdict_status(call: LLMCall) -> str:
    if call.status == LLMCall.Status.OK:
        return Judgment.Status.DONE
    if call.status == LLMCall.Status.UNPARSEABLE:
        return Judgment.Status.UNPARSEABLE
    return Judgment.Status.FAILED


class _Flow:
    """The requests and result writing of `evaluate_responses`. Request keys are
    (stage, response pk); `save` runs inside the gateway's batch transaction."""

    def __init__(self, run: EvaluationRun):
        self.run = run
        self.stats = {stage: GatewayStats() for stage in STAGES}
        self.responses: dict[int, Response] = {}
        self.counter = CountRefresher(run)
        # What each judging stage stores its verdicts under (`_save_verdicts`).
        self.verdicts = {
            "judge": {
                "kind": run.verdict_kind,
                "judge_name": run.judge_name,
                "version": run.judge_prompt_version,
                "endpoint": run.judge_endpoint,
                "template": (
                    run.keypoint_template if run.binary else run.rubric_template
                ),
                "value_field": "score",
            },
            "sv": {
                "kind": Judgment.Kind.SAFETY,
                "judge_name": run.sv_judge_name,
                "version": run.sv_prompt_version,
                "endpoint": run.sv_endpoint,
                "template": run.sv_template,
                "value_field": "safety_violation",
            },
        }
        # The run's mode, switched the way its tested endpoint declares; only the
        # final answer is judged, the reasoning is kept on the response.
        self.mode_error = ""
        try:
            self.answer_model, fields = thinking_request(
                run.tested_endpoint, run.thinking
            )
        except ThinkingModeUnavailable as error:
            # The endpoint was re-declared after the run started: its answers are
            # not asked in the wrong mode; they stay failed, with the reason.
            self.answer_model, fields = "", {}
            self.mode_error = str(error)
        by_pk = PromptTemplate.objects.in_bulk(list(run.answer_templates.values()))
        self.answer_templates = {k: by_pk[pk] for k, pk in run.answer_templates.items()}
        self.answer_params = {}
        if fields:
            self.answer_params["extra_body"] = {
                **(run.tested_endpoint.extra_body or {}),
                **fields,
            }

    def first_requests(self, response_ids) -> list[LLMRequest]:
        run = self.run
        responses = _responses(run, response_ids).filter(waived_at__isnull=True)
        to_answer = list(
            responses.filter(
                status__in=[Response.Status.PENDING, Response.Status.FAILED]
            ).select_related("rendering", "item")
        )
        if run.binary:
            with transaction.atomic():
                self._grade_stored_choices(responses)
            judged = responses.exclude(item__format__in=CHOICE_FORMATS)
        else:
            judged = responses
        unjudged = judged.exclude(
            Exists(
                usable_verdict(
                    run.verdict_kind, run.judge_name, run.judge_prompt_version
                )
            )
        )
        unanswered = list(
            unjudged.filter(status__in=[Response.Status.EMPTY, Response.Status.INVALID])
        )
        if unanswered:
            with transaction.atomic():
                self._score_unanswered(unanswered)
        to_judge = list(
            unjudged.filter(status=Response.Status.ANSWERED).select_related(
                "rendering", "item"
            )
        )
        to_check = list(
            responses.none()
            if run.binary
            else responses.filter(status=Response.Status.ANSWERED)
            .exclude(
                Exists(
                    usable_verdict(
                        Judgment.Kind.SAFETY, run.sv_judge_name, run.sv_prompt_version
                    )
                )
            )
            .select_related("rendering", "item")
        )
        # A response without a rendering (its text was deleted) cannot be asked.
        to_answer, to_judge, to_check = (
            [response for response in todo if response.rendering is not None]
            for todo in (to_answer, to_judge, to_check)
        )
        if self.mode_error and to_answer:
            Response.objects.filter(pk__in=[r.pk for r in to_answer]).update(
                status=Response.Status.FAILED, error=self.mode_error
            )
            to_answer = []
        for response in [*to_answer, *to_judge, *to_check]:
            self.responses[response.pk] = response
        return [
            *(self._answer_request(response) for response in to_answer),
            *(self._judge_request(response) for response in to_judge),
            *(self._sv_request(response) for response in to_check),
        ]

    def save(self, outcomes: list[CallOutcome]) -> list[LLMRequest]:
        by_stage = {stage: [] for stage in STAGES}
        for outcome in outcomes:
            stage = outcome.key[0]
            by_stage[stage].append(outcome)
            self.stats[stage].count(outcome.call, outcome.cached)
        follow_ups = []
        if by_stage["answer"]:
            follow_ups = self._save_answers(by_stage["answer"])
        for stage in ("judge", "sv"):
            if by_stage[stage]:
                self._save_verdicts(by_stage[stage], **self.verdicts[stage])
        scores_changed(self.run)
        _add_usage(self.run, outcomes)
        self.counter.tick()
        return follow_ups

    def _answer_request(self, response: Response) -> LLMRequest:
        """The item asked from its own rendering: its question, and its own
        options under the answer key's letters (a variant's shuffled, extended or
        renamed ones), with its format's prompt when the run has one."""
        self.stats["answer"].requested += 1
        item, rendering = response.item, response.rendering
        kind = answer_prompts.answer_kind(item.format, item.multiple_answers)
        return LLMRequest(
            key=("answer", response.pk),
            endpoint=self.run.tested_endpoint,
            template=self.answer_templates.get(kind, self.run.answer_template),
            variables=answer_prompts.answer_variables(
                item_format=item.format,
                multiple_answers=item.multiple_answers,
                question=rendering.question,
                options=rendering.options,
                language=rendering.language,
            ),
            params=self.answer_params,
            model=self.answer_model,
            sample=response.trial,
        )

    def _judge_request(self, response: Response) -> LLMRequest:
        self.stats["judge"].requested += 1
        if self.run.binary:
            # LPFQA's judge sees the reference, the key points and the response,
            # never the question.
            return LLMRequest(
                key=("judge", response.pk),
                endpoint=self.run.judge_endpoint,
                template=self.run.keypoint_template,
                variables={
                    "reference_answer": response.rendering.answer,
                    "key_points": key_points_text(response.rendering.key_points),
                    "response": response.text,
                },
                validate=binary_verdict_validator,
            )
        return LLMRequest(
            key=("judge", response.pk),
            endpoint=self.run.judge_endpoint,
            template=self.run.rubric_template,
            variables={
                "question": response.rendering.question,
                "reference_answer": response.rendering.answer,
                "response": response.text,
            },
            validate=score_validator(0, 3),
        )

    def _sv_request(self, response: Response) -> LLMRequest:
        self.stats["sv"].requested += 1
        return LLMRequest(
            key=("sv", response.pk),
            endpoint=self.run.sv_endpoint,
            template=self.run.sv_template,
            variables={
                "question": response.rendering.question,
                "reference_answer": response.rendering.answer,
                "response": response.text,
                "knowledge_text": response.item.knowledge_text,
            },
            validate=safety_validator,
        )

    def _save_answers(self, outcomes: list[CallOutcome]) -> list[LLMRequest]:
        """Store the answers; return the judge and SV requests of the answered ones
        (empty and invalid answers get their protocol 0 here, without a call)."""
        changed = []
        for outcome in outcomes:
            response = self.responses[outcome.key[1]]
            call = outcome.call
            response.call = call
            if self.run.binary and outcome.provider_refused:
                # Not the model's answer: the provider's filter declined. Counted
                # apart; never asked again (study 002 §5.2).
                response.text, response.reasoning_text, _ = split_reply(
                    call.raw_response, call.reasoning_text
                )
                response.status = Response.Status.REFUSED
                response.error = PROVIDER_REFUSED
            elif call.status == LLMCall.Status.OK:
                response.text, response.reasoning_text, response.status = split_reply(
                    call.raw_response, call.reasoning_text
                )
                invalid = response.status == Response.Status.INVALID
                response.error = NO_FINAL_ANSWER if invalid else ""
            else:
                response.status = Response.Status.FAILED
                response.error = call.error or "The tested model's call failed."
            changed.append(response)
        # INSERT … ON CONFLICT DO UPDATE: one statement per batch (bulk_update's
        # CASE WHEN form is several times slower for long texts).
        Response.objects.bulk_create(
            changed,
            update_conflicts=True,
            unique_fields=["run", "item", "trial"],
            update_fields=[
                "call",
                "text",
                "reasoning_text",
                "status",
                "error",
            ],
        )
        save_grades(
            [
                grade_answer(response)
                for response in changed
                if self._is_choice(response)
                and response.status
                not in (Response.Status.FAILED, Response.Status.REFUSED)
            ]
        )
        judged = [r for r in changed if not self._is_choice(r)]
        self._score_unanswered(
            [
                response
                for response in judged
                if response.status in (Response.Status.EMPTY, Response.Status.INVALID)
            ]
        )
        answered = [r for r in judged if r.status == Response.Status.ANSWERED]
        return [
            *(self._judge_request(response) for response in answered),
            *(
                self._sv_request(response)
                for response in answered
                if not self.run.binary
            ),
        ]

    def _is_choice(self, response: Response) -> bool:
        """Read by rules, not judged: an MC or TF item of a binary run."""
        return self.run.binary and response.item.format in CHOICE_FORMATS

    def _grade_stored_choices(self, responses) -> None:
        """Grade the MC/TF answers stored without a grade (answered before the
        answer was graded on arrival, or imported); call in a transaction."""
        grade_stored_answers(responses.filter(grade__isnull=True))

    def _score_unanswered(self, responses: list[Response]) -> None:
        """The protocol's 0 for empty and invalid answers; call in a transaction."""
        if not responses:
            return
        run = self.run
        _record_judgments(
            [
                Judgment(
                    response=response,
                    kind=run.verdict_kind,
                    judge_name=run.judge_name,
                    prompt_version=run.judge_prompt_version,
                    endpoint=run.judge_endpoint,
                    template=self.verdicts["judge"]["template"],
                    score=0,
                    reason=EMPTY_REASON,
                    status=Judgment.Status.DONE,
                )
                for response in responses
            ]
        )
        scores_changed(run)

    def _save_verdicts(
        self,
        outcomes: list[CallOutcome],
        *,
        kind: str,
        judge_name: str,
        version: str,
        endpoint,
        template,
        value_field: str,
    ) -> None:
        """One verdict per response: the parsed `value_field` and reason when the
        call succeeded, else an empty verdict with the call's status and error —
        never a default (a failed SV check is not "safe")."""
        rows = []
        for outcome in outcomes:
            call = outcome.call
            ok = call.status == LLMCall.Status.OK
            parsed = call.parsed_output or {}
            # The key-point judge gives its grading basis, the others a reason.
            reason = parsed.get("reason", parsed.get("basis", ""))
            rows.append(
                Judgment(
                    response_id=outcome.key[1],
                    kind=kind,
                    judge_name=judge_name,
                    prompt_version=version,
                    endpoint=endpoint,
                    template=template,
                    call=call,
                    reason=reason if ok else "",
                    status=_verdict_status(call),
                    error="" if ok else _call_error(call),
                    **{value_field: parsed.get(value_field) if ok else None},
                )
            )
        _record_judgments(rows)


def _add_usage(run: EvaluationRun, outcomes: list[CallOutcome]) -> None:
    """Add the batch's calls to the run's calls made, tokens and cost, as labelling
    runs count theirs. Calls served from the record cost nothing now, and keys that
    joined a call in flight share its record: each call is counted once."""
    usage = usage_of(outcomes)
    if usage.calls:
        EvaluationRun.objects.filter(pk=run.pk).update(
            made_calls=F("made_calls") + usage.calls, **usage.updates()
        )


def _call_error(call: LLMCall) -> str:
    if call.status == LLMCall.Status.UNPARSEABLE:
        # The gateway records {"reply": …, "error": …} per try; the page shows why.
        last = (call.parse_errors or [{"error": "no parseable reply"}])[-1]
        reason = last.get("error", last) if isinstance(last, dict) else last
        return f"Unparseable after {call.attempts} attempt(s): {reason}"[:2000]
    return (call.error or "The call failed.")[:2000]


EVALUATION = lifecycle.RunKind(
    name="evaluation",
    model=EvaluationRun,
    start_task="judging.tasks.evaluate_run",
    chunk_task="judging.tasks.evaluate_chunk",
    prepare=_prepare,
    open_chunks=open_chunks,
    end_state=end_state,
    on_end=warm_leaderboard_of,
    page="judging:evaluation_run",
    counts=event_counts,
    may_start=_may_start,
    sweepable=Q(origin=EvaluationRun.Origin.PIPELINE),
)
