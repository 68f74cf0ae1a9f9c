from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from judging.runs import lifecycle

# "construction": a construction stage run (registered by the construction app).
KINDS = ("labelling", "evaluation", "translation", "construction", "variants")


class Command(AssayCommand):
    help = gettext_lazy(
        "Cancel a labelling, evaluation, translation, construction stage or variant "
        "run: "
        "queued chunks do nothing and running ones stop within a second; recorded "
        "results are kept."
    )

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=KINDS, help=gettext_lazy("the kind of run"))
        parser.add_argument("run_id", type=int, help=gettext_lazy("the run's id"))

    def handle(self, *args, kind, run_id, **options):
        model = lifecycle.kind_named(kind).model
        run = model.objects.filter(pk=run_id).first()
        if run is None:
            raise CommandError(
                _("No %(kind)s run %(run)s.") % {"kind": kind, "run": run_id}
            )
        try:
            run = lifecycle.cancel(run)
        except ValidationError as error:
            raise CommandError(error.messages[0]) from None
        self.stdout.write(
            _("Cancelled %(kind)s run %(run)s.") % {"kind": kind, "run": run.pk}
        )
