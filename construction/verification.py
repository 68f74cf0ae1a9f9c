"""Search verification and deep verification (IndustryBench §3.2, stages 4–5),
the two construction stages that look beyond the source.

    search: one call writes exactly three web queries per candidate (a reply with
            more or fewer is re-asked, then the candidate is pending); the
            run's search service answers each (construction.search.client: top
            5 per query, recorded per service × query); the results, merged and
            deduplicated by URL (≤ 15), go to a verifier call that passes the
            candidate only when it names at least one result corroborating its
            core claims, else rejects it with the reason. No result at all is a
            rejection without a verifier call. A failed query, or a failed or
            unparseable call, leaves the candidate pending with the reason.
            The queries and results are the decision's evidence. A chunk's
            candidates stream: each one's searches start when its queries are
            in, its verifier call (through the gateway's feed) when its results
            are, so the model is not idle while the chunk searches.
    deep:   IndustryBench's Stage 5, per claim and search-augmented, in the
            endpoint's thinking mode (judging.llm.thinking): a call lists the
            candidate's claims (numbers, standard ids, grades, specifications,
            safety constraints) with one or two queries each; the run's search
            service answers them (recorded per service × query like Stage 4's,
            never sent twice); a verdict call reads each claim's results and
            Stage 4's and decides: keep (pass), refine (the corrected reference
            answer becomes the candidate's next AnswerVersion, which later
            stages and release read) or remove (reject). The evidence keeps
            every claim's queries and results and the verdict per claim.

Both run in construction.pipeline's chunks, on a worker; results are written in
the gateway's transaction, unique per candidate × stage × prompt version, so a
second run with the same version asks nothing.
"""

from __future__ import annotations

from functools import partial

from django.db import transaction

from construction.calls import count_calls, pending_reason, record_decisions
from construction.models import (
    AnswerVersion,
    Candidate,
    SearchCall,
    Stage,
    StageDecision,
    StageRun,
)
from construction.search.adapters import QUERIES, merge_results
from construction.search.client import SearchStream
from judging.llm.gateway import LLMRequest, run_requests
from judging.llm.models import LLMCall
from judging.llm.outputs import (
    claim_queries_validator,
    corroboration_validator,
    deep_verdict_validator,
    search_queries_validator,
)
from judging.llm.thinking import thinking_request
from judging.runs import lifecycle

Outcome = StageDecision.Outcome
NO_EVIDENCE = "(no search evidence)"


def format_results(results: list[dict]) -> str:
    """The numbered results as a prompt shows them."""
    if not results:
        return NO_EVIDENCE
    return "\n\n".join(
        f"[{number}] {result['title']}\nURL: {result['url']}\n{result['snippet']}"
        for number, result in enumerate(results, start=1)
    )


def _base_variables(candidate: Candidate) -> dict:
    return {
        "question": candidate.question,
        "reference_answer": candidate.reference_answer,
        "knowledge_text": candidate.knowledge_text,
        "source_reference": candidate.source.reference,
    }


def _still_running(run: StageRun):
    return lambda: not lifecycle.keep_alive(StageRun, run.pk)


# -- search verification ---------------------------------------------------------

QUERIES_STEP, VERDICT_STEP = "queries", "verdict"  # the two calls per candidate


def verify_by_search(run: StageRun, candidate_ids: list[int]) -> None:
    """The chunk's candidates as a stream: a candidate's searches start as soon
    as its queries are in, and its verifier call as soon as its results are, so
    the model is not idle while a candidate searches."""
    candidates = {
        candidate.pk: candidate
        for candidate in Candidate.objects.filter(pk__in=candidate_ids)
        .select_related("source")
        .order_by("id")
    }
    should_stop = _still_running(run)
    with SearchStream(run.search_service) as searches:
        flow = _SearchFlow(run, candidates, searches)
        run_requests(
            [
                LLMRequest(
                    key=(QUERIES_STEP, candidate.pk),
                    endpoint=run.endpoint,
                    template=run.template,
                    variables=_base_variables(candidate),
                    validate=search_queries_validator(QUERIES),
                )
                for candidate in candidates.values()
            ],
            on_results=flow.save,
            feed=flow.searched,
            should_stop=should_stop,
        )


