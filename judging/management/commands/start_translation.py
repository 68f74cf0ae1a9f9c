"""manage.py start_translation --benchmark SLUG --languages en,ru,vi
--translator ENDPOINT --reviewer ENDPOINT [--preset industrybench] [--wait]"""

import json
import time

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument
from benchmark.models import Benchmark
from judging.llm.models import Endpoint, PromptTemplate
from judging.llm.prompts import PRESETS, default_template
from judging.translation.actions import do_start_translation
from judging.translation.models import TranslationRun

POLL_SECONDS = 1.0


def counts(run: TranslationRun) -> dict:
    return {
        "run": run.pk,
        "status": run.status,
        "total": run.total_tasks,
        "translated": run.translated,
        "auto_approved": run.auto_approved,
        "flagged": run.flagged,
        "kept_reviewed": run.kept_reviewed,
        "already_present": run.already_present,
        "failed": run.failed,
        "unparseable": run.unparseable,
        "pending": run.pending_tasks,
    }


class Command(AssayCommand):
    help = gettext_lazy(
        "Translate a benchmark's items into target languages and review each "
        "rendering's faithfulness; prints the run id (or, with --wait, the final "
        "counts as JSON). Needs a running worker: celery -A assay worker."
    )

    def add_arguments(self, parser):
        add_benchmark_argument(parser)
        parser.add_argument(
            "--languages", required=True, help=gettext_lazy("e.g. en,ru,vi")
        )
        parser.add_argument(
            "--translator", required=True, help=gettext_lazy("Endpoint name")
        )
        parser.add_argument(
            "--reviewer", required=True, help=gettext_lazy("Endpoint name")
        )
        parser.add_argument(
            "--translation-prompt",
            type=int,
            help=gettext_lazy("PromptTemplate id (default: built-in)"),
        )
        parser.add_argument(
            "--review-prompt",
            type=int,
            help=gettext_lazy("PromptTemplate id (default: built-in)"),
        )
        parser.add_argument(
            "--preset",
            choices=sorted(PRESETS),
            help=gettext_lazy(
                "the preset's translation and review prompts (newest versions), "
                "where --translation-prompt / --review-prompt are not given"
            ),
        )
        parser.add_argument(
            "--threshold",
            type=int,
            default=5,
            help=gettext_lazy(
                "Faithfulness scores at or above this are auto-approved (default 5)"
            ),
        )
        parser.add_argument(
            "--items", help=gettext_lazy("Comma-separated external ids")
        )
        parser.add_argument(
            "--limit", type=int, help=gettext_lazy("Translate at most N items")
        )
        parser.add_argument(
            "--overwrite-machine",
            action="store_true",
            help=gettext_lazy(
                "Also re-translate machine translations already there (without "
                "it, only missing renderings and parts are translated; a person's "
                "work is never overwritten)"
            ),
        )
        parser.add_argument(
            "--refresh",
            action="store_true",
            help=gettext_lazy("Do not reuse recorded calls"),
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help=gettext_lazy(
                "Wait for the run to end and print its final counts as JSON"
            ),
        )

    def handle(self, *args, **options):
        benchmark = self._get(Benchmark, slug=options["benchmark"])
        translator = self._get(Endpoint, name=options["translator"])
        reviewer = self._get(Endpoint, name=options["reviewer"])
        preset = PRESETS[options["preset"]].templates() if options["preset"] else None
        if options["translation_prompt"]:
            translation_template = self._get(
                PromptTemplate, pk=options["translation_prompt"]
            )
        elif preset:
            translation_template = preset["translation"]
        else:
            translation_template = default_template(PromptTemplate.Purpose.TRANSLATION)
        if options["review_prompt"]:
            review_template = self._get(PromptTemplate, pk=options["review_prompt"])
        elif preset:
            review_template = preset["faithfulness"]
        else:
            review_template = default_template(
                PromptTemplate.Purpose.FAITHFULNESS_REVIEW
            )
        item_filter = {}
        if options["items"]:
            item_filter["external_ids"] = [
                value.strip() for value in options["items"].split(",") if value.strip()
            ]
        if options["limit"]:
            item_filter["limit"] = options["limit"]
        languages = [
            code.strip() for code in options["languages"].split(",") if code.strip()
        ]
        try:
            run = do_start_translation(
                benchmark,
                languages,
                translator,
                translation_template,
                reviewer,
                review_template,
                approve_threshold=options["threshold"],
                item_filter=item_filter,
                overwrite_machine=options["overwrite_machine"],
                refresh=options["refresh"],
            )
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error
        if not options["wait"]:
            self.stdout.write(str(run.pk))
            return
        while True:
            run.refresh_from_db()
            if not run.is_active:
                break
            time.sleep(POLL_SECONDS)
        self.stdout.write(json.dumps(counts(run)))

    def _get(self, model, **lookup):
        try:
            return model.objects.get(**lookup)
        except model.DoesNotExist as error:
            ((field, value),) = lookup.items()
            raise CommandError(
                _("No %(model)s with %(field)s %(value)r.")
                % {"model": model._meta.verbose_name, "field": field, "value": value}
            ) from error
