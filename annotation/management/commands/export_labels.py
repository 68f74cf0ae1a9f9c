import json

from django.core.management.base import BaseCommand, CommandError

from annotation.dashboard import EXPORT_COLUMNS, export_rows
from annotation.models import Campaign
from benchmark.csv_writer import csv_lines


class Command(BaseCommand):
    help = "Write every label of a campaign (corrections included) as CSV or JSONL."

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help="campaign id")
        parser.add_argument("--format", choices=("csv", "jsonl"), default="csv")

    def handle(self, *args, campaign, format, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None:
            raise CommandError(f"No campaign {campaign}.")
        if format == "jsonl":
            for row in export_rows(found):
                self.stdout.write(json.dumps(row, ensure_ascii=False))
            return
        rows = (
            [row[column] for column in EXPORT_COLUMNS] for row in export_rows(found)
        )
        # The command's stdout adds the line ending to every write.
        for line in csv_lines(EXPORT_COLUMNS, rows, newline=""):
            self.stdout.write(line)
