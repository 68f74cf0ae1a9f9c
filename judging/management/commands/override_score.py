from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from judging.evaluation.actions import EvaluationActionError
from judging.evaluation.models import Judgment, Response
from judging.evaluation.overrides import do_override_score, do_revert_override

SV_VALUES = {"violation": True, "none": False}
REVERT_KINDS = {"score": Judgment.Kind.RUBRIC, "sv": Judgment.Kind.SAFETY}


class Command(AssayCommand):
    help = gettext_lazy(
        "Override the judge's rubric score or SV flag on one response (the item "
        "results page's Override), or restore the judge's verdict; the judge's "
        "verdict and every override are kept, with who and why."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "response_id", type=int, help=gettext_lazy("the response's id")
        )
        verdict = parser.add_mutually_exclusive_group(required=True)
        verdict.add_argument(
            "--score", type=int, help=gettext_lazy("the rubric score, 0–3")
        )
        verdict.add_argument(
            "--sv",
            choices=sorted(SV_VALUES),
            help=gettext_lazy("the safety-violation flag"),
        )
        verdict.add_argument(
            "--revert",
            choices=sorted(REVERT_KINDS),
            help=gettext_lazy("let the judge's score or SV flag count again"),
        )
        parser.add_argument(
            "--reason", required=True, help=gettext_lazy("why (required)")
        )
        parser.add_argument(
            "--user",
            required=True,
            help=gettext_lazy("username recorded as the one overriding"),
        )

    def handle(self, *args, response_id, score, sv, revert, reason, user, **options):
        response = Response.objects.filter(pk=response_id).first()
        if response is None:
            raise CommandError(
                _("No response %(response)s.") % {"response": response_id}
            )
        person = get_user_model().objects.filter(username=user).first()
        if person is None:
            raise CommandError(_("No user %(user)r.") % {"user": user})
        try:
            if revert:
                override = do_revert_override(
                    response, REVERT_KINDS[revert], user=person, reason=reason
                )
            elif sv:
                override = do_override_score(
                    response,
                    Judgment.Kind.SAFETY,
                    SV_VALUES[sv],
                    user=person,
                    reason=reason,
                )
            else:
                override = do_override_score(
                    response, Judgment.Kind.RUBRIC, score, user=person, reason=reason
                )
        except EvaluationActionError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            _("Response %(id)s (%(response)s): %(change)s, recorded for %(person)s.")
            % {
                "id": response.pk,
                "response": response,
                "change": override.change_in_words,
                "person": person.get_username(),
            }
        )
