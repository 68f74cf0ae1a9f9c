"""Forum posts for LPFQA's construction, with the funnel they give against
tests.openai_stub.ForumModel (which answers from the post it is sent):

- POST-01, 02, 10: a question and replies → kept to the end;
- POST-03, 04: the question (and for 03 the reply) only in the screenshot →
  read off the image part, kept;
- POST-05: an announcement, no question → no candidate;
- POST-06: a question nobody answered → rejected at extraction;
- POST-07: too short, POST-08: asks about "this year" → rejected by the filter;
- POST-09: a torque question whose first conversion repeats an option → the
  stage refuses it and asks again → kept;
- POST-11: 3 views, below the import's 50-view threshold → never imported.

MC: 01, 03, 09; short answer: 02, 04, 10.
"""

import json

from construction.actions import do_import_sources
from construction.forum.posts import PostFilter
from tests.openai_stub import screenshot_png

IMPORT_FILTER = PostFilter(min_views=50)


def post(number, body, *, fmt="multiple_choice", views=400, images=(), **fields):
    return {
        "kind": "forum_post",
        "text": body,
        "fields": {
            "forum": "eng-tips",
            "post_id": f"POST-{number:02d}",
            "title": f"Thread {number}",
            "posted_at": f"2024-0{1 + number % 9}-1{number % 10}",
            "views": views,
            "replies": body.count("R:"),
            "votes": number,
            "format": fmt,
            "field": "mechanical" if number % 2 else "electrical",
            "images": list(images),
            **fields,
        },
    }


POSTS = [
    post(
        1,
        "Q: Why does a 220 V single-phase mill motor need a VFD with single-phase "
        "input when only 110 V service is available?\n"
        "R: Use a VFD rated for the motor's horsepower and current.\n"
        "R: A step-up transformer alone will not give three-phase.",
    ),
    post(
        2,
        "Q: Which grounding scheme keeps a shielded sensor cable from forming a "
        "ground loop in a long industrial run?\n"
        "R: Ground the shield at one end only; bond the drain at the controller",
        fmt="short_answer",
    ),
    post(
        3,
        "See the screenshot of the original thread.",
        images=[
            screenshot_png(
                "Q: How do you notate a tremolo between two whole notes more than "
                "an octave apart played as sixteenths?\n"
                "R: Two parallel thick slashes between the note heads."
            )
        ],
    ),
    post(
        4,
        "The question is in the screenshot.\n"
        "R: Carbonation front depth grows with the square root of time; cover "
        "depth sets the initiation time",
        fmt="short_answer",
        images=[
            screenshot_png(
                "Q: How does concrete cover depth change the time until "
                "carbonation starts corroding the reinforcement in a humid climate?"
            )
        ],
    ),
    post(5, "Forum maintenance is scheduled for Sunday night. Thanks, admins."),
    post(
        6,
        "Q: What limits the fatigue life of a welded aluminium bicycle frame at "
        "the head tube junction under cyclic loads?",
    ),
    post(7, "Q: Best solder?\nR: Lead-free SAC305 for most work."),
    post(
        8,
        "Q: Which electricity tariff is cheapest for a small machine shop this "
        "year in our region?\nR: The night tariff, for now.",
    ),
    post(
        9,
        "Q: What torque should a preloaded M8 A2-70 bolt get in an aluminium "
        "housing with a helical insert?\n"
        "R: About 18 Nm, below the insert's pull-out limit.",
    ),
    post(
        10,
        "Q: Why does a long-tail pipe rack need expansion loops rather than "
        "fixed anchors every few metres on hot lines?\n"
        "R: Thermal growth; loops absorb expansion, anchors would overstress",
        fmt="short_answer",
    ),
    post(11, "Q: Anyone here?\nR: Yes.", views=3),
]
MULTIPLE_CHOICE = {"POST-01", "POST-03", "POST-09"}
SHORT_ANSWER = {"POST-02", "POST-04", "POST-10"}
# stage: (in, out, rejected, pending) over the ten imported posts.
FORUM_FUNNEL_BEFORE_EXPERTS = [
    ("extract_qa", (9, 8, 1, 0)),
    ("dedup", (8, 8, 0, 0)),
    ("qa_filter", (8, 6, 2, 0)),
    ("convert", (6, 6, 0, 0)),
]


def import_posts(benchmark):
    data = "\n".join(json.dumps(p, ensure_ascii=False) for p in POSTS)
    return do_import_sources(benchmark, data.encode(), "posts.jsonl", IMPORT_FILTER)
