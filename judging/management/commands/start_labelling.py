import json
import time

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from judging.labelling.actions import do_start_labelling
from judging.labelling.models import LabelConsensus, LabellingRun
from judging.labelling.runs import run_progress
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import default_template


class Command(AssayCommand):
    help = gettext_lazy(
        "Start a labelling run: each annotator endpoint labels every item in every "
        "dimension; consensus sets final labels. Workers: `celery -A assay worker`."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--annotators",
            required=True,
            metavar="NAME1,NAME2,...",
            help=gettext_lazy("annotator endpoint names, comma-separated"),
        )
        parser.add_argument(
            "--prompt-version",
            type=int,
            metavar="ID",
            help=gettext_lazy(
                "labelling prompt template id (default: the shipped one)"
            ),
        )
        parser.add_argument(
            "--items",
            metavar="EXTERNAL_ID,...",
            help=gettext_lazy("only these items, by external id, comma-separated"),
        )
        parser.add_argument(
            "--limit", type=int, help=gettext_lazy("only the first N items")
        )
        parser.add_argument(
            "--refresh",
            action="store_true",
            help=gettext_lazy("make new calls, ignore records"),
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help=gettext_lazy(
                "block until the run ends; print its final counts as JSON"
            ),
        )

    def handle(self, *args, **options):
        benchmark = benchmark_named(options["benchmark"])
        names = [n.strip() for n in options["annotators"].split(",") if n.strip()]
        endpoints = {e.name: e for e in Endpoint.objects.filter(name__in=names)}
        unknown = [name for name in names if name not in endpoints]
        if unknown:
            raise CommandError(
                _("Unknown endpoints: %(endpoints)s.")
                % {"endpoints": ", ".join(unknown)}
            )
        if options["prompt_version"]:
            template = PromptTemplate.objects.filter(
                pk=options["prompt_version"]
            ).first()
            if template is None:
                raise CommandError(
                    _("No prompt template %(template)r.")
                    % {"template": options["prompt_version"]}
                )
        else:
            template = default_template(PromptTemplate.Purpose.LABELLING)
        item_filter = {}
        if options["items"]:
            item_filter["external_ids"] = [
                value.strip() for value in options["items"].split(",") if value.strip()
            ]
        if options["limit"]:
            item_filter["limit"] = options["limit"]
        try:
            run = do_start_labelling(
                benchmark,
                [endpoints[name] for name in names],
                template,
                item_filter=item_filter,
                refresh=options["refresh"],
            )
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(str(run.pk))
        if options["wait"]:
            self.stdout.write(json.dumps(wait_for(run)))


def wait_for(run: LabellingRun, poll: float = 1.0) -> dict:
    """Block until the run has ended (and, when complete, its consensus is in)."""
    while True:
        run.refresh_from_db()
        ended = not run.is_active
        if ended and (
            run.status not in LabellingRun.ENDED_WITH_RESULTS
            or run.consensus_at is not None
        ):
            break
        time.sleep(poll)
    progress = run_progress(run)
    consensus = {}
    for row in LabelConsensus.objects.filter(run=run).values(
        "dimension__code", "outcome"
    ):
        by_outcome = consensus.setdefault(row["dimension__code"], {})
        by_outcome[row["outcome"]] = by_outcome.get(row["outcome"], 0) + 1
    progress["consensus"] = consensus
    return progress
