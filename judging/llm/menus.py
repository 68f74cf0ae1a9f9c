"""The judge-set menu of the evaluation run form, in the reader's language."""

from django.utils.translation import gettext

from judging.llm.prompts import JUDGE_SETS, OTHER_LANGUAGES


def judge_set_choices() -> list[tuple[str, str]]:
    """Called for each form (a callable's choices are), in the reader's language."""
    return [("", gettext("None: the one rubric template above"))] + [
        (name, _judge_set_label(judge_set)) for name, judge_set in JUDGE_SETS.items()
    ]


def _judge_set_label(judge_set) -> str:
    others = gettext("others")
    templates = "; ".join(
        f"{others if code == OTHER_LANGUAGES else code} → {template}"
        for code, template in judge_set.template_names().items()
    )
    return gettext("%(label)s (%(templates)s; newest versions)") % {
        "label": judge_set.label,
        "templates": templates,
    }
