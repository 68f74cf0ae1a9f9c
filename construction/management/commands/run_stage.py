import time
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named
from construction.actions import (
    FORUM_PROMPTS,
    LLM_STAGES,
    RUNNABLE_STAGES,
    SHORT_ANSWER_PROMPT,
    VERIFIERS,
    do_start_stage,
)
from construction.models import SearchService, Source, Stage, StageRun
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import default_template


class Command(AssayCommand):
    help = gettext_lazy(
        "Start a construction stage run (generation, dedup, quality, search, "
        "deep, exact_dedup or dangling) on a benchmark; a Celery worker makes "
        "the calls."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "stage",
            choices=RUNNABLE_STAGES,
            help=gettext_lazy("the construction stage to run"),
        )
        add_benchmark_argument(parser)
        parser.add_argument(
            "--endpoint",
            help=gettext_lazy(
                "endpoint name (generation, quality, search, deep; dedup: an "
                "embeddings endpoint, default the offline character n-grams)"
            ),
        )
        parser.add_argument(
            "--template",
            help=gettext_lazy("prompt template name (default: the shipped one)"),
        )
        parser.add_argument(
            "--verifier-template",
            help=gettext_lazy(
                "search, deep: the verdict prompt's name (default: the shipped one)"
            ),
        )
        parser.add_argument(
            "--search-service", help=gettext_lazy("search, deep: the service's name")
        )
        parser.add_argument(
            "--questions",
            type=int,
            default=3,
            help=gettext_lazy(
                "generation: questions asked per source, 1–20 (default: %(default)s)"
            ),
        )
        parser.add_argument(
            "--kind",
            choices=Source.Kind.values,
            default="",
            help=gettext_lazy(
                "generation: only sources of this kind; dedup: compare within this "
                "kind only (default: all)"
            ),
        )
        parser.add_argument(
            "--threshold",
            type=float,
            default=0.9,
            help=gettext_lazy(
                "dedup: cosine similarity at which a question duplicates an earlier "
                "one, above 0 and at most 1 (default: %(default)s)"
            ),
        )
        parser.add_argument(
            "--phrases",
            type=Path,
            help=gettext_lazy(
                "dangling: a file of dangling-reference phrases, one a line "
                "(default: the list of the benchmark's language)"
            ),
        )
        parser.add_argument(
            "--trial",
            type=int,
            default=0,
            metavar="N",
            help=gettext_lazy("generation, quality: decide only a seeded sample of N"),
        )
        parser.add_argument(
            "--seed", type=int, default=0, help=gettext_lazy("the trial's seed")
        )
        parser.add_argument(
            "--no-thinking",
            action="store_true",
            help=gettext_lazy(
                "deep: ask without thinking (the paper's Stage 5 thinks)"
            ),
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help=gettext_lazy("wait for the run to end, then print its status"),
        )

    def handle(self, *args, stage, benchmark, **options):
        target = benchmark_named(benchmark)
        endpoint = template = verifier = service = None
        calls_llm = stage in LLM_STAGES or stage in FORUM_PROMPTS
        # An LLM stage needs an endpoint; dedup may name one (embeddings).
        if calls_llm or options["endpoint"]:
            endpoint = Endpoint.objects.filter(name=options["endpoint"]).first()
            if endpoint is None:
                raise CommandError(
                    _("No endpoint %(endpoint)r.") % {"endpoint": options["endpoint"]}
                )
        if calls_llm:
            first = LLM_STAGES.get(stage) or FORUM_PROMPTS[stage]
            template = self.template(options["template"], first[0])
        if stage == Stage.CONVERT:
            verifier = self.template(
                options["verifier_template"], SHORT_ANSWER_PROMPT[0]
            )
        if stage in VERIFIERS:
            verifier = self.template(options["verifier_template"], VERIFIERS[stage][0])
            service = SearchService.objects.filter(
                name=options["search_service"]
            ).first()
            if service is None:
                raise CommandError(
                    _("No search service %(service)r.")
                    % {"service": options["search_service"]}
                )
        try:
            run = do_start_stage(
                target,
                stage,
                endpoint=endpoint,
                template=template,
                verifier_template=verifier,
                search_service=service,
                thinking=not options["no_thinking"],
                source_kind=options["kind"],
                questions_per_source=options["questions"],
                threshold=options["threshold"],
                phrases=options["phrases"].read_text() if options["phrases"] else "",
                trial_size=options["trial"],
                trial_seed=options["seed"],
            )
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(
            _("Started %(stage)s run %(run)s.") % {"stage": stage, "run": run.pk}
        )
        while options["wait"] and run.is_active:
            time.sleep(1)
            run = StageRun.objects.get(pk=run.pk)
        if options["wait"]:
            self.stdout.write(
                _("Run %(run)s: %(status)s.")
                % {"run": run.pk, "status": run.get_status_display()}
            )

    def template(self, name, purpose):
        """The newest version of the template `name`, or the shipped one."""
        if not name:
            return default_template(purpose)
        template = PromptTemplate.objects.filter(name=name).order_by("-version").first()
        if template is None:
            raise CommandError(
                _("No prompt template %(template)r.") % {"template": name}
            )
        return template
