from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from judging.evaluation.actions import EvaluationActionError, do_retry_pending
from judging.evaluation.models import EvaluationRun
from judging.evaluation.pipeline import run_evaluation


class Command(AssayCommand):
    help = gettext_lazy(
        "Ask again for the pending items of an evaluation run (failed answers, and "
        "judge or SV verdicts that failed or stayed unparseable)."
    )

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int, help=gettext_lazy("evaluation run id"))
        parser.add_argument(
            "--wait",
            action="store_true",
            help=gettext_lazy(
                "run the stages in this process and wait, instead of queueing"
            ),
        )

    def handle(self, *args, run_id, wait, **options):
        run = EvaluationRun.objects.filter(pk=run_id).first()
        if run is None:
            raise CommandError(_("No evaluation run %(run)s.") % {"run": run_id})
        try:
            count = do_retry_pending(run, enqueue=not wait)
        except EvaluationActionError as error:
            raise CommandError(str(error)) from None
        if not wait:
            self.stdout.write(
                ngettext(
                    "Queued a retry of %(count)s pending item of run %(run)s. Follow "
                    "it at /judging/evaluation-runs/%(run)s/",
                    "Queued a retry of %(count)s pending items of run %(run)s. Follow "
                    "it at /judging/evaluation-runs/%(run)s/",
                    count,
                )
                % {"count": count, "run": run.pk}
            )
            return
        run_evaluation(run.pk)
        run.refresh_from_db()
        self.stdout.write(
            ngettext(
                "Run %(run)s %(status)s: retried %(count)s item, %(pending)s still "
                "pending.",
                "Run %(run)s %(status)s: retried %(count)s items, %(pending)s still "
                "pending.",
                count,
            )
            % {
                "run": run.pk,
                "status": run.get_status_display().lower(),
                "count": count,
                "pending": run.failed_count,
            }
        )
