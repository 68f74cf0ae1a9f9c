from django.core.management.commands import makemessages


class Command(makemessages.Command):
    """Django's makemessages, extracting benchmark.notes.ngettext_noop's sentence
    and plural too: a note with a count is written before its reader's language is
    known."""

    xgettext_options = [
        *makemessages.Command.xgettext_options,
        "--keyword=ngettext_noop:1,2",
    ]
