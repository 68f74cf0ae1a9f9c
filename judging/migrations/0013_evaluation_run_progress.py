"""Evaluation runs count scored items, and the calls they made with their tokens and
cost, for the run page's progress. Existing runs get them from what is recorded:
until now `failed_count` held every unscored item, and a run's calls are the LLMCall
rows of its gateway scopes (evaluation-run-<id>, and -retry-<n> for its retries)."""

import re
from collections import defaultdict

from django.db import migrations, models
from django.db.models import Count, F, Sum

SCOPE = re.compile(r"evaluation-run-(\d+)(?:-retry-\d+)?")


def fill_counts(apps, schema_editor):
    EvaluationRun = apps.get_model("judging", "EvaluationRun")
    LLMCall = apps.get_model("judging", "LLMCall")
    EvaluationRun.objects.filter(total_items__gte=F("failed_count")).update(
        scored_count=F("total_items") - F("failed_count")
    )
    usage = defaultdict(lambda: [0, 0, 0, 0])
    for row in (
        LLMCall.objects.filter(scope__startswith="evaluation-run-")
        .values("scope")
        .annotate(
            calls=Count("pk"),
            input=Sum("input_tokens"),
            output=Sum("output_tokens"),
            cost=Sum("cost"),
        )
    ):
        found = SCOPE.fullmatch(row["scope"])
        if found is None:
            continue
        totals = usage[int(found.group(1))]
        totals[0] += row["calls"]
        totals[1] += row["input"] or 0
        totals[2] += row["output"] or 0
        totals[3] += row["cost"] or 0
    for run_id, (calls, input_tokens, output_tokens, cost) in usage.items():
        EvaluationRun.objects.filter(pk=run_id).update(
            made_calls=calls,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost=cost,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('judging', '0012_suggestion_application'),
    ]

    operations = [
        migrations.AddField(
            model_name='evaluationrun',
            name='cost',
            field=models.DecimalField(decimal_places=6, default=0, max_digits=14),
        ),
        migrations.AddField(
            model_name='evaluationrun',
            name='input_tokens',
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='evaluationrun',
            name='made_calls',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='evaluationrun',
            name='output_tokens',
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name='evaluationrun',
            name='scored_count',
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(fill_counts, migrations.RunPython.noop),
    ]
