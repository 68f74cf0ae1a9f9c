"""Write every IndustryBench table (CSV, LaTeX) and figure (SVG, PNG) with a
manifest: `manage.py paper_tables --benchmark SLUG --out DIR [--preset
industrybench] [--language CODE]`."""

from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.paper.collect import PRESETS, paper_set
from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named


class Command(AssayCommand):
    help = gettext_lazy(
        "Write the paper's tables and figures for a benchmark to a folder."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--out", required=True, help=gettext_lazy("folder to write into")
        )
        parser.add_argument(
            "--preset",
            choices=sorted(PRESETS),
            default=None,
            help=gettext_lazy(
                "a paper's settings instead of the benchmark's (industrybench: linear "
                "weighted κ, paired differences of the top 9 runs)"
            ),
        )
        parser.add_argument(
            "--language",
            default=None,
            help=gettext_lazy("the runs' language (default: source)"),
        )
        parser.add_argument(
            "--model",
            action="append",
            default=[],
            dest="models",
            help=gettext_lazy(
                "Tables 17/20 and Figures 5/6 show only these models (repeat)"
            ),
        )

    def handle(self, *args, benchmark, out, preset, language, models, **options):
        bench = benchmark_named(benchmark)
        if language and language not in bench.languages:
            raise CommandError(
                _("%(language)r is not a language of %(benchmark)s (%(languages)s).")
                % {
                    "language": language,
                    "benchmark": bench.slug,
                    "languages": ", ".join(bench.languages),
                }
            )
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise CommandError(
                _("%(folder)s exists and is not a folder.") % {"folder": folder}
            )
        result = paper_set(
            bench, preset=preset, language=language, slice_models=models or None
        )
        for name, content in result.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        manifest = result.manifest
        self.stdout.write(
            _(
                "Wrote %(tables)s tables and %(figures)s figures to %(folder)s "
                "(manifest.json says what each was computed on)."
            )
            % {
                "tables": len(manifest["tables"]),
                "figures": len(manifest["figures"]),
                "folder": folder,
            }
        )
        for name, why in {
            **manifest["tables_not_generated"],
            **manifest["figures_not_generated"],
        }.items():
            self.stdout.write(
                _("Not generated: %(name)s: %(why)s.") % {"name": name, "why": why}
            )
