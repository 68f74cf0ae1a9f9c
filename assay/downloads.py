"""File downloads every app's views share."""

from collections.abc import Iterable

from django.http import HttpResponse, StreamingHttpResponse

# Excel reads a CSV file without a byte-order mark as the local code page, which
# garbles Chinese, Russian and Vietnamese; with one it reads UTF-8. Other tools (and
# Assay's own importers) skip it.
UTF8_BOM = "\ufeff"


def csv_download(body: str | Iterable[str], filename: str):
    """A CSV attachment, UTF-8 with a BOM; `body` is the whole text or its lines
    (then streamed)."""
    if isinstance(body, str):
        response = HttpResponse(UTF8_BOM + body, content_type="text/csv; charset=utf-8")
    else:
        lines = _with_bom(body)
        response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _with_bom(lines: Iterable[str]):
    yield UTF8_BOM
    yield from lines
