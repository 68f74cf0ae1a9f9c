from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from annotation.actions import do_create_campaign_of_kind
from annotation.forms import KIND_FIELDS
from annotation.models import BINARY_OVERLAP, Campaign
from assay.commands import AssayCommand
from benchmark.commands import add_benchmark_argument, benchmark_named

# Options that only some kinds ask for (the new-campaign form's KIND_FIELDS), with
# how to tell one was given: given for another kind, it would be dropped unsaid.
KIND_OPTIONS = {
    "scale": ("--scale", lambda o: o["scale"] != Campaign.Scale.RUBRIC),
    "ask_safety": ("--ask-safety", lambda o: o["ask_safety"]),
    "hide_model_names": ("--show-model-names", lambda o: o["show_model_names"]),
    "languages": ("--languages", lambda o: bool(o["languages"].strip())),
}


class Command(AssayCommand):
    help = gettext_lazy(
        "Create a review campaign: expert grading / SV labelling (stratified sample "
        "of model responses), adjudication of no-majority labels, or review of "
        "flagged translations."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "kind",
            choices=Campaign.Kind.values,
            help=gettext_lazy(
                "grading, safety: a sample of model responses; adjudication: "
                "no-majority labels; translation_review: flagged translations"
            ),
        )
        add_benchmark_argument(parser)
        parser.add_argument(
            "--name", required=True, help=gettext_lazy("the campaign's name")
        )
        parser.add_argument(
            "--overlap",
            type=int,
            help=format_lazy(
                gettext_lazy(
                    "people per task; default 1, or {overlap} on the binary scale"
                ),
                overlap=BINARY_OVERLAP,
            ),
        )
        parser.add_argument(
            "--assignees",
            default="",
            help=gettext_lazy(
                "comma-separated usernames; none: open to everyone with the role"
            ),
        )
        parser.add_argument(
            "--lease-minutes",
            type=int,
            default=30,
            help=gettext_lazy(
                "minutes a claimed task stays with one person before it returns to the "
                "queue (default: %(default)s)"
            ),
        )
        parser.add_argument(
            "--size", type=int, default=198, help=gettext_lazy("grading sample size")
        )
        parser.add_argument(
            "--seed", type=int, default=20250101, help=gettext_lazy("sample seed")
        )
        parser.add_argument(
            "--scale",
            choices=Campaign.Scale.values,
            default=Campaign.Scale.RUBRIC,
            help=gettext_lazy("grading: the 0–3 rubric or binary correct / incorrect"),
        )
        parser.add_argument(
            "--ask-safety",
            action="store_true",
            help=gettext_lazy("grading: also ask safe / violating (SV)"),
        )
        parser.add_argument(
            "--show-model-names",
            action="store_true",
            help=gettext_lazy(
                "adjudication: name the annotator of each label (default: Model A, B, "
                "…)"
            ),
        )
        parser.add_argument(
            "--languages",
            default="",
            help=gettext_lazy("review: comma-separated target languages"),
        )

    def handle(self, *args, kind, **options):
        benchmark = benchmark_named(options["benchmark"])
        names = [n.strip() for n in options["assignees"].split(",") if n.strip()]
        people = list(get_user_model().objects.filter(username__in=names))
        missing = set(names) - {person.username for person in people}
        if missing:
            raise CommandError(
                _("Unknown users: %(users)s.") % {"users": ", ".join(sorted(missing))}
            )
        for field, (option, given) in KIND_OPTIONS.items():
            if given(options) and field not in KIND_FIELDS[kind]:
                kinds = [k for k, fields in KIND_FIELDS.items() if field in fields]
                raise CommandError(
                    _("%(option)s is for %(kinds)s campaigns.")
                    % {"option": option, "kinds": ", ".join(kinds)}
                )
        overlap = options["overlap"]
        if overlap is None:
            overlap = BINARY_OVERLAP if options["scale"] == Campaign.Scale.BINARY else 1
        languages = [x.strip() for x in options["languages"].split(",") if x.strip()]
        try:
            campaign = do_create_campaign_of_kind(
                kind,
                benchmark=benchmark,
                name=options["name"],
                overlap=overlap,
                assignees=people,
                lease_minutes=options["lease_minutes"],
                size=options["size"],
                seed=options["seed"],
                ask_safety=options["ask_safety"],
                scale=options["scale"],
                hide_model_names=not options["show_model_names"],
                languages=languages or None,
            )
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        tasks = campaign.tasks.count()
        self.stdout.write(
            ngettext(
                "Campaign %(id)s %(name)s: %(count)s task.",
                "Campaign %(id)s %(name)s: %(count)s tasks.",
                tasks,
            )
            % {"id": campaign.pk, "name": repr(campaign.name), "count": tasks}
        )
