from datetime import date
from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from benchmark.validation import ImportRejected
from construction.actions import do_import_sources
from construction.forum.posts import PostFilter


class Command(AssayCommand):
    help = gettext_lazy(
        "Import source documents (GB/T clauses, product records, forum posts) from "
        "CSV or JSONL into a benchmark, all or nothing; sources already present are "
        "skipped, forum posts outside the --min-… / --posted-… filter left out."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help=gettext_lazy("CSV or JSONL file of sources"))
        add_benchmark_argument(parser)
        parser.add_argument(
            "--min-views",
            type=int,
            default=0,
            help=gettext_lazy(
                "forum posts: keep those with at least this many views (default: "
                "%(default)s)"
            ),
        )
        parser.add_argument(
            "--min-replies",
            type=int,
            default=0,
            help=gettext_lazy(
                "forum posts: keep those with at least this many replies (default: "
                "%(default)s)"
            ),
        )
        parser.add_argument(
            "--min-votes",
            type=int,
            default=None,
            help=gettext_lazy(
                "forum posts: keep those with at least this many votes (default: no "
                "limit)"
            ),
        )
        parser.add_argument(
            "--posted-from",
            type=date.fromisoformat,
            default=None,
            help=gettext_lazy(
                "forum posts: keep those posted on or after this date (YYYY-MM-DD); "
                "undated posts are left out"
            ),
        )
        parser.add_argument(
            "--posted-to",
            type=date.fromisoformat,
            default=None,
            help=gettext_lazy(
                "forum posts: keep those posted on or before this date (YYYY-MM-DD); "
                "undated posts are left out"
            ),
        )

    def handle(self, *args, file, benchmark, **options):
        target = benchmark_named(benchmark)
        path = Path(file)
        if not path.is_file():
            raise CommandError(_("No file %(file)r.") % {"file": file})
        try:
            result = do_import_sources(
                target,
                path.read_bytes(),
                path.name,
                PostFilter(
                    min_views=options["min_views"],
                    min_replies=options["min_replies"],
                    min_votes=options["min_votes"],
                    posted_from=options["posted_from"],
                    posted_to=options["posted_to"],
                ),
            )
        except ImportRejected as rejected:
            for line in rejected.lines():
                self.stderr.write(line)
            raise CommandError(rejected.refusal(path.name)) from None
        self.stdout.write(str(result))
