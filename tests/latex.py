"""Compile a LaTeX download with pdflatex, as a paper's author would: the packages
its header comment names, in a minimal article."""

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


def assert_compiles(latex: str) -> None:
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.fail("pdflatex is missing: `make test` installs it (Makefile: latex).")
    packages = sorted(set(re.findall(r"\\usepackage\{[^}]+\}", latex)))
    document = "\n".join(
        [
            "\\documentclass{article}",
            "\\usepackage[T1]{fontenc}",
            *packages,
            "\\begin{document}",
            latex,
            "\\end{document}",
        ]
    )
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "table.tex"
        source.write_text(document, encoding="utf-8")
        result = subprocess.run(
            [pdflatex, "-interaction=nonstopmode", "-halt-on-error", source.name],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
        )
        errors = [line for line in result.stdout.splitlines() if line.startswith("!")]
        assert result.returncode == 0, errors or result.stdout[-2000:]
        assert (Path(folder) / "table.pdf").exists()
