"""The simulated web the construction demo's search-verification stage reads
(no network): for each candidate, the three queries a model would write and
the top results a SearxNG instance would give them — standards portals, shops,
encyclopedias, forums — recorded as the real stage records them (one SearchCall
per service × query, results merged by URL into the decision's evidence).

Everything is derived from the candidate's question, answer and source, so it is
the same on every load. A corroborated candidate's first result quotes its
source; an uncorroborated one's results name the subject but not the claim.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from construction.models import Candidate, SearchCall, SearchService, Source
from construction.search.adapters import Hit, merge_results, top_hits
from construction.search.client import query_hash

SERVICE = "searxng-demo"
SERVICE_URL = "https://search.example.org"
# Status lines of the national standards portal; a standard not listed is in force.
STANDARD_STATUS = {"GB/T 31485": "废止 · 被 GB 38031-2020 代替"}
NONE = "none"  # the plan's search verdict for a candidate whose queries find nothing


def demo_service() -> SearchService:
    """The demo's search service: inactive, so no run sends it a query."""
    service, _ = SearchService.objects.get_or_create(
        name=SERVICE,
        defaults={"adapter": "searxng", "base_url": SERVICE_URL, "is_active": False},
    )
    return service


def _digits(text: str, length: int = 9) -> str:
    return str(int(hashlib.sha256(text.encode()).hexdigest(), 16))[:length]


def _hex(text: str, length: int = 32) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length].upper()


def _subject(question: str) -> str:
    return re.sub(r"^按 [^，,]+[，,] ?", "", question).rstrip("？?")


def _core(answer: str) -> str:
    return re.split(r"[（。]", answer, maxsplit=1)[0].strip()


@dataclass(frozen=True)
class _Topic:
    """What the queries are about: a standard or a product."""

    name: str  # "GB/T 2099.1-2021" or the product's name
    standard: str  # "GB/T 2099.1" (empty for a product)
    text: str  # the source excerpt

    @classmethod
    def of(cls, source: Source) -> _Topic:
        if source.kind == Source.Kind.GBT_STANDARD:
            standard = source.fields["standard_id"]
            name = f"{standard}-{source.fields['edition']}"
            return cls(name, standard, source.text)
        return cls(source.text.split("｜", 1)[0].strip(), "", source.text)


def claim_query(candidate: Candidate) -> str:
    """Deep verification's query for the candidate's claim: the answer's core,
    then its subject (not one of search verification's three)."""
    return f"{_core(candidate.reference_answer)} {_subject(candidate.question)}"


def queries_for(candidate: Candidate) -> list[str]:
    """A query on the standard or product, the question, and the question with
    the answer's claim."""
    topic = _Topic.of(candidate.source)
    subject = _subject(candidate.question)
    # Each candidate's queries are its own (a snippet depends on the query).
    if not topic.standard:
        first = f"{subject} 产品参数"
    elif topic.standard in subject:
        first = f"{subject} 标准原文"
    else:
        first = f"{topic.name} {subject}"
    return [first, subject, f"{subject} {_core(candidate.reference_answer)}"]


def _standard_hits(topic: _Topic, subject: str, corroborated: bool) -> list[list]:
    portal = Hit(
        url="https://openstd.samr.gov.cn/bzgk/gb/newGbInfo?hcno=" + _hex(topic.name),
        title=f"{topic.name} 国家标准全文公开系统",
        snippet=topic.text[:110] if corroborated else f"{topic.name} 的全文在线预览。",
    )
    status = STANDARD_STATUS.get(topic.standard, "现行")
    record = Hit(
        url="https://std.samr.gov.cn/gb/search/gbDetailed?id=" + _hex(topic.standard),
        title=f"{topic.name} - 全国标准信息公共服务平台",
        snippet=f"标准号：{topic.name} · 状态：{status} · 中国标准分类号、"
        "国际标准分类号、发布日期与实施日期。",
    )
    library = Hit(
        url=f"https://www.doc88.com/p-{_digits(topic.name, 13)}.html",
        title=f"{topic.name} 标准文本 PDF - 道客巴巴",
        snippet=f"{topic.name} 全文，共若干页；范围、规范性引用文件、术语和定义……",
    )
    column = Hit(
        url=f"https://zhuanlan.zhihu.com/p/{_digits(subject)}",
        title=f"{subject}？一文读懂 {topic.standard}",
        snippet=f"很多工程师问：{subject}？本文结合 {topic.name} 逐条解读……"
        if corroborated
        else f"关于{subject}，各厂家说法不一，以下是论坛里的几种观点……",
    )
    forum = Hit(
        url=f"https://bbs.gongkong.com/d/{_digits(subject + 'bbs', 6)}_1.shtml",
        title=f"请教：{subject} - 中国工控网论坛",
        snippet=f"楼主：{subject}？手头没有 {topic.standard} 原文，请各位指点。",
    )
    return [[portal, record, library], [column, forum, portal], [library, forum]]


