from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from api.actions import do_create_token
from assay.commands import AssayCommand
from benchmark.roles import user_roles


class Command(AssayCommand):
    help = gettext_lazy(
        "Create a personal API token for a user and print it; it is shown this once "
        "(Assay keeps only a digest)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "username", help=gettext_lazy("username of the token's owner")
        )
        parser.add_argument("name", help=gettext_lazy("what the token is for"))

    def handle(self, *args, username, name, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(_("No user %(user)r.") % {"user": username})
        try:
            token, text = do_create_token(user, name)
        except ValidationError as error:
            raise CommandError(error.messages[0]) from None
        if not user_roles(user):
            self.stderr.write(
                _("%(user)s holds no role: the token opens nothing until they do.")
                % {"user": username}
            )
        self.stdout.write(text)
