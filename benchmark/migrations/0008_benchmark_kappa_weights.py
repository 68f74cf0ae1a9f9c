from django.db import migrations, models


class Migration(migrations.Migration):
    """Benchmarks that exist keep the quadratic headline their reports had; new ones
    headline the linear κw the IndustryBench paper reports."""

    dependencies = [("benchmark", "0007_paper_label_names")]

    operations = [
        migrations.AddField(
            model_name="benchmark",
            name="kappa_weights",
            field=models.CharField(
                choices=[
                    ("linear", "Linear, |i − j| (IndustryBench)"),
                    ("quadratic", "Quadratic, (i − j)²"),
                ],
                default="quadratic",
                help_text=(
                    "The weighted κ every agreement report headlines (with its CI)."
                ),
                max_length=10,
            ),
        ),
        migrations.AlterField(
            model_name="benchmark",
            name="kappa_weights",
            field=models.CharField(
                choices=[
                    ("linear", "Linear, |i − j| (IndustryBench)"),
                    ("quadratic", "Quadratic, (i − j)²"),
                ],
                default="linear",
                help_text=(
                    "The weighted κ every agreement report headlines (with its CI)."
                ),
                max_length=10,
            ),
        ),
    ]
