from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from judging.evaluation.models import EvaluationRun
from judging.interop.exporting import inspect_eval_file


class Command(AssayCommand):
    help = gettext_lazy(
        "Export an evaluation run as an Inspect AI .eval log (`inspect view`)."
    )

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int, help=gettext_lazy("evaluation run id"))
        parser.add_argument(
            "--format",
            choices=["inspect"],
            default="inspect",
            help=gettext_lazy("output format (default: %(default)s)"),
        )
        parser.add_argument(
            "--output",
            type=Path,
            required=True,
            help=gettext_lazy("the .eval file to write"),
        )

    def handle(self, *args, **opts):
        run = (
            EvaluationRun.objects.select_related("benchmark")
            .filter(pk=opts["run_id"])
            .first()
        )
        if run is None:
            raise CommandError(
                _("No evaluation run %(run)s.") % {"run": opts["run_id"]}
            )
        data = inspect_eval_file(run)
        try:
            opts["output"].write_bytes(data)
        except OSError as error:
            raise CommandError(
                _("Cannot write %(file)s: %(error)s.")
                % {"file": opts["output"], "error": error.strerror}
            ) from None
        samples = run.responses.count()
        self.stdout.write(
            ngettext(
                "Wrote %(output)s (%(count)s sample).",
                "Wrote %(output)s (%(count)s samples).",
                samples,
            )
            % {"output": opts["output"], "count": samples}
        )
