"""State changes for benchmark construction.

`check_…` functions validate and raise ValidationError with a message for the user;
`do_…` functions write under `transaction.atomic` and queue Celery work on commit.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from assay.celery import enqueue
from benchmark.models import Benchmark
from benchmark.validation import Problems
from construction.dangling import default_phrases, parse_phrases
from construction.forum.posts import PostFilter
from construction.models import (
    Candidate,
    SearchService,
    Source,
    Stage,
    StageDecision,
    StageRun,
)
from construction.pipeline import STAGES, stages_run
from construction.sources import read_sources
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import check_template, default_template
from judging.llm.thinking import ThinkingModeUnavailable, thinking_request
from judging.runs import lifecycle
from reviewqueue import engine
from reviewqueue.engine import StaleRefusal


@dataclass(frozen=True)
class SourceImport:
    added: int
    already_present: int  # in the benchmark before, or earlier in the same file
    filtered_out: int = 0  # forum posts outside the import's PostFilter

    def __str__(self):
        kept = self._kept()
        if self.filtered_out:
            kept += " " + ngettext(
                "%(count)s forum post left out by the post filter.",
                "%(count)s forum posts left out by the post filter.",
                self.filtered_out,
            ) % {"count": self.filtered_out}
        return kept

    def _kept(self):
        if not self.added and not self.already_present:
            return gettext("Nothing added.")
        if not self.added:
            return _("Nothing added: all %(present)s source(s) were already there.") % {
                "present": self.already_present
            }
        if self.already_present:
            return _(
                "%(added)s source(s) added; %(present)s already there, skipped."
            ) % {"added": self.added, "present": self.already_present}
        return _("%(added)s source(s) added.") % {"added": self.added}


@transaction.atomic
def do_import_sources(
    benchmark: Benchmark,
    data: bytes,
    filename: str,
    post_filter: PostFilter | None = None,
):
    """Add the file's sources to the benchmark, all or nothing (ImportRejected
    with every problem by line and field); a source whose content hash the
    benchmark already holds is skipped, so importing a file again adds nothing.
    Forum posts outside `post_filter` (views, replies, votes, dates) are left
    out and counted."""
    records, problems = read_sources(data, filename)
    if not problems:
        problems = _other_pipeline(benchmark, records)
    if problems:
        raise problems.rejection()
    post_filter = post_filter or PostFilter()
    before = len(records)
    records = [
        record
        for record in records
        if record.kind != Source.Kind.FORUM_POST or post_filter.keeps(record.fields)
    ]
    filtered_out = before - len(records)
    known = set(
        Source.objects.filter(
            benchmark=benchmark,
            content_hash__in=[record.content_hash for record in records],
        ).values_list("content_hash", flat=True)
    )
    new = []
    for record in records:
        if record.content_hash in known:
            continue
        known.add(record.content_hash)
        new.append(
            Source(
                benchmark=benchmark,
                kind=record.kind,
                reference=record.reference,
                text=record.text,
                fields=record.fields,
                content_hash=record.content_hash,
            )
        )
    # ignore_conflicts: an import of the same file racing this one adds each
    # source once.
    Source.objects.bulk_create(new, ignore_conflicts=True)
    return SourceImport(
        added=len(new),
        already_present=len(records) - len(new),
        filtered_out=filtered_out,
    )


def _pipeline_of(kind: str) -> str:
    return "lpfqa" if kind == Source.Kind.FORUM_POST else "industrybench"


PIPELINE_SOURCES = {
    "lpfqa": _("forum posts (LPFQA's construction)"),
    "industrybench": _(
        "GB/T clauses and product records (IndustryBench's construction)"
    ),
}


def _other_pipeline(benchmark: Benchmark, records) -> Problems:
    """A problem for each record of the other pipeline's kind than the
    benchmark's sources (or the file's first record, for a benchmark without
    any): one benchmark is built by one paper's pipeline — the stages, the
    funnel and the release each read one kind of source."""
    problems = Problems()
    first = benchmark.sources.values_list("kind", flat=True).first()
    if first is None and records:
        first = records[0].kind
    if first is None:
        return problems
    pipeline = _pipeline_of(first)
    for record in records:
        if _pipeline_of(record.kind) != pipeline:
            problems.add(
                record.line,
                "kind",
                _(
                    "a source of kind “%(kind)s” cannot join %(sources)s in one "
                    "benchmark: import it into a benchmark of its own"
                )
                % {
                    "kind": Source.Kind(record.kind).label,
                    "sources": PIPELINE_SOURCES[pipeline],
                },
            )
    return problems


def check_one_pipeline(benchmark: Benchmark) -> None:
    """Refuse a benchmark holding both kinds of source (imported before the
    import refused the mix): neither pipeline can tell its candidates."""
    kinds = {
        _pipeline_of(kind)
        for kind in benchmark.sources.values_list("kind", flat=True).distinct()
    }
    if len(kinds) > 1:
        raise ValidationError(
            _(
                "%(benchmark)s holds both %(lpfqa)s and %(industrybench)s: each "
                "pipeline reads one kind. Move one kind into a benchmark of its own."
            )
            % {"benchmark": benchmark, **PIPELINE_SOURCES}
        )


# -- stage runs ----------------------------------------------------------------------

LLM_STAGES = {
    Stage.GENERATION: (
        PromptTemplate.Purpose.GENERATION,
        {"count", "source_text"},
    ),
    Stage.QUALITY: (
        PromptTemplate.Purpose.QUALITY_CHECK,
        {"question", "reference_answer", "knowledge_text"},
    ),
    Stage.SEARCH: (
        PromptTemplate.Purpose.SEARCH_QUERIES,
        {"question", "reference_answer"},
    ),
    Stage.DEEP: (
        PromptTemplate.Purpose.DEEP_CLAIMS,
        {"question", "reference_answer"},
    ),
}
# The second prompt of search and deep verification: the verdict on the results.
VERIFIERS = {
    Stage.SEARCH: (
        PromptTemplate.Purpose.SEARCH_VERIFICATION,
        {"question", "reference_answer", "search_results"},
    ),
    Stage.DEEP: (
        PromptTemplate.Purpose.DEEP_VERIFICATION,
        {"question", "reference_answer", "knowledge_text", "search_results"},
    ),
}
VERIFIER = VERIFIERS[Stage.SEARCH]
# The forum pipeline's prompts (LPFQA, construction.forum.stages), checked by
# judging.llm.prompts.check_template: (purpose, placeholders the prompt must
# use, placeholders the stage fills). Conversion has two: multiple choice (the
# run's template) and short answer (its verifier_template).
_PAIR = {"question", "answer", "explanation"}
FORUM_PROMPTS = {
    Stage.EXTRACT_QA: (
        PromptTemplate.Purpose.FORUM_EXTRACT,
        {"post_text"},
        {"forum", "title", "post_text"},
    ),
    Stage.QA_FILTER: (
        PromptTemplate.Purpose.FORUM_QUALITY,
        {"question", "answer"},
        _PAIR,
    ),
    Stage.CONVERT: (
        PromptTemplate.Purpose.FORUM_MULTIPLE_CHOICE,
        {"question", "answer"},
        _PAIR,
    ),
}
SHORT_ANSWER_PROMPT = (
    PromptTemplate.Purpose.FORUM_SHORT_ANSWER,
    {"question", "answer"},
    _PAIR,
)
RUNNABLE_STAGES = (
    Stage.GENERATION,
    Stage.EXTRACT_QA,
    Stage.QA_FILTER,
    Stage.CONVERT,
    Stage.DEDUP,
    Stage.QUALITY,
    Stage.SEARCH,
    Stage.DEEP,
    Stage.EXACT,
    Stage.DANGLING,
)
# The stages that must have run before each one. Search verification is optional
# (a team without a search service goes from quality to the release sample);
# deep verification reads its evidence, so needs it. The release sample
# (release.do_draw_release_sample) is drawn by a person, not run.
_SCREENED = (Stage.GENERATION, Stage.DEDUP, Stage.QUALITY)
REQUIRED_BEFORE = {
    Stage.GENERATION: (),
    Stage.DEDUP: (Stage.GENERATION,),
    Stage.QUALITY: (Stage.GENERATION, Stage.DEDUP),
    Stage.SEARCH: _SCREENED,
    Stage.DEEP: (*_SCREENED, Stage.SEARCH),
    Stage.EXACT: (*_SCREENED, Stage.RELEASE),
    Stage.DANGLING: (*_SCREENED, Stage.RELEASE, Stage.EXACT),
    Stage.EXTRACT_QA: (),
    Stage.QA_FILTER: (Stage.EXTRACT_QA,),
    Stage.CONVERT: (Stage.EXTRACT_QA, Stage.QA_FILTER),
}


def shipped_prompts(stage: str, template, verifier_template):
    """The prompts a stage run uses: those chosen, else the shipped ones of its
    stage."""
    first = LLM_STAGES.get(stage) or FORUM_PROMPTS.get(stage)
    if template is None and first:
        template = default_template(first[0])
    second = VERIFIERS.get(stage) or (
        SHORT_ANSWER_PROMPT if stage == Stage.CONVERT else None
    )
    if verifier_template is None and second:
        verifier_template = default_template(second[0])
    return template, verifier_template


def is_forum_benchmark(benchmark: Benchmark) -> bool:
    return benchmark.sources.filter(kind=Source.Kind.FORUM_POST).exists()


# What each stage's prompt is given (`construction.pipeline`,
# `construction.verification`): a template may use only these.
_CANDIDATE_VARIABLES = {
    "question",
    "reference_answer",
    "knowledge_text",
    "source_reference",
}
PROVIDED = {
    PromptTemplate.Purpose.GENERATION: {"count", "kind", "reference", "source_text"},
    PromptTemplate.Purpose.QUALITY_CHECK: _CANDIDATE_VARIABLES,
    PromptTemplate.Purpose.SEARCH_QUERIES: _CANDIDATE_VARIABLES,
    PromptTemplate.Purpose.DEEP_CLAIMS: _CANDIDATE_VARIABLES,
    PromptTemplate.Purpose.SEARCH_VERIFICATION: {
        *_CANDIDATE_VARIABLES,
        "search_results",
    },
    PromptTemplate.Purpose.DEEP_VERIFICATION: {*_CANDIDATE_VARIABLES, "search_results"},
}


def _check_template(template: PromptTemplate | None, purpose, needed) -> None:
    check_template(template, purpose, needed=needed, provided=PROVIDED[purpose])


def check_start_stage(
    benchmark: Benchmark,
    stage: str,
    *,
    endpoint: Endpoint | None,
    template: PromptTemplate | None,
    verifier_template: PromptTemplate | None = None,
    search_service: SearchService | None = None,
    thinking: bool = False,
) -> None:
    if stage not in RUNNABLE_STAGES:
        raise ValidationError(
            _("The %(stage)s stage cannot be run yet.") % {"stage": stage}
        )
    check_one_pipeline(benchmark)
    if stage == Stage.GENERATION and not benchmark.sources.exists():
        raise ValidationError(
            _("%(benchmark)s has no sources: import some first.")
            % {"benchmark": benchmark}
        )
    forum = is_forum_benchmark(benchmark)
    if stage == Stage.EXTRACT_QA and not forum:
        raise ValidationError(
            _("%(benchmark)s has no forum posts: import some first.")
            % {"benchmark": benchmark}
        )
    # A candidate enters a stage only after the earlier stages decided on it;
    # a forum benchmark's candidates come from QA extraction.
    ran = stages_run(benchmark.pk)
    required = [
        Stage.EXTRACT_QA if forum and s == Stage.GENERATION else s
        for s in REQUIRED_BEFORE[stage]
    ]
    missing_stages = [s for s in required if s not in ran]
    if missing_stages:
        first = missing_stages[0]
        raise ValidationError(
            _("Draw the release sample first.")
            if first == Stage.RELEASE
            else f"Run the {Stage(first).label.lower()} stage first."
        )
    if stage == Stage.DEDUP and endpoint is not None and not endpoint.is_active:
        raise ValidationError(_("Choose an active embeddings endpoint."))
    if stage in LLM_STAGES or stage in FORUM_PROMPTS:
        if endpoint is None or not endpoint.is_active:
            raise ValidationError(_("Choose an active endpoint."))
    if stage in LLM_STAGES:
        _check_template(template, *LLM_STAGES[stage])
    if stage in FORUM_PROMPTS:
        purpose, needed, provided = FORUM_PROMPTS[stage]
        check_template(template, purpose, needed=needed, provided=provided)
    if stage == Stage.CONVERT:
        purpose, needed, provided = SHORT_ANSWER_PROMPT
        check_template(verifier_template, purpose, needed=needed, provided=provided)
    if stage in VERIFIERS:
        _check_template(verifier_template, *VERIFIERS[stage])
        if search_service is None or not search_service.is_active:
            raise ValidationError(
                _(
                    "Choose an active search service (add one with "
                    "`manage.py add_search_service` or in the admin)."
                )
            )
    if stage == Stage.DEEP and thinking:
        try:
            thinking_request(endpoint, True)
        except ThinkingModeUnavailable as error:
            raise ValidationError(str(error)) from None


@transaction.atomic
def do_start_stage(
    benchmark: Benchmark,
    stage: str,
    *,
    endpoint: Endpoint | None = None,
    template: PromptTemplate | None = None,
    verifier_template: PromptTemplate | None = None,
    search_service: SearchService | None = None,
    thinking: bool | None = None,
    source_kind: str = "",
    questions_per_source: int = 3,
    threshold: float = 0.9,
    phrases: str = "",
    trial_size: int = 0,
    trial_seed: int = 0,
    user=None,
) -> StageRun:
    """`phrases`: the dangling-reference phrases, one a line; empty
    takes the default list of the benchmark's source language. The run keeps
    the list it used, so its decisions can be traced to it.

    `endpoint` for dedup: an /v1/embeddings endpoint (None: the offline
    character n-grams). `trial_size` > 0 makes an LLM stage's run a trial: it
    decides a seeded sample of that many of the stage's input, under its prompt
    version in the ledger, so a later full run with that version pays nothing
    for them.

    Deep verification asks in thinking mode unless `thinking` is False (the
    paper's Stage 5 is thinking-enabled): the endpoint must declare its switch."""
    thinking = stage == Stage.DEEP and thinking is not False
    check_start_stage(
        benchmark,
        stage,
        endpoint=endpoint,
        template=template,
        verifier_template=verifier_template,
        search_service=search_service,
        thinking=thinking,
    )
    if trial_size and stage not in (*LLM_STAGES, *FORUM_PROMPTS):
        raise ValidationError(_("Only a stage that asks an LLM is tried on a sample."))
    if trial_size < 0 or trial_seed < 0:
        raise ValidationError(_("The trial's size and seed must not be negative."))
    if not 1 <= questions_per_source <= 20:
        raise ValidationError(_("Questions per source must be between 1 and 20."))
    if not 0 < threshold <= 1:
        raise ValidationError(_("The dedup threshold must be above 0 and at most 1."))
    phrase_list = []
    if stage == Stage.DANGLING:
        phrase_list = parse_phrases(phrases) or list(
            default_phrases(benchmark.source_language)
        )
        if not phrase_list:
            raise ValidationError(
                _(
                    "There is no default phrase list for %(source_language)s: give "
                    "the dangling-reference phrases."
                )
                % {"source_language": benchmark.source_language}
            )
    run = StageRun.objects.create(
        benchmark=benchmark,
        stage=stage,
        endpoint=endpoint
        if stage in (*LLM_STAGES, *FORUM_PROMPTS, Stage.DEDUP)
        else None,
        template=template if stage in (*LLM_STAGES, *FORUM_PROMPTS) else None,
        verifier_template=verifier_template
        if stage in (*VERIFIERS, Stage.CONVERT)
        else None,
        search_service=search_service if stage in VERIFIERS else None,
        thinking=thinking,
        source_kind=source_kind if stage in (Stage.GENERATION, Stage.DEDUP) else "",
        questions_per_source=questions_per_source,
        threshold=round(threshold, 2),
        phrases="\n".join(phrase_list),
        trial_size=trial_size,
        trial_seed=trial_seed,
        created_by=user,
    )
    enqueue(STAGES.start_task, run.pk)
    return run


def do_cancel_stage_run(run: StageRun) -> StageRun:
    """Stop a run: queued chunks do nothing and running ones stop within a second."""
    return lifecycle.cancel(run)


@transaction.atomic
def do_resume_stage_run(run: StageRun) -> StageRun:
    """Run a cancelled or ended run again: units without a result and pending
    ones are asked again; decisions already made are kept."""
    run = StageRun.objects.select_for_update().get(pk=run.pk)
    lifecycle.check_resumable(run)
    lifecycle.resume(STAGES, run)
    return run


# -- search services -----------------------------------------------------------------

SEARCH_SERVICE_FIELDS = (
    "adapter",
    "base_url",
    "api_key_env",
    "max_concurrency",
    "is_active",
)


@transaction.atomic
def do_save_search_service(name: str, **fields) -> SearchService:
    """Create the search service `name` or change its settings."""
    unknown = set(fields) - set(SEARCH_SERVICE_FIELDS)
    if unknown:
        raise ValidationError(
            _("Unknown search service settings: %(value)s")
            % {"value": ", ".join(sorted(unknown))}
        )
    service = SearchService.objects.filter(name=name).first() or SearchService(
        name=name
    )
    for field, value in fields.items():
        setattr(service, field, value)
    service.full_clean()
    if service.pk is None:
        service.save()
    else:
        service.save(update_fields=list(fields))
    return service


# -- review of dangling-reference flags ----------------------------------------------


def check_review_flag(decision: StageDecision, outcome: str, reason: str) -> None:
    if decision.stage != Stage.DANGLING or "dangling" not in decision.evidence:
        raise ValidationError(_("Only a dangling-reference flag is reviewed here."))
    if outcome not in (StageDecision.Outcome.PASS, StageDecision.Outcome.REJECT):
        raise ValidationError(_("Approve or remove."))
    if outcome == StageDecision.Outcome.REJECT and not reason.strip():
        raise ValidationError(_("Say why the candidate is removed."))


def flags_queue(benchmark_id: int) -> str:
    """The review queue of a benchmark's dangling-reference flags (reviewqueue
    leases)."""
    return f"dangling:{benchmark_id}"


def benchmark_of(decision: StageDecision) -> int:
    return (
        Candidate.objects.filter(pk=decision.candidate_id)
        .values_list("source__benchmark_id", flat=True)
        .get()
    )


@transaction.atomic
def do_review_flag(
    decision: StageDecision, outcome: str, *, reason: str = "", user
) -> StageDecision:
    """A person's verdict on a flag: approve (pass) or remove (reject, with the
    reason). The same verdict again changes nothing; a flag already decided the
    other way stays so — the ledger keeps one decision per version."""
    check_review_flag(decision, outcome, reason)
    # Locked, so that two reviewers at once leave one verdict.
    decision = StageDecision.objects.select_for_update().get(pk=decision.pk)
    if decision.outcome == outcome:
        return decision
    if decision.outcome != StageDecision.Outcome.PENDING:
        who = decision.decided_by or _("someone")
        already = _("Candidate %(id)s was already removed by %(who)s.")
        if decision.outcome == StageDecision.Outcome.PASS:
            already = _("Candidate %(id)s was already approved by %(who)s.")
        raise StaleRefusal(already % {"id": decision.candidate_id, "who": who})
    engine.finish(flags_queue(benchmark_of(decision)), decision.pk, user)
    decision.evidence = {**decision.evidence, "flag": decision.reason}
    decision.outcome = outcome
    decision.reason = (
        reason.strip() if outcome == StageDecision.Outcome.REJECT else "Approved"
    )
    decision.decided_by = user
    decision.save(update_fields=["evidence", "outcome", "reason", "decided_by"])
    return decision
