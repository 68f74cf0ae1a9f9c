"""benchmark.notes: a text written once in English, read later in each reader's
language, with its plural picked by the count and its values translated too."""

import pickle

from django.utils import translation
from django.utils.translation import gettext_lazy, gettext_noop

from benchmark.notes import Note, noop, translated


def test_a_note_is_its_english_text_and_translates_when_read():
    note = Note(
        gettext_noop("duplicate id %(id)s (first on line %(first)s)"), id="'A'", first=2
    )
    assert note == "duplicate id 'A' (first on line 2)"
    with translation.override("zh-hans"):
        assert note.translated() == "id 'A' 重复（首次出现在第 2 行）"
        assert str(note) == "duplicate id 'A' (first on line 2)"  # downloads, API


def test_the_count_picks_the_plural_form_in_english_and_in_the_catalogue():
    forms = noop.ngettext("%(count)s label changed.", "%(count)s labels changed.")
    assert Note(forms, count=1) == "1 label changed."
    assert Note(forms, count=3) == "3 labels changed."
    with translation.override("zh-hans"):
        assert Note(forms, count=3).translated() == "3 个标签已更改。"


def test_a_value_that_is_a_note_or_a_lazy_label_is_read_in_the_readers_language():
    inner = Note(noop.ngettext("%(count)s response", "%(count)s responses"), count=2)
    note = Note(
        gettext_noop("%(column)s (n = %(n)s)"),
        column=gettext_lazy("Easy mean"),
        n=inner,
    )
    assert note == "Easy mean (n = 2 responses)"
    with translation.override("zh-hans"):
        assert note.translated() == "简单 均分（n = 2 个回答）"


def test_stored_as_json_and_pickled_it_keeps_its_msgid():
    note = Note(
        noop.ngettext("%(count)s new variant.", "%(count)s new variants."), count=2
    )
    stored = note.as_json()
    assert stored == {
        "msgid": ("%(count)s new variant.", "%(count)s new variants."),
        "values": {"count": 2},
    }
    as_read = {"msgid": list(stored["msgid"]), "values": stored["values"]}  # JSONField
    with translation.override("zh-hans"):
        assert translated(as_read) == "新增 2 个变体。"
        assert pickle.loads(pickle.dumps(note)).translated() == "新增 2 个变体。"
    assert translated("a plain text") == "a plain text"
