from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from judging.evaluation.actions import (
    EvaluationActionError,
    do_waive_pending,
    pending_responses,
)
from judging.evaluation.models import EvaluationRun


class Command(AssayCommand):
    help = gettext_lazy(
        "List an evaluation run's pending items, or waive them (recorded with who "
        "and why): waived items leave every metric and the run can complete."
    )

    def add_arguments(self, parser):
        parser.add_argument("run_id", type=int, help=gettext_lazy("evaluation run id"))
        parser.add_argument(
            "--item",
            action="append",
            default=[],
            metavar="EXTERNAL_ID",
            help=gettext_lazy(
                "waive only this item (repeatable); default: every pending item"
            ),
        )
        parser.add_argument(
            "--note", help=gettext_lazy("why the items are waived (required)")
        )
        parser.add_argument(
            "--user", help=gettext_lazy("username recorded as the one waiving")
        )
        parser.add_argument(
            "--list",
            action="store_true",
            dest="list_only",
            help=gettext_lazy("only list the pending items"),
        )

    def handle(self, *args, run_id, item, note, user, list_only, **options):
        run = EvaluationRun.objects.filter(pk=run_id).first()
        if run is None:
            raise CommandError(_("No evaluation run %(run)s.") % {"run": run_id})
        pending = {r.item.external_id: r for r in pending_responses(run)}
        if list_only:
            for external_id, response in pending.items():
                problem = response.error or response.get_status_display()
                self.stdout.write(f"{external_id}\t{problem}")
            self.stdout.write(
                ngettext(
                    "%(count)s pending item.", "%(count)s pending items.", len(pending)
                )
                % {"count": len(pending)}
            )
            return
        unknown = sorted(set(item) - set(pending))
        if unknown:
            raise CommandError(
                _("Not pending in run %(run)s: %(items)s.")
                % {"run": run.pk, "items": ", ".join(unknown)}
            )
        person = None
        if user:
            person = get_user_model().objects.filter(username=user).first()
            if person is None:
                raise CommandError(_("No user %(user)r.") % {"user": user})
        chosen = (
            [pending[key].pk for key in item]
            if item
            else [response.pk for response in pending.values()]
        )
        try:
            count = do_waive_pending(run, chosen, user=person, note=note or "")
        except EvaluationActionError as error:
            raise CommandError(str(error)) from None
        run.refresh_from_db()
        self.stdout.write(
            ngettext(
                "Waived %(count)s item of run %(run)s; run %(status)s.",
                "Waived %(count)s items of run %(run)s; run %(status)s.",
                count,
            )
            % {
                "count": count,
                "run": run.pk,
                "status": run.get_status_display().lower(),
            }
        )
