import getpass
import sys

from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from benchmark.actions import do_create_user
from benchmark.roles import Role


class Command(AssayCommand):
    help = gettext_lazy(
        "Create a user in a role (or reset an existing user's password and role)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "username",
            help=gettext_lazy(
                "Username; an existing user's password and role are reset."
            ),
        )
        parser.add_argument(
            "--role",
            required=True,
            choices=Role.values,
            help=gettext_lazy("The user's role, in place of any other."),
        )
        parser.add_argument(
            "--email",
            default="",
            help=gettext_lazy(
                "E-mail address of a new user (an existing user's is left as it is)."
            ),
        )
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help=gettext_lazy(
                "Read the password from standard input instead of prompting."
            ),
        )

    def handle(self, *args, username, role, email, password_stdin, **options):
        if password_stdin:
            password = sys.stdin.readline().rstrip("\n")
        else:
            password = getpass.getpass(
                _("Password for %(user)s: ") % {"user": username}
            )
            if password != getpass.getpass(_("Password (again): ")):
                raise CommandError(_("Passwords do not match."))
        if len(password) < 8:
            raise CommandError(_("The password must have at least 8 characters."))
        do_create_user(username, password, role, email=email)
        self.stdout.write(
            _("User %(user)s is a %(role)s.")
            % {"user": username, "role": Role(role).label.lower()}
        )
