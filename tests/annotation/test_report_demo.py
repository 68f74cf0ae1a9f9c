"""The demo seeders give every report content: simulated runs
(judging.demo.runs) plus simulated expert calibration
(annotation.demo_calibration)."""

from annotation import demo_calibration
from annotation.agreement.loading import build_report
from annotation.agreement.tables import Settings, records
from annotation.models import Campaign, GradingLabel
from judging.demo import runs as demo_runs
from tests.annotation.factories import make_items


def test_demo_calibration_gives_calibration_and_sv_reports_content(benchmark):
    make_items(benchmark, 30)
    demo_runs.seed(benchmark)
    demo_calibration.seed(benchmark)
    demo_calibration.seed(benchmark)  # idempotent
    campaign = Campaign.objects.get(
        benchmark=benchmark, name=demo_calibration.CAMPAIGN_NAME
    )
    labels = GradingLabel.objects.filter(task__campaign=campaign)
    assert (
        labels.filter(user__username="sim-expert-1").count()
        == demo_calibration.SAMPLE_SIZE
    )
    assert (
        labels.filter(user__username="sim-expert-2").count()
        == demo_calibration.SAMPLE_SIZE // 3
    )
    assert not labels.first().user.has_usable_password()

    fast = Settings(n_resamples=100)
    calibration = records(
        build_report(benchmark, "calibration", fast).table("agreement")
    )
    raters = {(row["rater"], row["human"]) for row in calibration}
    assert ("Median of judges", "sim-expert-1") in raters
    assert ("sim-expert-1", "sim-expert-2") in raters
    assert all(row["n"] > 0 for row in calibration)
    (sv_row, *_) = records(
        build_report(benchmark, "sv-validation", fast).table("confusion")
    )
    assert sv_row["n"] > 0
    cross = records(build_report(benchmark, "cross-judge", fast).table("models"))
    assert len(cross) > 2 and all(row["n"] > 0 for row in cross)
