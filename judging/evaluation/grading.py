"""A binary run's MC/TF answers graded by the rules (judging.evaluation.choices):
one as it arrives (`grade_answer`), or stored replies in bulk (`grade_stored_answers`,
read by COPY, written in one INSERT), as `AnswerGrade` rows."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.db.models import F

from benchmark.models import Rendering
from judging.evaluation.choices import (
    CHOICE_FORMATS,
    answer_key,
    read_answer,
    read_answers,
)
from judging.evaluation.models import (
    AnswerGrade,
    EvaluationRun,
    Response,
)


def grade_answer(response: Response) -> AnswerGrade:
    """The grade of a stored MC/TF answer (unsaved); an empty or invalid one is
    "no answer found"."""
    item = response.item
    key = answer_key(
        item.format,
        n_options=len(response.rendering.options) if response.rendering else 0,
        correct_options=item.correct_options,
        correct_answer=item.correct_answer,
        multiple_answers=item.multiple_answers,
    )
    if response.status != Response.Status.ANSWERED:
        return AnswerGrade(response=response, grade=AnswerGrade.Grade.NONE)
    answer, grade = read_answer(response.text, key)
    return AnswerGrade(response=response, extracted=answer[:20], grade=int(grade))


def grade_stored_answers(responses) -> int:
    """Read and grade the stored MC/TF answers among `responses` (a queryset) and
    write their AnswerGrade rows; returns how many. One query for the replies,
    one for the answer keys, the rules over all of them at once
    (choices.read_answers), one COPY on PostgreSQL. Re-grading after the rules
    change is the same call (the rows are replaced). The runs' scores version moves
    with it, so reports cached on it are built afresh."""
    graded = stored_answer_grades(responses)
    if graded is None:
        return 0
    # What cached reports read changes (the robustness report reads grades).
    runs = list(
        EvaluationRun.objects.filter(pk__in=responses.values("run_id")).values_list(
            "pk", flat=True
        )
    )
    with transaction.atomic():
        write_grades(graded)
        EvaluationRun.objects.filter(pk__in=runs).update(
            scores_version=F("scores_version") + 1
        )
    return len(graded.ids)


@dataclass(frozen=True)
class StoredGrades:
    """What the rules make of stored replies, before it is written."""

    ids: list[int]  # response ids
    answers: list[str]  # what was read
    grades: list[int]
    regrade: bool  # some of the responses have a grade already


def stored_answer_grades(responses) -> StoredGrades | None:
    """The grades of the stored MC/TF answers among `responses`; None if there
    are none. Reads, writes nothing."""
    query = (
        responses.filter(
            item__format__in=CHOICE_FORMATS,
            rendering__isnull=False,
            status__in=[
                Response.Status.ANSWERED,
                Response.Status.EMPTY,
                Response.Status.INVALID,
            ],
        )
        .order_by()
        .values_list("pk", "item_id", "rendering_id", "status", "text")
    )
    # The cursor returns the rows without Django's per-row conversion (every column
    # is a plain number or text), which at a study's scale costs more than the
    # query.
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        return None
    # One answer key per rendering (its item's key, its option count), read by
    # subquery rather than a list of thousands of ids.
    keys = {
        pk: answer_key(
            item_format,
            n_options=len(options),
            correct_options=correct_options,
            correct_answer=correct_answer,
            multiple_answers=multiple,
        )
        for pk, options, item_format, correct_options, correct_answer, multiple in (
            Rendering.objects.filter(pk__in=query.values("rendering_id")).values_list(
                "pk",
                "options",
                "item__format",
                "item__correct_options",
                "item__correct_answer",
                "item__multiple_answers",
            )
        )
    }
    answered = Response.Status.ANSWERED
    answers, grades = read_answers(
        [text if status == answered else "" for _, _, _, status, text in rows],
        [keys[rendering_id] for _, _, rendering_id, _, _ in rows],
    )
    return StoredGrades(
        ids=[row[0] for row in rows],
        answers=[answer[:20] for answer in answers],
        grades=grades.tolist(),
        regrade=AnswerGrade.objects.filter(response__in=query.values("pk")).exists(),
    )


def write_grades(graded: StoredGrades) -> None:
    """Write the grades: on PostgreSQL by COPY, straight into the table for a
    first grading, through a scratch table and one INSERT … ON CONFLICT when some
    rows exist (`regrade`); no model object and no quoted parameter per row."""
    ids, answers, grades = graded.ids, graded.answers, graded.grades
    if connection.vendor == "postgresql":
        # What was read is letters, "true" or "false": no COPY escaping needed.
        payload = "".join(
            f"{pk}\t{answer}\t{grade}\n"
            for pk, answer, grade in zip(ids, answers, grades, strict=True)
        )
        table = AnswerGrade._meta.db_table
        with transaction.atomic(), connection.cursor() as cursor:
            if not graded.regrade:
                try:
                    with (
                        transaction.atomic(),
                        cursor.copy(
                            f"COPY {table} (response_id, extracted, grade) FROM STDIN"
                        ) as copy,
                    ):
                        copy.write(payload)
                    return
                except IntegrityError:
                    pass  # graded meanwhile (a chunk run twice): replace them
            cursor.execute(
                "CREATE TEMPORARY TABLE graded_answers "
                "(response_id bigint, extracted text, grade smallint) ON COMMIT DROP"
            )
            with cursor.copy("COPY graded_answers FROM STDIN") as copy:
                copy.write(payload)
            cursor.execute(
                f"INSERT INTO {table} (response_id, extracted, grade) "
                "SELECT response_id, extracted, grade FROM graded_answers "
                "ON CONFLICT (response_id) DO UPDATE "
                "SET extracted = EXCLUDED.extracted, grade = EXCLUDED.grade"
            )
        return
    save_grades(
        [
            AnswerGrade(response_id=pk, extracted=answer, grade=grade)
            for pk, answer, grade in zip(ids, answers, grades, strict=True)
        ]
    )


def save_grades(rows: list[AnswerGrade]) -> None:
    AnswerGrade.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["response"],
        update_fields=["extracted", "grade"],
        batch_size=500,
    )
