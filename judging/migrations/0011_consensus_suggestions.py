from django.db import migrations


class Migration(migrations.Migration):
    """A consensus that differs from a kept final label is a suggestion (#19)."""

    dependencies = [
        ("judging", "0010_run_lifecycle"),
    ]

    operations = [
        migrations.RenameField(
            model_name="labelconsensus",
            old_name="final_label_kept_human",
            new_name="kept_final_label",
        ),
    ]
