"""A small industrial source set (industrial_sources.jsonl: seven GB/T clauses,
three product records) and what the scripted models and search service answer
for it (industrial_plan.json: each source's three questions and their plan),
giving a known funnel through every stage:

    generation 10 sources × 3 questions           → 30 candidates
    dedup      two questions of the contactor record repeat 2099.1's and 5782's
               with other punctuation                     30 → 28 (2 rejected)
    quality    three vague questions                      28 → 25 (3 rejected)
    search     three uncorroborated by the verifier, one whose queries find
               nothing at all                             25 → 21 (4 rejected)
    deep       three refined (wrong reference answer corrected), two removed
                                                          21 → 19 (2 rejected)
    (test_paper_order_worker takes it on to the release sample, its checks
    and the release, with dedup within each source family)

Each question's plan: quality pass/reject, search pass/reject/none (no result),
deep keep/remove or the corrected answer. The queries the model writes, and the
results the search service gives them, are derived from the question, so they
are stable across runs.
"""

import hashlib
import json
import re
from pathlib import Path

from tests.search_stub import SearchReply

SOURCES_FILE = Path(__file__).with_name("industrial_sources.jsonl")
PLAN_FILE = Path(__file__).with_name("industrial_plan.json")
KEEP, REMOVE = "keep", "remove"

# source reference → [(question, reference answer, quality, search, deep)]; deep
# is keep, remove, the corrected answer, or null for a question that never gets
# there.
ITEMS = {
    reference: [
        (i["question"], i["answer"], i["quality"], i["search"], i["deep"])
        for i in items
    ]
    for reference, items in json.loads(PLAN_FILE.read_text()).items()
}
PLAN = {item[0]: item for items in ITEMS.values() for item in items}
FUNNEL = {
    # stage: (in, out, rejected, pending)
    "generation": (30, 30, 0, 0),
    "dedup": (30, 28, 2, 0),
    "quality": (28, 25, 3, 0),
    "search": (25, 21, 4, 0),
    "deep": (21, 19, 2, 0),
}
REFINED = {
    q: item[4] for q, item in PLAN.items() if item[4] not in (KEEP, REMOVE, None)
}


# The labels the three scripted annotators agree on: industry by source, the
# capability by what the question asks (a standard's requirement or a product's
# specification).
INDUSTRY = {
    "GB/T 2099.1-2021 5.2": "electrical_power",
    "GB/T 5782-2016 表 1": "machinery_hardware",
    "GB/T 3098.6-2014 表 2": "machinery_hardware",
    "GB/T 1591-2018 表 7": "metallurgy_mining",
    "GB/T 699-2015 表 2": "metallurgy_mining",
    "GB 4706.1-2005 16.2": "electrical_power",
    "GB/T 12706.1-2020 4.2": "electrical_power",
    "bearings 6205-2RS": "machinery_hardware",
    "lubricants L-HM-46": "chemical_coatings",
    "contactors CJX2-1810": "electrical_power",
}


def labels_for(question: str) -> tuple[str, str]:
    reference = next(ref for ref, items in ITEMS.items() if PLAN[question] in items)
    capability = (
        "standards_terminology"
        if question.startswith("按")
        else "selection_substitution"
    )
    return capability, INDUSTRY[reference]


def source_records() -> bytes:
    return SOURCES_FILE.read_bytes()


def queries_for(question: str) -> list[str]:
    subject = re.sub(r"^按 [^，,]+[，,] ?", "", question).rstrip("？?")
    reference = next(ref for ref, items in ITEMS.items() if PLAN[question] in items)
    return [f"{reference} {subject}", subject, f"{subject} {PLAN[question][1]}"]


def claim_query(question: str) -> str:
    """Deep verification's query for the question's one claim."""
    subject = re.sub(r"^按 [^，,]+[，,] ?", "", question).rstrip("？?")
    return f"{subject} 核实"


# What a claim's results state: the reference answer (keep), the corrected
# answer (refine) or that no such requirement exists (remove).
NO_SUCH = "无此规定"


def _fact(question: str) -> str:
    _, answer, _, _, deep = PLAN[question]
    if deep == KEEP:
        return answer
    return NO_SUCH if deep == REMOVE else deep


