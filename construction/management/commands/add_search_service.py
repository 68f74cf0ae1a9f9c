from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from construction.actions import do_save_search_service
from construction.search.adapters import ADAPTERS
from construction.search.models import SearchService


class Command(AssayCommand):
    help = gettext_lazy(
        "Add a web search service for search verification, or change one: its "
        "adapter (protocol), base URL, the NAME of the environment variable "
        "holding its API key (the key itself is never stored) and how many "
        "queries it takes at once."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "name", help=gettext_lazy("the service's name (an existing one is changed)")
        )
        parser.add_argument(
            "--adapter",
            choices=sorted(ADAPTERS),
            default="searxng",
            help=gettext_lazy("the service's protocol (default: %(default)s)"),
        )
        parser.add_argument(
            "--base-url", required=True, help=gettext_lazy("the service's base URL")
        )
        parser.add_argument(
            "--api-key-env",
            default="",
            help=gettext_lazy("e.g. SEARXNG_API_KEY (empty: none)"),
        )
        parser.add_argument(
            "--max-concurrency",
            type=int,
            help=gettext_lazy(
                "queries in flight at once, over all workers (the service's "
                "limit; default 8 for a new service, unchanged for an existing one)"
            ),
        )
        parser.add_argument(
            "--inactive",
            action="store_true",
            help=gettext_lazy(
                "save the service inactive; without this flag it is saved active"
            ),
        )

    def handle(self, *args, name, **options):
        limit = options["max_concurrency"]
        fields = {
            "adapter": options["adapter"],
            "base_url": options["base_url"],
            "api_key_env": options["api_key_env"],
            "is_active": not options["inactive"],
            **({} if limit is None else {"max_concurrency": limit}),
        }
        before = SearchService.objects.filter(name=name).values(*fields).first()
        try:
            service = do_save_search_service(name, **fields)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(
            _("Search service %(name)s saved (%(adapter)s).")
            % {"name": service.name, "adapter": service.adapter}
        )
        self.write_changes(before, {f: getattr(service, f) for f in fields})
