"""Downloads that are data, for a token as for the browser: the item export (CSV,
JSON Lines, the release, the Hugging Face release zip), made by the Export page's
own `export_file`, and a run's Inspect AI log, by its page's view. The OpenAPI
schema declares each as a file."""

from typing import Literal

from django.shortcuts import get_object_or_404
from ninja import Query, Router

from api.schemas import answers
from benchmark.hf_release import DEFAULT_LICENSE, LICENSES
from benchmark.models import Benchmark
from benchmark.roles import Role, role_required
from benchmark.views import export_file
from judging.interop import views as interop_views

router = Router(tags=["exports"])


def file_answer(what: str) -> dict:
    """`openapi_extra` for a route whose 200 is a file. Declared as
    application/octet-stream: generated clients read that as bytes, while for
    text/csv openapi-python-client 0.29 writes code that fails (BytesIO of str)
    and application/zip it leaves out."""
    binary = {"schema": {"type": "string", "format": "binary"}}
    return {
        "responses": {
            200: {
                "description": f"{what}, as an attachment",
                "content": {"application/octet-stream": binary},
            }
        }
    }


@router.get(
    "/benchmarks/{slug}/export",
    response=answers({}, 404, 422),
    openapi_extra=file_answer("The CSV (text/csv) or JSON Lines file"),
)
@role_required(Role.MANAGER)
def export_items(
    request,
    slug: str,
    format: Literal["csv", "jsonl"] = "jsonl",
    release: bool = Query(
        False, description="The release: approved renderings of active items only"
    ),
):
    """Every item, as the Export page's download (streamed, any size)."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return export_file(benchmark, format, release=release)


@router.get(
    "/benchmarks/{slug}/export/hf",
    response=answers({}, 404, 422),
    openapi_extra=file_answer("The zip (application/zip)"),
)
@role_required(Role.MANAGER)
def export_hf_release(
    request,
    slug: str,
    license: Literal[LICENSES] = DEFAULT_LICENSE,  # type: ignore[valid-type]
):
    """The release as a Hugging Face dataset repository, zipped (Parquet and the
    dataset card), as the Export page's download."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    return export_file(benchmark, "hf", license_id=license)


@router.get(
    "/runs/{run_id}/export/inspect",
    response=answers({}, 404),
    openapi_extra=file_answer("The Inspect AI log (a zip, .eval)"),
)
@role_required(Role.MANAGER)
def export_run_inspect(request, run_id: int):
    """An evaluation run as an Inspect AI `.eval` log, as its page's download."""
    return interop_views.export_run_inspect(request, run_id)
