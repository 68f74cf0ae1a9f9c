from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.interop.tools import TOOLS, import_file
from annotation.models import Campaign
from benchmark.validation import ImportRejected


class Command(BaseCommand):
    help = (
        "Import people's grades from a Label Studio JSON export or Argilla records "
        "into a grading or SV campaign, as their labels. All or nothing: any "
        "problem rejects the whole file and is listed."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", dest="tool", choices=TOOLS, required=True)

    def handle(self, *args, campaign, file, tool, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(f"No campaign {campaign}.")
        try:
            data = file.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}.") from None
        try:
            summary = import_file(found, tool, data)
        except ImportRejected as rejected:
            for problem in rejected.problems:
                self.stderr.write(str(problem))
            hidden = rejected.total - len(rejected.problems)
            if hidden:
                self.stderr.write(f"… and {hidden} more problem(s).")
            raise CommandError(
                f"Rejected {file.name}: {rejected.total} problem(s); "
                "nothing was imported."
            ) from None
        for line in summary.lines():
            self.stdout.write(line)