class _StreamedVerification:
    """What search and deep verification share: the gateway hands a flow the
    calls that ask for searches and the verdict calls (`save`), and asks it for the
    verifier requests whose searches are done (`searched`)."""

    stage: str

    def __init__(self, run: StageRun, candidates: dict, searches: SearchStream):
        self.run = run
        self.candidates = candidates
        self.searches = searches
        self.decision = partial(
            StageDecision,
            stage=self.stage,
            prompt_version=run.prompt_version,
            run=run,
        )
        self.asked: set[int] = set()  # candidates whose searching call is in
        self.waiting: dict[int, LLMCall] = {}  # candidate id → that call
        self.records: dict[str, SearchCall] = {}
        self.evidence_of: dict[int, dict] = {}

    def searched(self) -> list[LLMRequest] | None:
        """The verifier requests whose searches are done; None once no candidate
        waits for its queries or its searches."""
        self.records.update(self.searches.collect())
        ready = self._ready()
        if (
            not ready
            and len(self.asked) == len(self.candidates)
            and (not self.waiting or not self.searches.sending)
        ):
            return None
        return ready

    def _ready(self) -> list[LLMRequest]:
        raise NotImplementedError


class _SearchFlow(_StreamedVerification):
    """One chunk's search verification: a query call per candidate, then a
    verdict call over the results."""

    stage = Stage.SEARCH

    def save(self, outcomes) -> list[LLMRequest]:
        decisions, queries = [], []
        for outcome in outcomes:
            step, candidate_id = outcome.key
            if step == VERDICT_STEP:
                decisions.append(self._verdict(candidate_id, outcome))
                continue
            self.asked.add(candidate_id)
            call = outcome.call
            if outcome.ok:
                self.waiting[candidate_id] = call
                queries.extend(call.parsed_output["queries"])
            else:
                decisions.append(
                    self.decision(
                        candidate_id=candidate_id,
                        outcome=Outcome.PENDING,
                        reason="Search queries: " + pending_reason(call),
                        model=call.model,
                        evidence={"query_call": call.pk},
                        call=call,
                    )
                )
        # The batch's queries in one look-up of their records, not one per
        # candidate.
        self.records.update(self.searches.add(queries))
        record_decisions(decisions)
        count_calls(self.run.pk, outcomes)
        return self._ready()  # those whose queries were all recorded ok

    def _ready(self) -> list[LLMRequest]:
        """Decide or ask about each waiting candidate whose searches are all in."""
        decided, requests = [], []
        for candidate_id, call in list(self.waiting.items()):
            queries = call.parsed_output["queries"]
            if any(query not in self.records for query in queries):
                continue
            del self.waiting[candidate_id]
            outcome, reason, evidence = self._searched(call, queries)
            if outcome is None:
                self.evidence_of[candidate_id] = evidence
                requests.append(self._verdict_request(candidate_id, evidence))
            else:
                decided.append(
                    self.decision(
                        candidate_id=candidate_id,
                        outcome=outcome,
                        reason=reason,
                        evidence=evidence,
                    )
                )
        if decided:
            with transaction.atomic():
                record_decisions(decided)
        return requests

    def _searched(self, call: LLMCall, queries: list[str]):
        """(outcome, reason, evidence) without a verifier; outcome None when the
        verifier must judge the results."""
        evidence = {
            "service": self.run.search_service.name,
            "queries": queries,
            "query_call": call.pk,
        }
        failed = [
            self.records[q]
            for q in queries
            if self.records[q].status != SearchCall.Status.OK
        ]
        if failed:
            reasons = "; ".join(f"“{c.query}”: {c.error}" for c in failed)
            return Outcome.PENDING, f"Search failed for {reasons}", evidence
        results = merge_results([self.records[q].results for q in queries])
        evidence["results"] = results
        if not results:
            return (
                Outcome.REJECT,
                "No search result for any of its queries: no external source "
                "corroborates it.",
                evidence,
            )
        return None, "", evidence

    def _verdict_request(self, candidate_id: int, evidence: dict) -> LLMRequest:
        results = evidence["results"]
        return LLMRequest(
            key=(VERDICT_STEP, candidate_id),
            endpoint=self.run.endpoint,
            template=self.run.verifier_template,
            variables={
                **_base_variables(self.candidates[candidate_id]),
                "search_results": format_results(results),
            },
            validate=corroboration_validator(len(results)),
        )

    def _verdict(self, candidate_id: int, outcome) -> StageDecision:
        call, evidence = outcome.call, self.evidence_of[candidate_id]
        if outcome.ok:
            parsed = call.parsed_output
            verdict, reason = parsed["verdict"], parsed["reason"]
            evidence = {**evidence, "supporting": parsed["supporting"]}
        else:
            verdict, reason = Outcome.PENDING, pending_reason(call)
        return self.decision(
            candidate_id=candidate_id,
            outcome=verdict,
            reason=reason,
            model=call.model,
            evidence=evidence,
            call=call,
        )


