import getpass
import sys

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext as _

from benchmark.actions import do_create_user
from benchmark.roles import Role


class Command(BaseCommand):
    help = "Create a user in a role (or reset an existing user's password and role)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="Read the password from standard input instead of prompting.",
        )

    def handle(self, *args, username, role, email, password_stdin, **options):
        if password_stdin:
            password = sys.stdin.readline().rstrip("\n")
        else:
            password = getpass.getpass(f"Password for {username}: ")
            if password != getpass.getpass("Password (again): "):
                raise CommandError("Passwords do not match.")
        if len(password) < 8:
            raise CommandError("The password must have at least 8 characters.")
        do_create_user(username, password, role, email=email)
        self.stdout.write(
            _("User %(user)s is a %(role)s.")
            % {"user": username, "role": Role(role).label.lower()}
        )