def _question(prompt: str) -> str:
    return re.search(r"^Question: (.*)$", prompt, re.MULTILINE).group(1)


def respond(body) -> str:
    """The scripted writer, quality checker, query writer, verifier, deep
    checker and annotators, by the shipped prompts' first words."""
    prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if prompt.startswith("Classify"):
        capability, industry = labels_for(_question(prompt))
        return json.dumps(
            {"capability": capability, "industry": industry, "rationale": "plan"}
        )
    if prompt.startswith("Write"):
        reference = re.search(r"^Source \([^,]+, (.*)\):$", prompt, re.MULTILINE)
        items = [{"question": q, "answer": a} for q, a, *_ in ITEMS[reference.group(1)]]
        return json.dumps({"items": items}, ensure_ascii=False)
    question = _question(prompt)
    _, answer, quality, search, deep = PLAN[question]
    if prompt.startswith("Check the candidate question"):
        reason = "All four hold." if quality == "pass" else "Not enough constraints."
        return json.dumps({"verdict": quality, "reason": reason})
    if prompt.startswith("Propose exactly three"):
        return json.dumps({"queries": queries_for(question)}, ensure_ascii=False)
    if prompt.startswith("Decide whether"):
        if search == "pass":
            reply = {
                "verdict": "pass",
                "supporting": [1],
                "reason": f"[1] states {answer}.",
            }
        else:
            reply = {
                "verdict": "reject",
                "supporting": [],
                "reason": "No result states it.",
            }
        return json.dumps(reply, ensure_ascii=False)
    if prompt.startswith("List the checkable claims"):
        claims = [{"claim": f"{question} {answer}", "queries": [claim_query(question)]}]
        return json.dumps({"claims": claims}, ensure_ascii=False)
    if prompt.startswith("Check the candidate claim by claim"):
        return json.dumps(deep_verdict(prompt, question, answer), ensure_ascii=False)
    return "OK"


def deep_verdict(prompt: str, question: str, answer: str) -> dict:
    """The verdict the claim's own results support, read from the prompt: what
    they state is the answer (keep), another value (refine to it) or that no
    such requirement exists (remove). Without per-claim results (a run that did
    not search per claim), the plan's verdict."""
    stated = re.findall(r"事实：(.*)", prompt)
    deep = PLAN[question][4]
    if stated:
        deep = REMOVE if NO_SUCH in stated else KEEP if answer in stated else stated[0]
    status = {KEEP: "supported", REMOVE: "contradicted"}.get(deep, "contradicted")
    reply = {
        "claims": [{"claim": f"{question} {answer}", "status": status, "basis": "[1]"}],
        "verdict": deep if deep in (KEEP, REMOVE) else "refine",
        "reason": "Checked against the source and [1].",
    }
    if deep not in (KEEP, REMOVE):
        reply["corrected_answer"] = deep
    return reply


def _slug(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def search_results(query: str) -> SearchReply:
    """Seven results a query: the standard's (or record's) own page first —
    the same URL for each of a question's queries, so the merged evidence has it
    once — then pages of the query's own. A question planned to find nothing
    gets nothing."""
    claimed = next((q for q in PLAN if query == claim_query(q)), None)
    if claimed is not None:
        rows = [
            (
                f"https://spec.example.cn/{_slug(query)}/{n}",
                f"{query} 第 {n} 条",
                f"事实：{_fact(claimed)}",
            )
            for n in range(1, 3)
        ]
        return SearchReply(results=rows)
    question = next((q for q in PLAN if query in queries_for(q)), None)
    if question is None or PLAN[question][3] == "none":
        return SearchReply()
    _, answer, *_ = PLAN[question]
    reference = next(ref for ref, items in ITEMS.items() if PLAN[question] in items)
    own = f"https://std.example.cn/{_slug(reference)}"
    rows = [(own, f"{reference} 全文", f"{reference}：{answer}")]
    rows += [
        (f"https://www.example.com/{_slug(query)}/{n}", f"{query} 第 {n} 条", answer)
        for n in range(1, 7)
    ]
    return SearchReply(results=rows)
