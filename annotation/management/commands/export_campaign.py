from pathlib import Path

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from annotation.interop.grades import GRADING_KINDS
from annotation.interop.label_studio import ANNOTATORS, SYNTHETIC_EMAIL
from annotation.interop.tools import TOOLS, export_files
from annotation.models import Campaign
from assay.commands import AssayCommand


class Command(AssayCommand):
    help = gettext_lazy(
        "Write a grading or SV campaign for another annotation tool into a folder: "
        "Label Studio (tasks.json, label_config.xml, users.json) or Argilla 2.x (the "
        "folder rg.Dataset.to_disk() writes), with judges' verdicts and people's "
        "latest grades."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", type=int, help=gettext_lazy("campaign id"))
        parser.add_argument(
            "--format",
            dest="tool",
            choices=TOOLS,
            required=True,
            help=gettext_lazy("the tool the files are for"),
        )
        parser.add_argument(
            "--output", type=Path, required=True, help=gettext_lazy("folder")
        )
        parser.add_argument(
            "--annotators",
            choices=ANNOTATORS,
            default=SYNTHETIC_EMAIL,
            help=gettext_lazy(
                "Label Studio: people's grades as annotations by a synthetic "
                "e-mail per user (users.json lists the users to create), as "
                "predictions only, or as annotations by each user's own e-mail."
            ),
        )

    def handle(self, *args, campaign, tool, output, annotators, **options):
        found = Campaign.objects.filter(pk=campaign).first()
        if found is None or found.kind not in GRADING_KINDS:
            raise CommandError(
                _("No grading or SV campaign %(campaign)s.") % {"campaign": campaign}
            )
        try:
            output.mkdir(parents=True, exist_ok=True)
            for name, content in export_files(found, tool, annotators).items():
                (output / name).parent.mkdir(parents=True, exist_ok=True)
                (output / name).write_bytes(content)
        except OSError as error:
            raise CommandError(
                _("Cannot write %(file)s: %(error)s.")
                % {"file": output, "error": error.strerror}
            ) from None
        tasks = found.tasks.count()
        self.stdout.write(
            ngettext(
                "Wrote %(count)s task into %(output)s.",
                "Wrote %(count)s tasks into %(output)s.",
                tasks,
            )
            % {"count": tasks, "output": output}
        )
