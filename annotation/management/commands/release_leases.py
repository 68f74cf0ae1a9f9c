from django.core.management.base import CommandError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.actions import do_release_lease
from annotation.models import Assignment, Campaign
from assay.commands import AssayCommand


class Command(AssayCommand):
    help = gettext_lazy(
        "Return held tasks of a campaign to the queue: one lease, one person's, or "
        "every lease (--all), as the dashboard's Release button does."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help=gettext_lazy("campaign id"))
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument(
            "--assignment", type=int, help=gettext_lazy("one lease, by its id")
        )
        which.add_argument(
            "--user", help=gettext_lazy("every lease this username holds")
        )
        which.add_argument(
            "--all", action="store_true", help=gettext_lazy("every active lease")
        )

    def handle(self, *args, campaign, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(_("No campaign %(campaign)s.") % {"campaign": campaign})
        leases = Assignment.objects.filter(
            campaign=found, status=Assignment.Status.ACTIVE
        ).select_related("user", "task")
        if options["assignment"] is not None:
            leases = leases.filter(pk=options["assignment"])
        elif options["user"]:
            leases = leases.filter(user__username=options["user"])
        leases = list(leases.order_by("claimed_at"))
        if not leases:
            raise CommandError(_("No active lease matches."))
        with transaction.atomic():
            for lease in leases:
                do_release_lease(lease)
        for lease in leases:
            self.stdout.write(
                _("Released task %(position)s held by %(user)s.")
                % {"position": lease.task.position + 1, "user": lease.user}
            )
