"""Report tables as LaTeX: every symbol the report builders write becomes an ASCII
macro that pdflatex compiles, and the header names the packages the file needs."""

import ast
from pathlib import Path

import pytest

from judging.reporting.tables import Column, Table, latex_escape, latex_file

ROOT = Path(__file__).resolve().parents[2]
# Every module that writes titles, column labels, notes or cells of report tables.
BUILDERS = [
    "judging/leaderboard/building.py",
    "judging/leaderboard/diagnostics.py",
    "judging/leaderboard/binary_tables.py",
    "judging/leaderboard/presenting.py",
    "annotation/agreement/tables.py",
    "annotation/agreement/loading.py",
    "judging/labelling/report.py",
    "judging/translation/report.py",
    *sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "judging/reporting").glob("*.py")
    ),
]


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def produced_characters() -> set[str]:
    """Non-ASCII characters in the builders' string literals (docstrings and
    comments aside: they never reach a report)."""
    found = set()
    for path in BUILDERS:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in skip
            ):
                found |= {ch for ch in node.value if not ch.isascii()}
    return found


def test_every_character_the_builders_write_maps_to_ascii():
    produced = produced_characters()
    # The scan finds what the reports are known to write, so it is not vacuous.
    assert {"Δ", "±", "κ", "ρ", "α", "≤", "≥", "−", "–", "—", "·", "²"} <= produced
    unmapped = {ch for ch in produced if not latex_escape(ch).isascii()}
    assert not unmapped, f"add to judging/reporting/tables.py: {sorted(unmapped)}"


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("Δrank", r"$\Delta$rank"),
        ("±95% CI", r"$\pm$95\% CI"),
        ("κ linear", r"$\kappa$ linear"),
        ("Spearman ρ", r"Spearman $\rho$"),
        ("Krippendorff α (nominal)", r"Krippendorff $\alpha$ (nominal)"),
        ("|Δ| ≤ 1 (%)", r"$|\Delta|$ $\leq$ 1 (\%)"),
        ("Range ≥ 2 (%)", r"Range $\geq$ 2 (\%)"),
        ("(i − j)²", r"(i $-$ j)$^{2}$"),
        ("row − column", r"row $-$ column"),
        ("0–3", "0--3"),
        ("—", "---"),
        ("–", "--"),
        ("judge-a · v2", r"judge-a $\cdot$ v2"),
        ("3×3", r"3$\times$3"),
        ("✓ done…", r"\checkmark{} done\ldots{}"),
        ("Δ±", r"$\Delta\pm$"),  # one math group: never `$$`
        (
            "a_b & c #1 {x} ~^",
            r"a\_b \& c \#1 \{x\} \textasciitilde{}\textasciicircum{}",
        ),
        ("50$", r"50\$"),
        ("C:\\path", r"C:\textbackslash{}path"),
    ],
)
def test_latex_escape(text, latex):
    assert latex_escape(text) == latex


def test_text_outside_the_map_is_kept():
    assert latex_escape("通义千问 κ") == r"通义千问 $\kappa$"


def table(rows, **kwargs) -> Table:
    return Table(
        "t",
        "Δ by model",
        [Column("model", "Model"), Column("score", "±CI", "num")],
        rows,
        **kwargs,
    )


def test_header_names_the_packages():
    latex = table([["alpha", 0.5], ["beta", None]], notes=["κ − ρ"]).to_latex()
    assert latex.startswith("% Needs \\usepackage{booktabs}.\n\\begin{table}")
    assert latex.isascii()
    assert r"\caption{$\Delta$ by model}" in latex
    assert r"Model & $\pm$CI \\" in latex
    assert r"beta & -- \\" in latex  # a missing value
    assert r"\footnotesize $\kappa$ $-$ $\rho$" in latex
    checked = table([["alpha ✓", 0.5]]).to_latex()
    assert checked.startswith("% Needs \\usepackage{booktabs,amssymb}.\n")


def test_header_says_when_cjk_needs_xelatex():
    latex = table([["通义千问", 0.5]]).to_latex()
    header = latex.splitlines()[:2]
    assert header[0] == "% Needs \\usepackage{booktabs}."
    assert "XeLaTeX" in header[1] and "xeCJK" in header[1] and header[1].isascii()
    assert "通义千问 & 0.500" in latex


def test_low_support_mark_and_note_are_latex_not_escaped():
    latex = table(
        [["alpha", 0.5]], support=[[3]], min_support=5, notes=["Δ note."]
    ).to_latex()
    assert r"alpha & 0.500$^{\dagger}$ \\" in latex
    assert r"$\Delta$ note. $^{\dagger}$ fewer than 5 items." in latex
    assert "textbackslash" not in latex


def test_one_header_for_several_tables():
    latex = latex_file(table([["a", 1.0]]).latex_body(), table([]).latex_body())
    assert latex.count("% Needs") == 1 and latex.count("\\begin{table}") == 2


def test_latex_keeps_the_papers_precision_where_the_page_is_compact():
    """A heatmap cell shows 2 decimals on the page; the paper prints 3."""
    compact = Table(
        "t",
        "Final (SV) by capability",
        [
            Column("model", "Model"),
            Column("g0", "Safety", "num", 2, paper_digits=3),
            Column("share", "Perfect", "rate"),
            Column("move", "Δrank", "signed", 0),
        ],
        [["alpha", 2.08349, 0.5423, 3]],
    )
    assert compact.formatted_rows() == [["alpha", "2.08", "54.2%", "+3"]]
    assert "alpha & 2.083 & 54.2\\% & +3 \\\\" in compact.latex_body()
    assert compact.to_csv().splitlines()[1] == "alpha,2.08349,54.23,3.0"
