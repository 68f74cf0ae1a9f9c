"""A multiple-choice item whose Russian machine translation turned option C's
10.9 into 109, flagged and put in a translation-review campaign."""

from annotation.actions import do_create_review_campaign
from benchmark.actions import do_add_rendering_version
from benchmark.models import Item, Rendering

SOURCE_OPTIONS = ["6千伏", "10千伏", "10.9千伏", "35千伏"]
RUSSIAN_OPTIONS = ["6 кВ", "10 кВт", "109 кВ", "35 кВ"]


def flagged_russian_mc(benchmark, reviewer):
    benchmark.target_languages = ["en", "ru", "vi"]
    benchmark.save(update_fields=["target_languages"])
    item = Item.objects.create(
        benchmark=benchmark,
        external_id="MC-7",
        format=Item.Format.MULTIPLE_CHOICE,
        correct_options=["B"],
    )
    do_add_rendering_version(
        item,
        "zh",
        question="10千伏电缆的额定电压选哪个？",
        answer="",
        options=SOURCE_OPTIONS,
        origin=Rendering.Origin.SOURCE,
        review_status=Rendering.ReviewStatus.APPROVED,
    )
    do_add_rendering_version(
        item,
        "ru",
        question="Какое номинальное напряжение кабеля 10 кВ?",
        answer="",
        options=RUSSIAN_OPTIONS,
        origin=Rendering.Origin.MACHINE,
        review_status=Rendering.ReviewStatus.FLAGGED,
    )
    campaign = do_create_review_campaign(
        benchmark, name="Russian review", assignees=[reviewer]
    )
    return item, campaign
