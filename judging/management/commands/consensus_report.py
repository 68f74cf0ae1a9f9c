import json

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from judging.labelling.models import LabellingRun
from judging.labelling.report import consensus_report, report_csv
from judging.labelling.runs import label_matrices


class Command(AssayCommand):
    help = gettext_lazy(
        "Three-model consensus report (IndustryBench Table 3) for a benchmark's "
        "latest labelling run: the share of items with full, majority or no "
        "consensus, Cohen's and Fleiss' κ, α."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--run", type=int, help=gettext_lazy("a run id (default: the latest)")
        )
        parser.add_argument(
            "--format",
            choices=["text", "json", "csv"],
            default="text",
            help=gettext_lazy("output format (default: %(default)s)"),
        )

    def handle(self, *args, benchmark, run, format, **options):
        runs = LabellingRun.objects.filter(benchmark=benchmark_named(benchmark))
        chosen = runs.filter(pk=run).first() if run else runs.first()
        if chosen is None:
            raise CommandError(
                _("No labelling run for %(benchmark)s.") % {"benchmark": benchmark}
            )
        annotators, dimensions = label_matrices(chosen)
        report = consensus_report(dimensions, annotators)
        report["run"] = chosen.pk
        if format == "json":
            self.stdout.write(json.dumps(report))
        elif format == "csv":
            self.stdout.write(report_csv(report), ending="")
        else:
            self.write_text(report)

    def write_text(self, report):
        self.stdout.write(
            _("Run %(run)s: %(annotators)s")
            % {"run": report["run"], "annotators": ", ".join(report["annotators"])}
        )
        for d in report["dimensions"]:
            self.stdout.write(
                _(
                    "%(dimension)s n=%(units)s full %(full_pct)s%% (%(full)s)  "
                    "majority %(majority_pct)s%% (%(majority)s)  "
                    "none %(none_pct)s%% (%(none)s)  Fleiss κ=%(fleiss)s  α=%(alpha)s"
                )
                % {
                    **d,
                    "dimension": f"{d['name']:<12}",
                    "units": f"{d['units']:<6}",
                    "fleiss": d["fleiss_kappa"],
                    "alpha": d["krippendorff_alpha"],
                }
            )
            for pair in d["pairwise"]:
                self.stdout.write(
                    f"    κ({pair['a']}, {pair['b']}) = {pair['cohen_kappa']}"
                    f"  n={pair['n']}"
                )
