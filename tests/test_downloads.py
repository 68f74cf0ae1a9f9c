"""assay.downloads.zip_stream: a zip written member by member, read back whole."""

import io
import zipfile

from assay.downloads import zip_stream


def test_a_streamed_zip_reads_back_member_by_member():
    members = [("a.txt", b"alpha" * 1000), ("dir/b.json", '{"知": 1}'.encode())]
    chunks = list(zip_stream(iter(members)))
    # Each member leaves as it is written, before the next one is made.
    assert len(chunks) == len(members) + 1 and all(chunks[:-1])
    archive = zipfile.ZipFile(io.BytesIO(b"".join(chunks)))
    assert archive.testzip() is None
    assert [(name, archive.read(name)) for name in archive.namelist()] == members
