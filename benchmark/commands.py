"""What the management commands of every app share about benchmarks: finding
the one an operator names."""

from django.core.management.base import CommandError
from django.utils.translation import gettext as _

from benchmark.models import Benchmark


def benchmark_named(slug: str) -> Benchmark:
    """The benchmark whose slug is `slug`; else a CommandError in the operator's
    language (commands run under `AssayCommand`'s language)."""
    found = Benchmark.objects.filter(slug=slug).first()
    if found is None:
        raise CommandError(_("No benchmark with slug %(slug)r.") % {"slug": slug})
    return found
