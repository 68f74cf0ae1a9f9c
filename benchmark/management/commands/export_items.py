import sys
from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import benchmark_named
from benchmark.exporting import FORMATS, write_export
from benchmark.hf_release import (
    DEFAULT_LICENSE,
    LICENSES,
    release_files,
    write_release_folder,
)

HF = "hf"


class Command(AssayCommand):
    help = gettext_lazy(
        "Export a benchmark's items as IndustryBench-layout CSV or generic JSONL. "
        "--release writes only approved current renderings and final labels. "
        "--format hf writes the release as a Hugging Face dataset repository "
        "(data/train-00000-of-00001.parquet and a README.md dataset card) into the "
        "folder --output."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--benchmark",
            metavar="SLUG",
            required=True,
            help=gettext_lazy("Benchmark to export."),
        )
        parser.add_argument(
            "--format",
            dest="fmt",
            choices=(*FORMATS, HF),
            required=True,
            help=gettext_lazy(
                "csv: the IndustryBench layout; jsonl: Assay's lossless JSONL; hf: a "
                "Hugging Face dataset folder (always a release)."
            ),
        )
        parser.add_argument(
            "--release",
            action="store_true",
            help=gettext_lazy(
                "Only active items with an approved source rendering, their approved "
                "current renderings and the final labels."
            ),
        )
        parser.add_argument(
            "--output",
            type=Path,
            help=gettext_lazy(
                "File to write (default: standard output); for hf, the folder."
            ),
        )
        parser.add_argument(
            "--license",
            dest="license_id",
            choices=LICENSES,
            default=DEFAULT_LICENSE,
            help=gettext_lazy(
                "License of an hf release, as the dataset card states it."
            ),
        )

    def handle(self, *args, benchmark, fmt, release, output, license_id, **options):
        found = benchmark_named(benchmark)
        if fmt == HF:
            if output is None:
                raise CommandError(_("--format hf writes a folder: give --output DIR."))
            files, report = release_files(found, license_id)
            try:
                write_release_folder(files, output)
            except OSError as error:
                raise CommandError(
                    _("Cannot write %(file)s: %(error)s.")
                    % {"file": output, "error": error.strerror}
                ) from None
            release = True
        elif output is None:
            report = write_export(found, sys.stdout, fmt, release=release)
        else:
            try:
                with output.open("w", encoding="utf-8", newline="") as out:
                    report = write_export(found, out, fmt, release=release)
            except OSError as error:
                raise CommandError(
                    _("Cannot write %(file)s: %(error)s.")
                    % {"file": output, "error": error.strerror}
                ) from None
        # The report goes to stderr so that it never mixes with an export on stdout.
        for line in report.lines(release):
            self.stderr.write(line)
