import json

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.dashboard import EXPORT_COLUMNS, VOTE_COLUMNS, export_rows, vote_rows
from annotation.models import Campaign
from assay.commands import AssayCommand
from benchmark.csv_writer import csv_lines


class Command(AssayCommand):
    help = gettext_lazy(
        "Write every label of a campaign (corrections included) as CSV or JSONL; "
        "of a binary campaign, with --per-response, each response's votes and "
        "majority decision instead."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help=gettext_lazy("campaign id"))
        parser.add_argument(
            "--format",
            choices=("csv", "jsonl"),
            default="csv",
            help=gettext_lazy("output format (default: %(default)s)"),
        )
        parser.add_argument(
            "--per-response",
            action="store_true",
            help=gettext_lazy(
                "binary grading: one row per response, with its votes and majority "
                "decision"
            ),
        )

    def handle(self, *args, campaign, format, per_response, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(_("No campaign %(campaign)s.") % {"campaign": campaign})
        if per_response and not found.is_binary:
            raise CommandError(_("--per-response is for binary grading campaigns."))
        rows, columns = (
            (vote_rows(found), VOTE_COLUMNS)
            if per_response
            else (export_rows(found), EXPORT_COLUMNS)
        )
        if format == "jsonl":
            for row in rows:
                self.stdout.write(json.dumps(row, ensure_ascii=False))
            return
        cells = ([row[column] for column in columns] for row in rows)
        # The command's stdout adds the line ending to every write.
        for line in csv_lines(columns, cells, newline=""):
            self.stdout.write(line)
