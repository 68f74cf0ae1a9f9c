"""Instructions per request under valgrind's callgrind, for the benches that count
them (`i18n_bench.py --instructions`, `queue_instructions.py`): a folder for the
dumps, the marks library (`callgrind_marks.c`: one dump per marked request) and
the run of a bench script under callgrind."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

MARKS_SOURCE = Path(__file__).with_name("callgrind_marks.c")


def dumps_folder(path: str | None, prefix: str) -> Path:
    """`path` (or a new temporary folder), without an earlier run's dumps."""
    dumps = Path(path or tempfile.mkdtemp(prefix=prefix))
    dumps.mkdir(parents=True, exist_ok=True)
    for old in dumps.glob("callgrind.out.*"):
        old.unlink()
    return dumps


def marks_library(dumps: Path) -> Path:
    """callgrind_marks.c compiled into `dumps`; the bench loads it with ctypes."""
    library = dumps / "callgrind_marks.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-O2", "-o", library, MARKS_SOURCE], check=True
    )
    return library


def run(dumps: Path, script: Path, arguments: list[str], environ=os.environ) -> None:
    """`script arguments` under callgrind, instrumented only between marks, a dump
    per marked request in `dumps`. The same hash seed each run: set and dict
    orders, hence the work, repeat."""
    subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={dumps}/callgrind.out.%p",
            sys.executable,
            str(script),
            *arguments,
        ],
        check=True,
        env={**environ, "PYTHONHASHSEED": "0"},
        stderr=subprocess.DEVNULL,
    )
