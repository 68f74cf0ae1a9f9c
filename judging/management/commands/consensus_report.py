import json

from django.core.management.base import BaseCommand, CommandError

from benchmark.models import Benchmark
from judging.labelling.models import LabellingRun
from judging.labelling.report import consensus_report, report_csv
from judging.labelling.runs import label_matrices


class Command(BaseCommand):
    help = (
        "Three-model consensus report (IndustryBench Table 3) for a benchmark's "
        "latest labelling run: % full / majority / none, Cohen's, Fleiss' κ, α."
    )

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, metavar="SLUG")
        parser.add_argument("--run", type=int, help="a run id (default: the latest)")
        parser.add_argument("--format", choices=["text", "json", "csv"], default="text")

    def handle(self, *args, benchmark, run, format, **options):
        runs = LabellingRun.objects.filter(benchmark__slug=benchmark)
        if not Benchmark.objects.filter(slug=benchmark).exists():
            raise CommandError(f"No benchmark with slug {benchmark!r}.")
        chosen = runs.filter(pk=run).first() if run else runs.first()
        if chosen is None:
            raise CommandError(f"No labelling run for {benchmark}.")
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
        self.stdout.write(f"Run {report['run']}: {', '.join(report['annotators'])}")
        for d in report["dimensions"]:
            self.stdout.write(
                f"{d['name']:<12} n={d['units']:<6} "
                f"full {d['full_pct']}% ({d['full']})  "
                f"majority {d['majority_pct']}% ({d['majority']})  "
                f"none {d['none_pct']}% ({d['none']})  "
                f"Fleiss κ={d['fleiss_kappa']}  α={d['krippendorff_alpha']}"
            )
            for pair in d["pairwise"]:
                self.stdout.write(
                    f"    κ({pair['a']}, {pair['b']}) = {pair['cohen_kappa']}"
                    f"  n={pair['n']}"
                )
