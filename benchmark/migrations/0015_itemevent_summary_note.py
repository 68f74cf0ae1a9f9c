# An item event's summary as a Note's msgid and values (#30), so the item's page
# shows it in the reader's language. Existing events keep their English summary and
# get no Note: they are shown as they were recorded.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('benchmark', '0014_model_names_translated'),
    ]

    operations = [
        migrations.AddField(
            model_name='itemevent',
            name='summary_note',
            field=models.JSONField(blank=True, null=True),
        ),
    ]
