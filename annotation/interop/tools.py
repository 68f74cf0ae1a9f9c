"""One entry point per direction for the command and the campaign page: the files
a tool's export consists of, and the import of a tool's file."""

import json

from annotation.interop import argilla, label_studio
from annotation.interop.actions import GradeImportSummary, do_import_grades
from annotation.interop.grades import grading_tasks
from annotation.models import Campaign
from benchmark.validation import Problems

LABEL_STUDIO, ARGILLA = "label-studio", "argilla"
TOOLS = (LABEL_STUDIO, ARGILLA)


def _json(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1).encode() + b"\n"


def export_files(campaign: Campaign, tool: str) -> dict[str, bytes]:
    tasks = grading_tasks(campaign)
    if tool == LABEL_STUDIO:
        return {
            label_studio.TASKS_FILE: _json(label_studio.export_tasks(campaign, tasks)),
            label_studio.CONFIG_FILE: label_studio.label_config(campaign).encode(),
        }
    if tool == ARGILLA:
        return {
            argilla.RECORDS_FILE: _json(argilla.export_records(campaign, tasks)),
            argilla.SETTINGS_FILE: _json(argilla.dataset_settings(campaign)),
        }
    raise ValueError(f"Unknown tool {tool!r}; choose one of {TOOLS}.")


def import_file(campaign: Campaign, tool: str, data: bytes) -> GradeImportSummary:
    """Raises ImportRejected, with nothing written, when any grade has a problem."""
    problems = Problems()
    if tool == LABEL_STUDIO:
        grades = label_studio.read_export(data, problems)
    elif tool == ARGILLA:
        grades = argilla.read_records(data, problems)
    else:
        raise ValueError(f"Unknown tool {tool!r}; choose one of {TOOLS}.")
    return do_import_grades(campaign, grades, problems)
