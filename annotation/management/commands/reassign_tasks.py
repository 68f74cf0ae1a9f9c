from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from annotation.actions import do_reassign
from annotation.models import Campaign
from assay.commands import AssayCommand


def positions(text: str) -> list[int]:
    """ "3,7-9" -> [3, 7, 8, 9]: queue positions as the dashboard numbers them."""
    chosen = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        first, _dash, last = part.partition("-")
        try:
            start, end = int(first), int(last or first)
        except ValueError:
            start = end = 0  # refused below, as a range that is not one
        if start < 1 or end < start:
            raise CommandError(
                _("Not a task position or range: %(part)r.") % {"part": part}
            )
        chosen.extend(range(start, end + 1))
    return chosen


class Command(AssayCommand):
    help = gettext_lazy(
        "Reserve tasks of a campaign for one of its assignees (other people's leases "
        "on them end), or open them to everyone again — the dashboard's Reassign."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help=gettext_lazy("campaign id"))
        parser.add_argument(
            "tasks",
            help=gettext_lazy("task positions as the dashboard shows them: 3,7-9"),
        )
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--to", help=gettext_lazy("username of an assignee"))
        who.add_argument(
            "--open", action="store_true", help=gettext_lazy("back to everyone")
        )

    def handle(self, *args, campaign, tasks, to, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(_("No campaign %(campaign)s.") % {"campaign": campaign})
        user = None
        if to:
            user = found.assignees.filter(username=to).first()
            if user is None:
                raise CommandError(
                    _("%(user)s is not assigned to this campaign.") % {"user": to}
                )
        wanted = positions(tasks)
        by_position = {
            task.position + 1: task
            for task in found.tasks.filter(position__in=[p - 1 for p in wanted])
        }
        missing = sorted(set(wanted) - set(by_position))
        if missing:
            raise CommandError(
                ngettext(
                    "No task at position %(positions)s in this campaign.",
                    "No tasks at positions %(positions)s in this campaign.",
                    len(missing),
                )
                % {"positions": ", ".join(map(str, missing))}
            )
        try:
            with transaction.atomic():
                for position in sorted(by_position):
                    do_reassign(by_position[position], user)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        count = len(by_position)
        if user:
            done = ngettext(
                "%(count)s task reserved for %(user)s.",
                "%(count)s tasks reserved for %(user)s.",
                count,
            )
        else:
            done = ngettext(
                "%(count)s task open to everyone.",
                "%(count)s tasks open to everyone.",
                count,
            )
        self.stdout.write(done % {"count": count, "user": user})
