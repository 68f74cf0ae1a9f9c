"""The progress line built in Python (annotation_tags.progress_stats) is, to the
byte, what the template's blocktranslates and filters rendered before (#26), in
every interface language: progress_line_before.html is that template."""

from pathlib import Path

import pytest
from django.template import engines
from django.template.loader import get_template
from django.utils import translation

BEFORE = engines["django"].from_string(
    (Path(__file__).parent / "progress_line_before.html").read_text(encoding="utf-8")
)

PROGRESS = [
    # one label needed (the singular), nothing done, no pace yet
    {"needed": 1, "done": 0, "percent": 0, "mine": 0},
    # thousands (grouping) and a fractional percent (the decimal separator)
    {"needed": 200_000, "done": 12_345, "percent": 6.2, "mine": 1_234},
    {"needed": 3, "done": 3, "percent": 100.0, "mine": 2},
]
PACES = [(None, None), (12.4, 754.0), (3.5, 5_400.0), (61.0, 86_400.0)]


@pytest.mark.smoke
@pytest.mark.parametrize("language", ["en", "zh-hans", "ru", "vi"])
def test_the_progress_line_is_rendered_as_before(language):
    after = get_template("annotation/_progress.html")
    with translation.override(language):
        for progress in PROGRESS:
            for pace, eta in PACES:
                for task in (None, object()):
                    context = {
                        "progress": {
                            **progress,
                            "pace_seconds": pace,
                            "eta_seconds": eta,
                        },
                        "task": task,
                    }
                    assert after.render(context) == BEFORE.render(context), context