# -- deep verification ------------------------------------------------------------

DEEP_OUTCOME = {
    "keep": Outcome.PASS,
    "refine": Outcome.REFINE,
    "remove": Outcome.REJECT,
}


def search_evidence(candidate_ids) -> dict[int, list[dict]]:
    """Each candidate's results from its newest passing search decision."""
    evidence = {}
    for candidate_id, found in (
        StageDecision.objects.filter(
            candidate_id__in=candidate_ids, stage=Stage.SEARCH, outcome=Outcome.PASS
        )
        .order_by("id")
        .values_list("candidate_id", "evidence")
    ):
        evidence[candidate_id] = found.get("results", [])
    return evidence


def thinking_params(run: StageRun) -> tuple[str, dict]:
    """(model id, request params) of the run's mode, as its endpoint declares
    its thinking switch (checked when the run started)."""
    if not run.thinking:
        return "", {}
    model, fields = thinking_request(run.endpoint, True)
    if not fields:
        return model, {}
    return model, {"extra_body": {**(run.endpoint.extra_body or {}), **fields}}


def format_claim_evidence(claims: list[dict], stage4: list[dict]) -> str:
    """Each claim with its own numbered results, then Stage 4's results, the
    numbers running on so a verdict names any of them."""
    parts, number = [], 0
    for position, claim in enumerate(claims, start=1):
        lines = [f"Claim {position}: {claim['claim']}"]
        for result in claim["results"]:
            number += 1
            lines.append(
                f"[{number}] {result['title']}\nURL: {result['url']}\n"
                f"{result['snippet']}"
            )
        if not claim["results"]:
            lines.append(NO_EVIDENCE)
        parts.append("\n".join(lines))
    if stage4:
        lines = ["Search verification's results:"]
        for result in stage4:
            number += 1
            lines.append(
                f"[{number}] {result['title']}\nURL: {result['url']}\n"
                f"{result['snippet']}"
            )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


CLAIMS_STEP, DEEP_STEP = "claims", "deep"  # the two calls per candidate


