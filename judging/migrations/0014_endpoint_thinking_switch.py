"""Endpoints declare how thinking is switched (`thinking_switch`). Until now a
thinking-mode run added `"enable_thinking": true` to the endpoint's extra body and a
non-thinking run sent the extra body as it is; existing endpoints keep exactly
that: thinking on is `{"enable_thinking": true}`, thinking off sends nothing (an
`enable_thinking` in the extra body is still sent, as before). New endpoints start
with no switch until one is declared."""

from django.db import migrations, models

# Frozen here: a migration must not change with later code.
TODAYS_SWITCH = {
    "thinking_switch": "parameter",
    "thinking_on": {"enable_thinking": True},
    "thinking_off": {},
}


def declare_todays_switch(apps, schema_editor):
    Endpoint = apps.get_model("judging", "Endpoint")
    Endpoint.objects.update(**TODAYS_SWITCH)


class Migration(migrations.Migration):

    dependencies = [
        ('judging', '0013_evaluation_run_progress'),
    ]

    operations = [
        migrations.AddField(
            model_name='endpoint',
            name='thinking_model',
            field=models.CharField(blank=True, help_text='Separate model switch: the model id sent in thinking mode, e.g. deepseek-reasoner beside deepseek-chat', max_length=200),
        ),
        migrations.AddField(
            model_name='endpoint',
            name='thinking_off',
            field=models.JSONField(blank=True, default=dict, help_text="Request fields switch: the object that turns it off; {} sends nothing (the provider's default must then be non-thinking)"),
        ),
        migrations.AddField(
            model_name='endpoint',
            name='thinking_on',
            field=models.JSONField(blank=True, default=dict, help_text='Request fields switch: a JSON object that turns thinking on, e.g. {"enable_thinking": true}, {"reasoning_effort": "high"} or {"thinking": {"type": "enabled"}}'),
        ),
        migrations.AddField(
            model_name='endpoint',
            name='thinking_switch',
            field=models.CharField(choices=[('never', 'No switch: never thinks'), ('always', 'No switch: always thinks'), ('parameter', 'Switched by request fields'), ('model', 'Switched by a separate model id')], default='never', help_text='How an evaluation run puts the tested model in thinking or non-thinking mode; a run asking for a mode the endpoint cannot give is refused', max_length=10),
        ),
        migrations.RunPython(declare_todays_switch, migrations.RunPython.noop),
    ]
