"""What the management commands of every app share about benchmarks: the
`--benchmark` option and finding the one an operator names."""

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from benchmark.models import Benchmark


def benchmark_named(slug: str) -> Benchmark:
    """The benchmark whose slug is `slug`; else a CommandError in the operator's
    language (commands run under `AssayCommand`'s language)."""
    found = Benchmark.objects.filter(slug=slug).first()
    if found is None:
        raise CommandError(_("No benchmark with slug %(slug)r.") % {"slug": slug})
    return found


def add_benchmark_argument(parser, *, required: bool = True) -> None:
    """`--benchmark SLUG`, declared alike (name, metavar, help) in every command
    that works on one benchmark."""
    parser.add_argument(
        "--benchmark",
        required=required,
        metavar="SLUG",
        help=gettext_lazy("benchmark slug"),
    )