def verify_deeply(run: StageRun, candidate_ids: list[int]) -> None:
    """Per candidate: a call lists its claims with a query or two each, the
    run's search service answers every query (recorded per service × query,
    never sent twice), and a verdict call — both in thinking mode unless the
    run says otherwise — keeps, refines or removes it with evidence per claim.
    A run without a verifier prompt (before Stage 5 searched) makes the one
    verdict call over Stage 4's evidence."""
    candidates = {
        candidate.pk: candidate
        for candidate in Candidate.objects.filter(pk__in=candidate_ids)
        .select_related("source")
        .order_by("id")
    }
    stage4 = search_evidence(candidate_ids)
    if not run.verifier_template_id:
        _verify_over_stage4(run, list(candidates.values()), stage4)
        return
    model, params = thinking_params(run)
    with SearchStream(run.search_service) as searches:
        flow = _DeepFlow(run, candidates, searches, stage4, model, params)
        run_requests(
            [
                LLMRequest(
                    key=(CLAIMS_STEP, candidate.pk),
                    endpoint=run.endpoint,
                    template=run.template,
                    variables=_base_variables(candidate),
                    validate=claim_queries_validator(),
                    model=model,
                    params=params,
                )
                for candidate in candidates.values()
            ],
            on_results=flow.save,
            feed=flow.searched,
            should_stop=_still_running(run),
        )


class _DeepFlow(_StreamedVerification):
    """One chunk's deep verification, streamed like search verification's: a
    candidate's searches go out when its claims are in, its verdict call when
    their results are."""

    stage = Stage.DEEP

    def __init__(self, run, candidates, searches: SearchStream, stage4, model, params):
        super().__init__(run, candidates, searches)
        self.stage4 = stage4
        self.model, self.params = model, params

    def save(self, outcomes) -> list[LLMRequest]:
        decisions, corrections, queries = [], {}, []
        for outcome in outcomes:
            step, candidate_id = outcome.key
            call = outcome.call
            if step == DEEP_STEP:
                decision, corrected = self._verdict(candidate_id, outcome)
                decisions.append(decision)
                if corrected:
                    corrections[candidate_id] = corrected
                continue
            self.asked.add(candidate_id)
            if outcome.ok:
                self.waiting[candidate_id] = call
                queries.extend(
                    q
                    for claim in call.parsed_output["claims"]
                    for q in claim["queries"]
                )
            else:
                decisions.append(
                    self.decision(
                        candidate_id=candidate_id,
                        outcome=Outcome.PENDING,
                        reason="Claims: " + pending_reason(call),
                        model=call.model,
                        evidence={"claims_call": call.pk},
                        call=call,
                    )
                )
        self.records.update(self.searches.add(queries))  # one look-up a batch
        record_decisions(decisions)
        _refine(self.run, corrections)
        count_calls(self.run.pk, outcomes)
        return self._ready()

    def _ready(self) -> list[LLMRequest]:
        pending, requests = [], []
        for candidate_id, call in list(self.waiting.items()):
            claims = call.parsed_output["claims"]
            queries = [q for claim in claims for q in claim["queries"]]
            if any(query not in self.records for query in queries):
                continue
            del self.waiting[candidate_id]
            failed = [
                self.records[q]
                for q in dict.fromkeys(queries)
                if self.records[q].status != SearchCall.Status.OK
            ]
            searched = [
                {
                    "claim": claim["claim"],
                    "queries": claim["queries"],
                    "results": merge_results(
                        [self.records[q].results for q in claim["queries"]]
                    ),
                }
                for claim in claims
            ]
            evidence = {
                "service": self.run.search_service.name,
                "claims_call": call.pk,
                "searched": searched,
                "thinking": self.run.thinking,
            }
            if failed:
                reasons = "; ".join(f"“{c.query}”: {c.error}" for c in failed)
                pending.append(
                    self.decision(
                        candidate_id=candidate_id,
                        outcome=Outcome.PENDING,
                        reason=f"Search failed for {reasons}",
                        evidence=evidence,
                    )
                )
                continue
            self.evidence_of[candidate_id] = evidence
            candidate = self.candidates[candidate_id]
            stage4 = self.stage4.get(candidate_id, [])
            evidence["search_results"] = sum(len(c["results"]) for c in searched) + len(
                stage4
            )
            requests.append(
                LLMRequest(
                    key=(DEEP_STEP, candidate_id),
                    endpoint=self.run.endpoint,
                    template=self.run.verifier_template,
                    variables={
                        **_base_variables(candidate),
                        "search_results": format_claim_evidence(searched, stage4),
                    },
                    validate=deep_verdict_validator(candidate.reference_answer),
                    model=self.model,
                    params=self.params,
                )
            )
        if pending:
            with transaction.atomic():
                record_decisions(pending)
        return requests

    def _verdict(self, candidate_id: int, outcome):
        call, evidence = outcome.call, dict(self.evidence_of[candidate_id])
        corrected = ""
        if outcome.ok:
            parsed = call.parsed_output
            verdict, reason = DEEP_OUTCOME[parsed["verdict"]], parsed["reason"]
            evidence["claims"] = parsed["claims"]
            if verdict == Outcome.REFINE:
                corrected = parsed["corrected_answer"]
        else:
            verdict, reason = Outcome.PENDING, pending_reason(call)
        decision = self.decision(
            candidate_id=candidate_id,
            outcome=verdict,
            reason=reason,
            model=call.model,
            evidence=evidence,
            call=call,
        )
        return decision, corrected


