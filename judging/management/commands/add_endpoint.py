import json
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from assay.commands import AssayCommand
from judging.llm.actions import do_save_endpoint
from judging.llm.models import Endpoint


def parse_value(raw: str):
    """JSON when it parses (numbers, true/false, objects), else the plain string."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def json_object(raw, flag):
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        raise CommandError(
            _("%(flag)s %(value)r is not JSON.") % {"flag": flag, "value": raw}
        ) from None
    if not isinstance(value, dict):
        raise CommandError(
            _("%(flag)s takes a JSON object, e.g. '{\"x\": true}'.") % {"flag": flag}
        )
    return value


def thinking_switch(options) -> str:
    """The switch named, or the one the thinking options given imply."""
    Switch = Endpoint.ThinkingSwitch
    if options["thinking_switch"]:
        return options["thinking_switch"]
    if options["thinking_on"] is not None:
        return Switch.PARAMETER
    return Switch.MODEL if options["thinking_model"] else Switch.NEVER


def price(raw):
    if raw is None:
        return None
    try:
        return Decimal(raw)
    except InvalidOperation:
        raise CommandError(_("%(value)r is not a price.") % {"value": raw}) from None


class Command(AssayCommand):
    help = gettext_lazy(
        "Add or update an OpenAI-protocol endpoint. The API key is read at call time "
        "from the environment variable named by --api-key-env; it is never stored."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "name",
            help=gettext_lazy(
                "the endpoint's name; an existing one is updated, and an option "
                "not given goes back to its default"
            ),
        )
        parser.add_argument(
            "--base-url",
            required=True,
            help=gettext_lazy("base URL of the OpenAI-compatible API"),
        )
        parser.add_argument(
            "--model",
            required=True,
            help=gettext_lazy("the model id sent with each request"),
        )
        parser.add_argument(
            "--api-key-env",
            required=True,
            metavar="VAR",
            help=gettext_lazy("name of the environment variable holding the API key"),
        )
        parser.add_argument(
            "--max-concurrency",
            type=int,
            default=8,
            help=gettext_lazy(
                "requests in flight at once, over all workers (default: %(default)s)"
            ),
        )
        parser.add_argument(
            "--rpm",
            type=int,
            default=None,
            help=gettext_lazy("requests per minute at most (default: no limit)"),
        )
        parser.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help=gettext_lazy(
                "temperature, max_tokens, or any extra request field "
                "(e.g. enable_thinking=false); repeatable"
            ),
        )
        parser.add_argument(
            "--stream",
            action="store_true",
            help=gettext_lazy("request streamed responses (long reasoning replies)"),
        )
        parser.add_argument(
            "--thinking-switch",
            choices=Endpoint.ThinkingSwitch.values,
            help=gettext_lazy(
                "how an evaluation run switches thinking: parameter (the request "
                "fields of --thinking-on / --thinking-off), model (--thinking-model), "
                "never or always (no switch). Default: parameter with --thinking-on, "
                "model with --thinking-model, else never"
            ),
        )
        parser.add_argument(
            "--thinking-on",
            metavar="JSON",
            help=gettext_lazy(
                'request fields that turn thinking on, e.g. \'{"enable_thinking": '
                'true}\' or \'{"reasoning_effort": "high"}\''
            ),
        )
        parser.add_argument(
            "--thinking-off",
            metavar="JSON",
            help=gettext_lazy("request fields that turn it off; none: send nothing"),
        )
        parser.add_argument(
            "--thinking-model",
            metavar="ID",
            default="",
            help=gettext_lazy(
                "the model id sent in thinking mode (e.g. deepseek-reasoner)"
            ),
        )
        parser.add_argument(
            "--price-input", help=gettext_lazy("price per 1k input tokens")
        )
        parser.add_argument(
            "--price-output", help=gettext_lazy("price per 1k output tokens")
        )

    def handle(self, *args, name, **options):
        fields = {
            "base_url": options["base_url"],
            "model": options["model"],
            "api_key_env": options["api_key_env"],
            "max_concurrency": options["max_concurrency"],
            "rpm_limit": options["rpm"],
            "stream": options["stream"],
            "thinking_switch": thinking_switch(options),
            "thinking_on": json_object(options["thinking_on"], "--thinking-on"),
            "thinking_off": json_object(options["thinking_off"], "--thinking-off"),
            "thinking_model": options["thinking_model"],
            "price_input_per_1k": price(options["price_input"]),
            "price_output_per_1k": price(options["price_output"]),
        }
        extra_body = {}
        for pair in options["param"]:
            key, sep, raw = pair.partition("=")
            if not sep or not key:
                raise CommandError(
                    _("--param %(pair)r is not KEY=VALUE.") % {"pair": pair}
                )
            value = parse_value(raw)
            if key == "temperature":
                fields["temperature"] = float(value)
            elif key == "max_tokens":
                fields["max_tokens"] = int(value)
            else:
                extra_body[key] = value
        fields["extra_body"] = extra_body
        before = Endpoint.objects.filter(name=name).values(*fields).first()
        try:
            endpoint = do_save_endpoint(name, **fields)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        self.stdout.write(
            _("Endpoint %(name)s (%(model)s) saved.")
            % {"name": endpoint.name, "model": endpoint.model}
        )
        self.write_changes(before, {f: getattr(endpoint, f) for f in fields})
