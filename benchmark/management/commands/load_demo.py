from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from assay.commands import AssayCommand
from benchmark.actions import do_create_user
from benchmark.importing import do_import_items
from benchmark.models import Benchmark
from benchmark.roles import Role
from benchmark.validation import ImportRejected

DEMO_SLUG = "industrybench-demo"
DEMO_NAME = "IndustryBench demo"
DEMO_PASSWORD = "assay-demo"
DEMO_ITEMS = Path(__file__).resolve().parents[2] / "demo" / "items.jsonl"

# Other apps add simulated data to the demo benchmark (model outputs, labelling runs,
# review work) without this command importing them: each entry is the dotted path of
# a function `seed(benchmark)` that must itself be idempotent. Called in order.
DEMO_SEEDERS: list[str] = [
    "judging.demo.runs.seed",
    "judging.translation.demo.seed",
    "judging.labelling.demo.seed",
    "annotation.demo_calibration.seed",
    "annotation.demo.seed",
    "judging.robustness.demo.seed",
    "construction.demo.industrial.seed",
    # LPFQA's forum-to-item construction, on a benchmark of its own.
    "construction.demo.forum.seed",
    # A benchmark of its own (binary scale: MC and short answers with key points).
    "judging.demo.lpfqa.seed",
]


class Command(AssayCommand):
    help = gettext_lazy(
        "Load the demo benchmark and one demo user per role; safe to run repeatedly."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--items",
            type=Path,
            default=DEMO_ITEMS,
            help=gettext_lazy(
                "Demo items (JSONL), imported only while the demo benchmark does not "
                "exist (default: benchmark/demo/items.jsonl)."
            ),
        )
        parser.add_argument(
            "--allow-without-debug",
            action="store_true",
            help=gettext_lazy(
                "Load even with DEBUG off (tests); never on a production database."
            ),
        )

    def handle(self, *args, items: Path, allow_without_debug: bool, **options):
        if not (settings.DEBUG or allow_without_debug):
            raise CommandError(
                _(
                    "load_demo creates users with a published password, so it runs "
                    "only with DEBUG=1 (as `make run` sets it)."
                )
            )
        benchmark = Benchmark.objects.filter(slug=DEMO_SLUG).first()
        if benchmark is None:
            try:
                with items.open("rb") as source:
                    summary = do_import_items(
                        source,
                        slug=DEMO_SLUG,
                        name=DEMO_NAME,
                        layout="jsonl",
                        filename=items.name,
                        is_demo=True,
                    )
            except OSError as error:
                raise CommandError(
                    _("Cannot read %(file)s: %(error)s.")
                    % {"file": items, "error": error.strerror}
                ) from None
            except ImportRejected as rejected:
                raise CommandError(
                    _("%(file)s was rejected; nothing was imported:") % {"file": items}
                    + "".join(f"\n{line}" for line in rejected.lines())
                ) from None
            benchmark = summary.benchmark
            self.stdout.write(
                ngettext(
                    "Loaded %(count)s demo item into %(benchmark)s.",
                    "Loaded %(count)s demo items into %(benchmark)s.",
                    summary.created,
                )
                % {"count": summary.created, "benchmark": DEMO_NAME}
            )
        else:
            self.stdout.write(
                _("%(benchmark)s is already loaded.") % {"benchmark": DEMO_NAME}
            )
        existing = set(
            get_user_model()
            .objects.filter(username__in=Role.values)
            .values_list("username", flat=True)
        )
        for role in Role:
            if role.value not in existing:
                do_create_user(role.value, DEMO_PASSWORD, role.value)
        for dotted in DEMO_SEEDERS:
            import_string(dotted)(benchmark)
        self.stdout.write(_("Demo users (username / password):"))
        for role in Role:
            password = _("(unchanged)") if role.value in existing else DEMO_PASSWORD
            self.stdout.write(f"  {role.value} / {password}  ({role.label})")
