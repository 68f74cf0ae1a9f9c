from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from construction.audits.actions import AUDITED_STAGES, do_open_audit
from construction.audits.read import audit_measure, audit_progress
from construction.models import StageAudit


class Command(AssayCommand):
    help = gettext_lazy(
        "Open a stage audit (a seeded random sample of a stage version's decided "
        "decisions, for reviewers to agree or disagree with), or with --show, "
        "print an audit's precision and recall against people."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "stage",
            nargs="?",
            choices=AUDITED_STAGES,
            help=gettext_lazy("the stage to audit (not with --show)"),
        )
        add_benchmark_argument(parser, required=False)
        parser.add_argument(
            "--prompt-version",
            dest="prompt_version",
            help=gettext_lazy("the prompt / method version"),
        )
        parser.add_argument(
            "--size",
            type=int,
            default=50,
            help=gettext_lazy(
                "how many decisions to sample, at most all there are (default: "
                "%(default)s)"
            ),
        )
        parser.add_argument(
            "--seed", type=int, default=0, help=gettext_lazy("sample seed")
        )
        parser.add_argument(
            "--show", type=int, metavar="AUDIT", help=gettext_lazy("an audit id")
        )

    def handle(
        self, *args, stage, benchmark, prompt_version, size, seed, show, **options
    ):
        if show:
            audit = StageAudit.objects.filter(pk=show).first()
            if audit is None:
                raise CommandError(_("No audit %(audit)s.") % {"audit": show})
            self._show(audit)
            return
        if not (stage and benchmark and prompt_version):
            raise CommandError(_("Give the stage, --benchmark and --prompt-version."))
        target = benchmark_named(benchmark)
        try:
            audit = do_open_audit(target, stage, prompt_version, size=size, seed=seed)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(
            _("Opened %(audit)s with %(items)s of %(population)s decisions.")
            % {
                "audit": audit,
                "items": audit.items.count(),
                "population": audit.population,
            }
        )

    def _show(self, audit):
        progress, measured = audit_progress(audit), audit_measure(audit)
        self.stdout.write(
            _("%(audit)s: %(answered)s / %(items)s answered")
            % {"audit": audit, "answered": progress.answered, "items": progress.items}
        )
        measures = {
            "precision": _("precision"),
            "recall": _("recall"),
            "agreement": _("agreement"),
        }
        for name, label in measures.items():
            rate = getattr(measured, name)
            if rate.n:
                self.stdout.write(
                    f"  {label}: {rate.value:.3f} [{rate.low:.3f}, {rate.high:.3f}] "
                    f"n={rate.n}"
                )
            else:
                self.stdout.write(f"  {label}: — n=0")
