from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.interop.tools import TOOLS, import_file
from annotation.models import Campaign
from assay.commands import AssayCommand
from benchmark.validation import ImportRejected


class Command(AssayCommand):
    help = gettext_lazy(
        "Import people's grades from a Label Studio JSON or JSON_MIN export or "
        "Argilla records (records.json or a zip of rg.Dataset.to_disk()'s folder) "
        "into a grading or SV campaign, as their labels. All or nothing: any "
        "problem rejects the whole file and is listed."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help=gettext_lazy("campaign id"))
        parser.add_argument(
            "file", type=Path, help=gettext_lazy("the tool's export file")
        )
        parser.add_argument(
            "--format",
            dest="tool",
            choices=TOOLS,
            required=True,
            help=gettext_lazy("the tool the file comes from"),
        )
        parser.add_argument(
            "--users",
            type=Path,
            help=gettext_lazy(
                "Label Studio's users list (GET /api/users/), which turns the "
                "numeric user ids of its Export button into e-mail addresses"
            ),
        )
        parser.add_argument(
            "--map",
            action="append",
            default=[],
            metavar="KEY=USER",
            help=gettext_lazy(
                "the Assay username or e-mail of an annotator the file names "
                "otherwise (a Label Studio id as label-studio-user:7, an Argilla "
                "UUID); repeatable"
            ),
        )

    def handle(self, *args, campaign, file, tool, users, map, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(_("No campaign %(campaign)s.") % {"campaign": campaign})
        mapping = {}
        for pair in map:
            key, sep, user = pair.partition("=")
            if not sep or not key or not user:
                raise CommandError(
                    _("--map %(pair)r: expected KEY=USER.") % {"pair": pair}
                )
            mapping[key] = user
        try:
            data = file.read_bytes()
            users_file = users.read_bytes() if users else None
        except OSError as error:
            name = error.filename or file
            raise CommandError(
                _("Cannot read %(file)s: %(error)s.")
                % {"file": name, "error": error.strerror}
            ) from None
        try:
            summary = import_file(
                found, tool, data, users_file=users_file, mapping=mapping
            )
        except ImportRejected as rejected:
            for line in rejected.lines():
                self.stderr.write(line)
            raise CommandError(rejected.refusal(file.name)) from None
        for line in summary.lines():
            self.stdout.write(line)
