import json

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from judging.labelling.models import LabellingRun
from judging.labelling.runs import run_progress


class Command(AssayCommand):
    help = gettext_lazy(
        "Progress of a labelling run: done / failed / unparseable / pending, rate."
    )

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int, help=gettext_lazy("labelling run id"))
        parser.add_argument(
            "--format",
            choices=["text", "json"],
            default="text",
            help=gettext_lazy("output format (default: %(default)s)"),
        )

    def handle(self, *args, run_id, format, **options):
        run = LabellingRun.objects.filter(pk=run_id).first()
        if run is None:
            raise CommandError(_("No labelling run %(run)s.") % {"run": run_id})
        progress = run_progress(run)
        if format == "json":
            self.stdout.write(json.dumps(progress))
            return
        for key, value in progress.items():
            self.stdout.write(f"{key:>16}: {value}")
