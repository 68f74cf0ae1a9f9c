"""File downloads every app's views share."""

import io
import zipfile
from collections.abc import Iterable, Iterator

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


class _Sink(io.RawIOBase):
    """A write-only, unseekable file: what zipfile writes is taken out as it
    comes. zipfile writes a data descriptor after each member instead of seeking
    back to its header."""

    def __init__(self):
        self.chunks: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        data = b"".join(self.chunks)
        self.chunks.clear()
        return data


def zip_stream(members: Iterable[tuple[str, bytes]]) -> Iterator[bytes]:
    """A zip archive of `members` (name, content), yielded member by member, so a
    download's first bytes leave before its last member is made and the whole
    archive is never held."""
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members:
            archive.writestr(name, content)
            yield sink.take()
    yield sink.take()


def zip_download(members: Iterable[tuple[str, bytes]], filename: str):
    """A zip attachment streamed as it is written (`zip_stream`)."""
    response = StreamingHttpResponse(
        zip_stream(members), content_type="application/zip"
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
