from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.core.validators import validate_slug
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.hf_release import do_import_release
from benchmark.importing import LAYOUTS, do_import_items
from benchmark.validation import ImportRejected

PARQUET = "parquet"
# Every Parquet file starts with these bytes, so `auto` tells one from a text file.
PARQUET_MAGIC = b"PAR1"


class Command(AssayCommand):
    help = gettext_lazy(
        "Import items from an IndustryBench-layout CSV/JSONL, a generic JSONL file "
        "or a Hugging Face release's Parquet file (export_items --format hf). "
        "All or nothing: any problem rejects the whole file and is listed."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "file",
            type=Path,
            help=gettext_lazy("The file to import: CSV, JSONL or Parquet."),
        )
        parser.add_argument(
            "--benchmark",
            metavar="SLUG",
            help=gettext_lazy(
                "Target benchmark; created with the default taxonomy if new "
                "(default: the file name as a slug)."
            ),
        )
        parser.add_argument(
            "--name", default="", help=gettext_lazy("Name of a new benchmark.")
        )
        parser.add_argument(
            "--update",
            action="store_true",
            help=gettext_lazy(
                "Update items whose id already exists instead of rejecting them."
            ),
        )
        parser.add_argument(
            "--format",
            dest="layout",
            choices=(*LAYOUTS, PARQUET),
            default="auto",
            help=gettext_lazy(
                "Layout of the file (default: auto, told from its content)."
            ),
        )

    def handle(self, *args, file: Path, benchmark, name, update, layout, **options):
        slug = benchmark or slugify(file.stem)
        try:
            validate_slug(slug)
        except ValidationError:
            raise CommandError(
                _("%(slug)r is not a valid benchmark slug.") % {"slug": slug}
            ) from None
        try:
            source = file.open("rb")
        except OSError as error:
            raise CommandError(
                _("Cannot read %(file)s: %(error)s.")
                % {"file": file, "error": error.strerror}
            ) from None
        with source:
            if layout == "auto" and source.read(4) == PARQUET_MAGIC:
                layout = PARQUET
            source.seek(0)
            try:
                if layout == PARQUET:
                    summary = do_import_release(
                        source, slug=slug, name=name, update=update
                    )
                else:
                    summary = do_import_items(
                        source,
                        slug=slug,
                        name=name,
                        update=update,
                        layout=layout,
                        filename=file.name,
                    )
            except ImportRejected as rejected:
                for line in rejected.lines():
                    self.stderr.write(line)
                raise CommandError(rejected.refusal(file.name)) from None
        for line in summary.lines():
            self.stdout.write(line.translated())
