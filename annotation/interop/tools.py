"""One entry point per direction for the command and the campaign pages: the files
a tool's export consists of, and the import of a tool's file with its annotators
mapped to Assay users."""

import json

from annotation.interop import argilla, label_studio
from annotation.interop.actions import (
    GradeImportSummary,
    do_import_grades,
    unmapped_annotators,
)
from annotation.interop.annotators import read_label_studio_users
from annotation.interop.grades import ImportedGrade, grading_tasks
from annotation.models import Campaign
from benchmark.validation import Problems

LABEL_STUDIO, ARGILLA = "label-studio", "argilla"
TOOLS = (LABEL_STUDIO, ARGILLA)


def _json(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1).encode() + b"\n"


def export_files(
    campaign: Campaign, tool: str, annotators: str = label_studio.SYNTHETIC_EMAIL
) -> dict[str, bytes]:
    """{path: content}; `annotators` says how Label Studio gets people's grades."""
    tasks = grading_tasks(campaign)
    if tool == LABEL_STUDIO:
        files = {
            label_studio.TASKS_FILE: _json(
                label_studio.export_tasks(campaign, tasks, annotators)
            ),
            label_studio.CONFIG_FILE: label_studio.label_config(campaign).encode(),
        }
        if annotators == label_studio.SYNTHETIC_EMAIL:
            files[label_studio.USERS_FILE] = _json(label_studio.export_users(tasks))
        return files
    if tool == ARGILLA:
        return {
            argilla.RECORDS_FILE: _json(argilla.export_records(campaign, tasks)),
            argilla.SETTINGS_FILE: _json(argilla.dataset_settings(campaign)),
            argilla.DATASET_FILE: _json(argilla.dataset_model(campaign)),
        }
    raise ValueError(f"Unknown tool {tool!r}; choose one of {TOOLS}.")


def read_file(
    tool: str, data: bytes, users_file: bytes | None, problems: Problems
) -> tuple[list[ImportedGrade], dict[str, str]]:
    """The grades a tool's file holds, and {annotator key: e-mail} read from
    Label Studio's users list when one is given."""
    if tool == LABEL_STUDIO:
        known = read_label_studio_users(users_file, problems) if users_file else {}
        return label_studio.read_export(data, problems), known
    if tool == ARGILLA:
        return argilla.read_records(data, problems), {}
    raise ValueError(f"Unknown tool {tool!r}; choose one of {TOOLS}.")


def annotators_to_map(
    tool: str, data: bytes, users_file: bytes | None, mapping: dict[str, str]
) -> tuple[dict[str, int], dict[str, str], Problems]:
    """What the mapping step shows: {key: grades} of the annotators no Assay user
    answers to yet, {key: e-mail} from the users list, and the file's problems."""
    problems = Problems()
    grades, known = read_file(tool, data, users_file, problems)
    return unmapped_annotators(grades, known | mapping), known, problems


def import_file(
    campaign: Campaign,
    tool: str,
    data: bytes,
    *,
    users_file: bytes | None = None,
    mapping: dict[str, str] | None = None,
) -> GradeImportSummary:
    """Raises ImportRejected, with nothing written, when any grade has a problem.
    `mapping` ({annotator key: Assay username or e-mail}) wins over the users
    list."""
    problems = Problems()
    grades, known = read_file(tool, data, users_file, problems)
    return do_import_grades(campaign, grades, problems, known | (mapping or {}))
