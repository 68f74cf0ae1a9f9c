from django.core.management.base import BaseCommand, CommandError

from judging.evaluation.actions import EvaluationActionError, do_retry_pending
from judging.evaluation.models import EvaluationRun
from judging.evaluation.pipeline import run_evaluation


class Command(BaseCommand):
    help = (
        "Ask again for the pending items of an evaluation run (failed answers, and "
        "judge or SV verdicts that failed or stayed unparseable)."
    )

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int)
        parser.add_argument(
            "--wait",
            action="store_true",
            help="run the stages in this process and wait, instead of queueing",
        )

    def handle(self, *args, run_id, wait, **options):
        run = EvaluationRun.objects.filter(pk=run_id).first()
        if run is None:
            raise CommandError(f"No evaluation run {run_id}.")
        try:
            count = do_retry_pending(run, enqueue=not wait)
        except EvaluationActionError as error:
            raise CommandError(str(error)) from None
        if not wait:
            self.stdout.write(
                f"Queued a retry of {count} pending item(s) of run {run.pk}. "
                f"Follow it at /judging/evaluation-runs/{run.pk}/"
            )
            return
        run_evaluation(run.pk)
        run.refresh_from_db()
        self.stdout.write(
            f"Run {run.pk} {run.get_status_display().lower()}: retried {count} "
            f"item(s), {run.failed_count} still pending."
        )
