"""The import contracts of pyproject.toml ([tool.importlinter]) hold: apps depend
one way (api → annotation → construction → judging → benchmark), judging's run kinds
sit over the run lifecycle over the LLM layer, and no app has an import cycle."""

from pathlib import Path

from django.conf import settings
from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports


def test_import_contracts_hold(capsys, monkeypatch):
    monkeypatch.chdir(Path(settings.BASE_DIR))
    status = lint_imports(
        config_filename=str(Path(settings.BASE_DIR) / "pyproject.toml"),
        no_cache=True,
        no_logo=True,
    )
    report = capsys.readouterr().out
    assert status == EXIT_STATUS_SUCCESS, report
    assert "BROKEN" not in report
