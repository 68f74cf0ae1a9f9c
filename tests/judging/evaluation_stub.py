"""An OpenAI-protocol stub that plays tested model, rubric judge and SV judge.

Item numbers (from the rendered question "[zh] Question N?") pick the behaviour:
N ≡ 1 (mod 10) answers empty; N ≡ 2 gives an unsafe answer; N ≡ 3 makes the judge
reply prose (unparseable); N ≡ 4 makes the SV judge fail with HTTP 500; N ≡ 5 gets
a partly right answer (score 2). Everything else is a good answer (score 3).
"""

import json
import re

from judging.llm.models import Endpoint
from tests.openai_stub import OpenAIStub, Reply, first_user_text, last_user_text

QUESTION = re.compile(r"Question (\d+)\?")


def item_number(text: str) -> int:
    found = QUESTION.search(text)
    return int(found.group(1)) if found else -1


def evaluation_responder(body: dict) -> Reply:
    prompt = first_user_text(body)
    number = item_number(prompt)
    kind = number % 10
    model = body.get("model", "")
    if "Grade the candidate answer" in prompt:
        if kind == 3 and "judge-2" not in model:
            return Reply(content="I think this answer is quite good overall.")
        answer = prompt.split("Candidate answer:")[1]
        score = 2 if "partly" in answer else 3
        if "judge-2" in model:
            score -= 1
        return Reply(content=json.dumps({"score": score, "reason": f"graded {score}"}))
    if "safety violation" in prompt:
        if kind == 4:
            return Reply(status=500, error_message="SV judge overloaded")
        unsafe = "bypass the interlock" in prompt
        return Reply(
            content=json.dumps(
                {"safety_violation": unsafe, "reason": "unsafe" if unsafe else "fine"}
            )
        )
    if kind == 1:
        return Reply(content="")
    if kind == 2:
        return Reply(content=f"Answer {number}: bypass the interlock to save time.")
    if kind == 5:
        return Reply(content=f"Answer {number}: partly right.")
    reasoning = "thinking…" if "enable_thinking" in json.dumps(body) else ""
    return Reply(
        content=f"Answer {number}: exactly the reference.", reasoning=reasoning
    )


def clean_responder(body: dict) -> Reply:
    """Every answer good, every verdict parseable (throughput bench)."""
    prompt = first_user_text(body)
    if "Grade the candidate answer" in prompt:
        return Reply(content='{"score": 3, "reason": "matches"}')
    if "safety violation" in prompt:
        return Reply(content='{"safety_violation": false, "reason": "fine"}')
    return Reply(content=f"Answer {item_number(prompt)}: exactly the reference.")


def role_endpoints(stub: OpenAIStub, concurrency: int) -> dict[str, Endpoint]:
    """Endpoints "tested", "judge" and "sv" on the stub (key variable STUB_API_KEY)."""
    return {
        role: Endpoint.objects.create(
            name=role,
            base_url=stub.base_url,
            model=f"{role}-model",
            api_key_env="STUB_API_KEY",
            max_concurrency=concurrency,
        )
        for role in ("tested", "judge", "sv")
    }


__all__ = [
    "clean_responder",
    "evaluation_responder",
    "item_number",
    "last_user_text",
    "role_endpoints",
]


def preset_responder(body: dict) -> Reply:
    """Plays the IndustryBench preset: the tested model answers (item N ≡ 2 unsafely),
    the Chinese judge replies "评分：2" and JSON, the English judge "Score: 3" and
    JSON, the SV judge "Violation: yes/no" and JSON naming the source clause."""
    prompt = first_user_text(body)
    if "请对照参考答案，为候选答案评分" in prompt:
        return Reply(
            content='评分：2\n{"score": 2, "reason": "结论正确，但缺少单位。"}'
        )
    if "Safety is checked separately" in prompt:
        return Reply(content='Score: 3\n{"score": 3, "reason": "Matches."}')
    if "safety violation with respect to the source" in prompt:
        unsafe = "bypass the interlock" in prompt
        verdict = {
            "safety_violation": unsafe,
            "clause": "the safety limit" if unsafe else "",
            "reason": "The source forbids it." if unsafe else "Consistent.",
        }
        word = "yes" if unsafe else "no"
        return Reply(content=f"Violation: {word}\n{json.dumps(verdict)}")
    number = item_number(prompt)
    if number % 10 == 2:
        return Reply(content=f"Answer {number}: bypass the interlock to save time.")
    return Reply(content=f"Answer {number}: exactly the reference.")
