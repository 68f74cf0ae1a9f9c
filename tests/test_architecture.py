"""The import contracts of pyproject.toml ([tool.importlinter]) hold: apps depend
one way (api → annotation → construction → judging → benchmark), judging's run kinds
sit over the run lifecycle over the LLM layer, and no app has an import cycle. Modules
and packages keep to their budgets, and no test asserts on wall-clock time."""

import ast
from pathlib import Path

from django.conf import settings
from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports


def test_import_contracts_hold(capsys, monkeypatch):
    monkeypatch.chdir(Path(settings.BASE_DIR))
    status = lint_imports(
        config_filename=str(Path(settings.BASE_DIR) / "pyproject.toml"),
        no_cache=True,
        no_logo=True,
    )
    report = capsys.readouterr().out
    assert status == EXIT_STATUS_SUCCESS, report
    assert "BROKEN" not in report


MODULE_BUDGET = 800
PACKAGE_BUDGET = 6000


def _app_code(root: Path):
    for app in sorted(p.parent for p in root.glob("*/apps.py")):
        for path in app.rglob("*.py"):
            if "migrations" not in path.parts:
                yield path


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_over_its_budget():
    """docs/ARCHITECTURE.md: modules under ~800 lines (management commands too)."""
    root = Path(settings.BASE_DIR)
    over = {
        str(path.relative_to(root)): _lines(path)
        for path in _app_code(root)
        if _lines(path) > MODULE_BUDGET
    }
    assert not over, f"modules over {MODULE_BUDGET} lines: {over}"


def test_no_package_over_its_budget():
    """docs/ARCHITECTURE.md: a domain package (a room) under ~6,000 lines; an
    app's own modules, outside its sub-packages, count as one room."""
    root = Path(settings.BASE_DIR)
    sizes: dict[str, int] = {}
    for path in _app_code(root):
        room = path.parent
        while not (room / "__init__.py").exists():
            room = room.parent  # management/commands and the like
        if room.parent != root:
            # A sub-package counts everything under it.
            for package in path.parents:
                if package == root or package.parent == root:
                    break
                if (package / "__init__.py").exists():
                    key = str(package.relative_to(root))
                    sizes[key] = sizes.get(key, 0) + _lines(path)
        else:
            key = str(room.relative_to(root))
            sizes[key] = sizes.get(key, 0) + _lines(path)
    over = {name: n for name, n in sizes.items() if n > PACKAGE_BUDGET}
    assert not over, f"rooms over {PACKAGE_BUDGET:,} lines: {over}"


# -- no test asserts on wall-clock time ---------------------------------------------
#
# A duration depends on the machine's load: an assertion on one fails on a busy
# machine (or passes on a fast one) whatever the code does. Tests assert on order,
# counts and events instead; a bound on time, where one matters, is a deadline the
# code enforces and the test observes as an outcome (a status, a reason).

CLOCKS = {"time", "monotonic", "perf_counter", "process_time"}
CLOCKS |= {f"{name}_ns" for name in CLOCKS}


def _is_clock_call(node: ast.AST) -> bool:
    """time.monotonic(), loop.time(), perf_counter() and their kin."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in CLOCKS


def _root_name(target: ast.AST) -> str | None:
    while isinstance(target, ast.Subscript | ast.Attribute):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _clock_valued(node: ast.AST, clocks: set[str]) -> bool:
    """A clock reading, a name or entry holding one, or arithmetic over them
    (`int(time.time())`, `fed_at["x"] + 1`); not a set built by filtering on one."""
    if _is_clock_call(node):
        return True
    if isinstance(node, ast.Name | ast.Subscript | ast.Attribute):
        return _root_name(node) in clocks
    if isinstance(node, ast.BinOp):
        return _clock_valued(node.left, clocks) or _clock_valued(node.right, clocks)
    if isinstance(node, ast.UnaryOp):
        return _clock_valued(node.operand, clocks)
    if isinstance(node, ast.Call):
        return any(_clock_valued(arg, clocks) for arg in node.args)
    return False


def _is_duration(node: ast.AST, clocks: set[str], durations: set[str]) -> bool:
    """Does `node` hold a difference of clock readings (or a name holding one)?"""
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and part.id in durations:
            return True
        if (
            isinstance(part, ast.BinOp)
            and isinstance(part.op, ast.Sub)
            and (_clock_valued(part.left, clocks) or _clock_valued(part.right, clocks))
        ):
            return True
    return False


def wall_clock_assertions(source: str) -> list[int]:
    """Lines of `assert`s comparing a duration measured with a clock."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        clocks: set[str] = set()
        durations: set[str] = set()
        assignments = [
            node for node in ast.walk(function) if isinstance(node, ast.Assign)
        ]
        for _ in range(3):  # names fed by names fed by the clock
            for node in assignments:
                names = {_root_name(target) for target in node.targets} - {None}
                if _is_duration(node.value, clocks, durations):
                    durations |= names
                elif _clock_valued(node.value, clocks):
                    clocks |= names
        found += [
            node.lineno
            for node in ast.walk(function)
            if isinstance(node, ast.Assert)
            and _is_duration(node.test, clocks, durations)
        ]
    return sorted(set(found))


def test_the_detector_finds_elapsed_time_in_asserts():
    source = """
def test_a():
    started = time.monotonic()
    work()
    assert time.monotonic() - started < 1.5

def test_b():
    fed_at = {}
    t0 = perf_counter()
    fed_at["x"] = loop.time()
    took = fed_at["x"] - t0
    assert took < 0.5

def test_c():
    before = time.time()
    stamp = send()
    after = time.time()
    assert before <= stamp <= after
    assert calls == ["a", "b"]
    late = {r.key for r in requests if r.at > before} - recorded
    assert len(late) <= 2
"""
    assert wall_clock_assertions(source) == [5, 12]


def test_no_test_asserts_on_wall_clock_time():
    tests = Path(__file__).resolve().parent
    offenders = [
        f"{path.relative_to(tests.parent)}:{line}"
        for path in sorted(tests.rglob("*.py"))
        for line in wall_clock_assertions(path.read_text())
    ]
    assert offenders == [], "assertions on elapsed time: " + ", ".join(offenders)


def test_runs_end_only_through_the_lifecycle():
    """One run lifecycle to the end: a run kind says when its work is done
    (`RunKind.end_state`); writing the end, what follows it and the webhook event
    is `judging.runs.lifecycle`'s alone."""
    root = Path(settings.BASE_DIR)
    lifecycle_module = root / "judging" / "runs" / "lifecycle.py"
    elsewhere = [
        str(path.relative_to(root))
        for path in _app_code(root)
        if path != lifecycle_module
        and (
            "announce_end(" in path.read_text()
            or "def finish_if_done" in path.read_text()
        )
    ]
    assert not elsewhere, f"runs ended outside the lifecycle: {elsewhere}"
    from judging.runs.lifecycle import KINDS

    assert {kind.name for kind in KINDS} >= {
        "labelling",
        "evaluation",
        "translation",
        "variants",
        "construction",
    }
    assert all(callable(kind.end_state) for kind in KINDS)