def _product_hits(topic: _Topic, subject: str, corroborated: bool) -> list[list]:
    offer = Hit(
        url=f"https://detail.1688.com/offer/{_digits(topic.name, 12)}.html",
        title=f"{topic.name} 厂家直销 现货 - 阿里巴巴",
        snippet=topic.text[:110]
        if corroborated
        else f"{topic.name} 批发价格、图片与厂家信息，支持定制。",
    )
    shop = Hit(
        url=f"https://item.jd.com/{_digits(topic.name + 'jd', 11)}.html",
        title=f"{topic.name}【价格 参数 评价】- 京东",
        snippet=f"{topic.name} 规格参数、包装清单与售后保障。",
    )
    wiki = Hit(
        url=f"https://baike.baidu.com/item/{_digits(subject, 8)}",
        title=f"{subject.split(' ', 1)[0]} - 百度百科",
        snippet=f"{subject.split(' ', 1)[0]}的定义、分类、主要参数与应用领域。",
    )
    forum = Hit(
        url=f"https://bbs.gongkong.com/d/{_digits(subject + 'bbs', 6)}_1.shtml",
        title=f"请教：{subject} - 中国工控网论坛",
        snippet=f"楼主：{subject}？不同厂家的说明书写法不一样，求解答。",
    )
    datasheet = Hit(
        url=f"https://www.doc88.com/p-{_digits(topic.name, 13)}.html",
        title=f"{topic.name} 产品说明书 - 道客巴巴",
        snippet=f"{topic.name} 产品说明书：概述、型号含义、技术参数、外形尺寸……",
    )
    return [[offer, shop, datasheet], [wiki, forum], [offer, datasheet, forum]]


def search_results(candidate: Candidate, verdict: str) -> list[list[dict]]:
    """Each query's stored results (top 5, ranked from 1) for a candidate the
    plan passes ("pass"), rejects (a reason) or finds nothing for (NONE)."""
    if verdict == NONE:
        return [[], [], []]
    topic = _Topic.of(candidate.source)
    subject = _subject(candidate.question)
    corroborated = verdict == "pass"
    hits = (
        _standard_hits(topic, subject, corroborated)
        if topic.standard
        else _product_hits(topic, subject, corroborated)
    )
    return [top_hits(per_query) for per_query in hits]


def record_searches(
    service: SearchService, candidates_queries: list[tuple], retrieved_at
) -> dict[str, list[dict]]:
    """Record every query once (as the search client does) and return each
    query's results stamped with the retrieval time."""
    stamp = retrieved_at.isoformat(timespec="seconds")
    answered: dict[str, list[dict]] = {}
    for queries, per_query in candidates_queries:
        for query, results in zip(queries, per_query, strict=True):
            answered.setdefault(
                query, [{**result, "retrieved_at": stamp} for result in results]
            )
    SearchCall.objects.bulk_create(
        (
            SearchCall(
                service=service,
                query=query,
                query_hash=query_hash(query),
                status=SearchCall.Status.OK,
                results=results,
                attempts=1,
                latency_ms=380 + int(_digits(query, 3)) % 900,
                retrieved_at=retrieved_at,
            )
            for query, results in answered.items()
        ),
        ignore_conflicts=True,
    )
    return answered


def evidence_for(queries: list[str], answered: dict[str, list[dict]]) -> dict:
    """The decision's evidence as verify_by_search writes it: service, queries
    and the results merged by URL."""
    return {
        "service": SERVICE,
        "queries": queries,
        "results": merge_results([answered[query] for query in queries]),
        "simulated": True,
    }
