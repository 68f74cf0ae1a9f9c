"""Management commands speak the operator's language (#30): the one the gettext
environment names (LC_ALL, LC_MESSAGES, LANG; LANGUAGE before them), else
LANGUAGE_CODE. Every command of the apps is an AssayCommand, and none raises a
CommandError with a message left untranslated."""

import ast
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import (
    CommandError,
    call_command,
    get_commands,
    load_command_class,
)
from django.core.management.base import BaseCommand
from django.utils import translation

from assay.commands import (
    NO_LINE_END,
    NO_LINE_START,
    columns,
    operator_language,
    wrap_columns,
)

LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


@pytest.mark.parametrize(
    ("environ", "language"),
    [
        ({}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh-hans"),
        ({"LANG": "zh_CN.GB18030"}, "zh-hans"),
        ({"LANG": "zh_SG.UTF-8"}, "zh-hans"),
        # As a browser asking for zh-TW gets it: the only Chinese there is.
        ({"LANG": "zh_TW.UTF-8"}, "zh-hans"),
        ({"LANG": "ru_RU.UTF-8"}, "ru"),
        ({"LANG": "vi_VN"}, "vi"),
        ({"LANG": "en_GB.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "POSIX"}, "en"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({"LANG": "sr_RS@latin"}, "en"),
        # LC_ALL over LC_MESSAGES over LANG.
        ({"LC_ALL": "ru_RU.UTF-8", "LC_MESSAGES": "vi_VN", "LANG": "zh_CN"}, "ru"),
        ({"LC_MESSAGES": "vi_VN.UTF-8", "LANG": "zh_CN.UTF-8"}, "vi"),
        ({"LC_ALL": "", "LANG": "ru_RU.UTF-8"}, "ru"),
        # LANGUAGE, a list of preferences, comes first, unless the locale is C.
        ({"LANGUAGE": "de:ru:en", "LANG": "zh_CN.UTF-8"}, "ru"),
        ({"LANGUAGE": "de", "LANG": "vi_VN.UTF-8"}, "vi"),
        ({"LANGUAGE": "zh_CN", "LANG": "C"}, "en"),
        ({"LANGUAGE": "ru"}, "en"),
    ],
)
def test_the_environment_names_the_language(environ, language):
    assert operator_language(environ) == language


def test_without_a_locale_commands_speak_language_code(settings):
    settings.LANGUAGE_CODE = "ru"
    assert operator_language({"LANG": "C.UTF-8"}) == "ru"
    assert operator_language({"LANG": "de_DE.UTF-8"}) == "ru"


@pytest.fixture
def locale_env(monkeypatch):
    """set(LANG=…): the process environment a command reads, nothing else set."""
    for name in LOCALE_VARIABLES:
        monkeypatch.delenv(name, raising=False)

    def set_env(**variables):
        for name, value in variables.items():
            monkeypatch.setenv(name, value)

    return set_env


def refusal(*args, stdin: str = "") -> str:
    """The CommandError message of `manage.py *args`, called in this process."""
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with pytest.raises(CommandError) as caught:
            call_command(*args, stdout=io.StringIO(), stderr=io.StringIO())
    finally:
        sys.stdin = old_stdin
    return str(caught.value)


INCONSISTENT_TABLE = (
    "model,n,raw,final,delta,perfect,pass,rank,raw_rank,Δrank\n"
    "alpha,7,2.43,2.29,-0.14,57.1%,85.7%,1,1,0\n"
    "gamma,7,1.35,1.35,0.00,14.3%,42.9%,2,2,0\n"
)

# (command line, stdin, English, Chinese, Russian)
REFUSALS = [
    (
        ("leaderboard", "--benchmark", "nope"),
        "",
        "No benchmark with slug 'nope'.",
        "没有 slug 为 'nope' 的基准。",
        "Нет бенчмарка со slug 'nope'.",
    ),
    (
        ("export_labels", "0"),
        "",
        "No campaign 0.",
        "没有编号为 0 的批次。",
        "Нет кампании 0.",
    ),
    (
        ("create_user", "someone", "--role", "expert", "--password-stdin"),
        "short\n",
        "The password must have at least 8 characters.",
        "密码至少需要 8 个字符。",
        "Пароль должен содержать не менее 8 символов.",
    ),
    (
        ("import_items", "items.jsonl", "--benchmark", "not a slug"),
        "",
        "'not a slug' is not a valid benchmark slug.",
        "'not a slug' 不是有效的基准 slug。",
        "'not a slug' — недопустимый slug бенчмарка.",
    ),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("args", "stdin", "english", "chinese", "russian"), REFUSALS)
def test_refusals_in_the_operators_language(
    locale_env, args, stdin, english, chinese, russian
):
    assert refusal(*args, stdin=stdin) == english
    locale_env(LANG="zh_CN.UTF-8")
    assert refusal(*args, stdin=stdin) == chinese
    locale_env(LANG="ru_RU.UTF-8")
    assert refusal(*args, stdin=stdin) == russian


def test_counted_refusal_in_russian_and_english(locale_env, tmp_path):
    table = tmp_path / "table.csv"
    table.write_text(INCONSISTENT_TABLE, encoding="utf-8")
    locale_env(LANG="C.UTF-8")
    assert refusal("check_table", str(table)) == "2 inconsistencies in 1 of 2 rows."
    locale_env(LC_ALL="ru_RU.UTF-8")
    assert refusal("check_table", str(table)) == "2 несоответствия в 1 из 2 строки."


def test_the_callers_language_is_left_as_it_was(locale_env):
    locale_env(LANG="zh_CN.UTF-8")
    with translation.override("vi"):
        assert refusal("check_table", "/nonexistent/table.csv").startswith("无法读取")
        assert translation.get_language() == "vi"


def test_manage_py_prints_the_refusal_in_chinese():
    """The operator's own path: manage.py's run_from_argv prints the error after
    the command's execute() has returned."""
    environ = {k: v for k, v in os.environ.items() if k not in LOCALE_VARIABLES}
    done = subprocess.run(
        [sys.executable, "manage.py", "create_user", "x", "--role", "expert"]
        + ["--password-stdin"],
        cwd=settings.BASE_DIR,
        env={**environ, "LANG": "zh_CN.UTF-8"},
        input="short\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.strip().endswith("CommandError: 密码至少需要 8 个字符。")


# -- every command is an AssayCommand; no CommandError message is left English ------

EAGER_GETTEXT = {"gettext", "ngettext", "pgettext", "npgettext"}


def _app_modules():
    root = Path(settings.BASE_DIR)
    for app in sorted(p.parent for p in root.glob("*/apps.py")):
        for path in sorted(app.rglob("*.py")):
            if "migrations" not in path.parts:
                yield path.relative_to(root), ast.parse(path.read_text("utf-8"))


def _gettext_names(module: ast.Module) -> set[str]:
    """The names this module binds to an eager gettext function (`_` may be
    gettext_lazy, which a CommandError must not use: manage.py prints the error
    after the command's language is gone)."""
    names = set()
    for node in ast.walk(module):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "django.utils.translation"
        ):
            names |= {a.asname or a.name for a in node.names if a.name in EAGER_GETTEXT}
    return names


def _has_words(text: str) -> bool:
    return any(character.isalpha() for character in text)


def _english_literals(node: ast.AST, gettext: set[str]) -> list[str]:
    """Text a person reads in `node` that no gettext call translates: string
    literals and f-strings with letters, outside dict keys and subscripts (those
    are identifiers). An f-string inside a gettext call counts too."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) in gettext:
        return [
            ast.unparse(part)
            for arg in node.args
            for part in ast.walk(arg)
            if isinstance(part, ast.JoinedStr)
        ]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if _has_words(node.value) else []
    if isinstance(node, ast.JoinedStr):
        literal = "".join(
            part.value for part in node.values if isinstance(part, ast.Constant)
        )
        return [ast.unparse(node)] if _has_words(literal) else []
    if isinstance(node, ast.Dict):
        return [t for v in node.values for t in _english_literals(v, gettext)]
    if isinstance(node, ast.Subscript):
        return _english_literals(node.value, gettext)
    return [
        t for c in ast.iter_child_nodes(node) for t in _english_literals(c, gettext)
    ]


def _assigned(function: ast.AST, name: str) -> list[ast.AST]:
    """What `name` is assigned in `function` (=, +=, annotated)."""
    values = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if node.value is not None and any(
            isinstance(t, ast.Name) and t.id == name for t in targets
        ):
            values.append(node.value)
    return values


def _untranslated_command_errors(module: ast.Module) -> list[tuple[int, str]]:
    gettext = _gettext_names(module)
    found = []
    functions = [
        n
        for n in ast.walk(module)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    for function in functions:
        for call in ast.walk(function):
            if not (
                isinstance(call, ast.Call)
                and getattr(call.func, "id", getattr(call.func, "attr", None))
                == "CommandError"
                and call.args
            ):
                continue
            message = call.args[0]
            values = [message]
            if isinstance(message, ast.Name):
                values = _assigned(function, message.id)
            for value in values:
                found += [
                    (call.lineno, text) for text in _english_literals(value, gettext)
                ]
    return sorted(set(found))


def test_the_scan_finds_english_and_passes_translations():
    module = ast.parse(
        "from django.utils.translation import gettext as _\n"
        "from django.utils.translation import gettext_lazy\n"
        "def handle(name, error, opts):\n"
        "    raise CommandError(f'No campaign {name}.')\n"
        "    raise CommandError('Passwords do not match.')\n"
        "    raise CommandError(_('No %(x)s.') % {'x': opts['key'] or 'none'})\n"
        "    raise CommandError(_(f'No {name}.'))\n"
        "    raise CommandError(gettext_lazy('No campaign.'))\n"
        "    raise CommandError(_('No campaign %(id)s.') % {'id': name})\n"
        "    raise CommandError(' '.join(error.messages))\n"
        "    problem = _('Not a range: %(part)r.') % {'part': name}\n"
        "    raise CommandError(problem)\n"
        "    raise CommandError(_('Rejected:') + '\\n' + '\\n'.join(error.lines()))\n"
    )
    assert [line for line, _text in _untranslated_command_errors(module)] == [
        4,
        5,
        6,
        7,
        8,
    ]


def test_no_command_error_is_raised_with_an_untranslated_message():
    untranslated = {
        f"{path}:{line}": text
        for path, module in _app_modules()
        for line, text in _untranslated_command_errors(module)
    }
    assert not untranslated, untranslated


def test_every_command_speaks_the_operators_language():
    bare = [
        str(path)
        for path, module in _app_modules()
        if path.parts[-3:-1] == ("management", "commands")
        for node in module.body
        if isinstance(node, ast.ClassDef)
        and node.name == "Command"
        and not any(getattr(base, "id", "") == "AssayCommand" for base in node.bases)
    ]
    assert not bare, f"commands that are not an AssayCommand: {bare}"


# -- every command's --help in the operator's language --------------------------------

# What each language's help text is written in: a translated text has at least one.
SCRIPTS = {
    "zh_CN.UTF-8": re.compile(r"[\u4e00-\u9fff]"),
    "ru_RU.UTF-8": re.compile(r"[А-Яа-яЁё]"),
    "vi_VN.UTF-8": re.compile(r"[À-ỹ]"),
}


def _assay_commands() -> dict[str, str]:
    """command name -> app, for the commands of Assay's own apps."""
    root = Path(settings.BASE_DIR)
    ours = {path.parent.name for path in root.glob("*/apps.py")}
    return {name: app for name, app in get_commands().items() if app in ours}


def _django_options() -> set[str]:
    """The options every command has from Django (--verbosity, --settings, …),
    whose help is Django's, and argparse's -h."""
    parser = BaseCommand().create_parser("manage.py", "command")
    return {action.dest for action in parser._actions}


def _help_texts(app: str, name: str) -> dict[str, str]:
    """The command's own texts in `manage.py NAME --help`: its description and
    each argument's help, as the parser the command builds holds them."""
    parser = load_command_class(app, name).create_parser("manage.py", name)
    parser.format_help()  # argparse can format every text it was given
    django = _django_options()
    texts = {"description": parser.description or ""}
    for action in parser._actions:
        if action.dest not in django and action.help:
            texts[action.dest] = action.help
    return texts


@pytest.mark.parametrize("locale", list(SCRIPTS))
def test_every_commands_help_is_translated(locale_env, locale):
    commands = _assay_commands()
    assert len(commands) >= 39
    locale_env(LANG="C.UTF-8")
    english = {name: _help_texts(app, name) for name, app in commands.items()}
    locale_env(LANG=locale)
    untranslated = {}
    for name, app in commands.items():
        for key, text in _help_texts(app, name).items():
            source = english[name][key]
            if _has_words(source) and (
                text == source or not SCRIPTS[locale].search(text)
            ):
                untranslated[f"{name} {key}"] = text
    assert all(texts["description"] for texts in english.values())
    assert not untranslated, untranslated


def test_chinese_text_is_wrapped_by_terminal_columns():
    text = (
        "从 CSV 或 JSONL 向基准导入来源文档（GB/T 条款、产品记录、论坛帖子），"
        "全部或全不；已存在的来源被跳过。"
    )
    lines = wrap_columns(text, 20)
    assert lines == [
        "从 CSV 或 JSONL 向基",
        "准导入来源文档（GB/T",
        "条款、产品记录、论坛",
        "帖子），全部或全不；",
        "已存在的来源被跳过。",
    ]
    assert all(columns(line) <= 20 for line in lines)
    assert not any(line[0] in NO_LINE_START for line in lines)
    assert not any(line[-1] in NO_LINE_END for line in lines)
    # A break before "，" would start a line with it: "帖子）" and "，" stay
    # together, and the line before ends early.
    assert wrap_columns("一二三四五六七八九，十", 18) == ["一二三四五六七八", "九，十"]


def test_every_commands_chinese_help_fits_an_80_column_terminal(
    locale_env, monkeypatch
):
    """argparse counts characters, and a Chinese character takes two columns.
    (Lines without Chinese are argparse's own: the usage, with its lists of
    choices that no terminal width breaks.)"""
    monkeypatch.setenv("COLUMNS", "80")
    locale_env(LANG="zh_CN.UTF-8")
    chinese, too_wide = 0, {}
    for name, app in _assay_commands().items():
        parser = load_command_class(app, name).create_parser("manage.py", name)
        for line in parser.format_help().splitlines():
            if SCRIPTS["zh_CN.UTF-8"].search(line):
                chinese += 1
                if columns(line) > 78:
                    too_wide.setdefault(name, []).append(line)
    assert chinese > 100
    assert not too_wide, too_wide


@pytest.mark.parametrize(
    ("command_line", "locale", "expected"),
    [
        (
            ["load_demo", "--help"],
            "zh_CN.UTF-8",
            [
                "加载演示基准和每个角色各一个演示用户；可重复运行。",
                "--allow-without-debug",
            ],
        ),
        (
            ["help", "load_demo"],
            "ru_RU.UTF-8",
            [
                "Загрузить демонстрационный бенчмарк и по одному демонстрационному "
                "пользователю на каждую роль; можно запускать повторно.",
            ],
        ),
    ],
)
def test_manage_py_prints_help_in_the_operators_language(
    command_line, locale, expected
):
    environ = {k: v for k, v in os.environ.items() if k not in LOCALE_VARIABLES}
    done = subprocess.run(
        [sys.executable, "manage.py", *command_line],
        cwd=settings.BASE_DIR,
        # Wide enough that argparse does not wrap the description.
        env={**environ, "LANG": locale, "COLUMNS": "400"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for text in expected:
        assert text in done.stdout
    assert "Load the demo benchmark" not in done.stdout
