from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.actions import do_set_campaign_status
from annotation.models import Campaign
from assay.commands import AssayCommand


class Command(AssayCommand):
    help = gettext_lazy(
        "Close a campaign (no new claims or corrections; held leases are released) "
        "or open it again, as the dashboard's buttons do."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help=gettext_lazy("campaign id"))
        parser.add_argument(
            "status",
            choices=Campaign.Status.values,
            help=gettext_lazy("the campaign's new status"),
        )

    def handle(self, *args, campaign, status, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(_("No campaign %(campaign)s.") % {"campaign": campaign})
        try:
            do_set_campaign_status(found, status)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(
            _("Campaign %(id)s %(name)s is %(status)s.")
            % {"id": found.pk, "name": repr(found.name), "status": status}
        )