def _verify_over_stage4(run: StageRun, candidates, evidence) -> None:
    requests = [
        LLMRequest(
            key=candidate.pk,
            endpoint=run.endpoint,
            template=run.template,
            variables={
                **_base_variables(candidate),
                "search_results": format_results(evidence.get(candidate.pk, [])),
            },
            validate=deep_verdict_validator(candidate.reference_answer),
        )
        for candidate in candidates
    ]
    run_requests(
        requests,
        on_results=partial(_save_deep_verdicts, run, evidence),
        should_stop=_still_running(run),
    )


def _save_deep_verdicts(run: StageRun, evidence, outcomes) -> None:
    decisions, corrections = [], {}
    for outcome in outcomes:
        call = outcome.call
        found = {"search_results": len(evidence.get(outcome.key, []))}
        if outcome.ok:
            parsed = call.parsed_output
            verdict, reason = DEEP_OUTCOME[parsed["verdict"]], parsed["reason"]
            found["claims"] = parsed["claims"]
            if verdict == Outcome.REFINE:
                corrections[outcome.key] = parsed["corrected_answer"]
        else:
            verdict, reason = Outcome.PENDING, pending_reason(call)
        decisions.append(
            StageDecision(
                candidate_id=outcome.key,
                stage=Stage.DEEP,
                outcome=verdict,
                reason=reason,
                model=call.model,
                prompt_version=run.prompt_version,
                evidence=found,
                run=run,
                call=call,
            )
        )
    record_decisions(decisions)
    _refine(run, corrections)
    count_calls(run.pk, outcomes)


def _refine(run: StageRun, corrections: dict[int, str]) -> None:
    if not corrections:
        return
    refined = StageDecision.objects.filter(
        stage=Stage.DEEP,
        prompt_version=run.prompt_version,
        candidate_id__in=corrections,
        outcome=Outcome.REFINE,
    )
    for refine in refined:
        apply_refinement(refine, corrections[refine.candidate_id])


def apply_refinement(decision: StageDecision, corrected: str) -> AnswerVersion:
    """Make `corrected` the candidate's newest reference answer, keeping the
    generated one as version 1; the refine decision records the version."""
    candidate = Candidate.objects.select_for_update().get(pk=decision.candidate_id)
    existing = AnswerVersion.objects.filter(decision=decision).first()
    if existing is not None:
        return existing
    if candidate.version == 1:
        AnswerVersion.objects.get_or_create(
            candidate=candidate,
            version=1,
            defaults={"reference_answer": candidate.reference_answer},
        )
    version = AnswerVersion.objects.create(
        candidate=candidate,
        version=candidate.version + 1,
        reference_answer=corrected,
        decision=decision,
    )
    candidate.reference_answer = corrected
    candidate.version = version.version
    candidate.save(update_fields=["reference_answer", "version"])
    decision.evidence = {**decision.evidence, "answer_version": version.version}
    decision.save(update_fields=["evidence"])
    return version
