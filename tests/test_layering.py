"""The engine, CLI and API never pull in Qt: checked at run time and in the source."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QT_ONLY = ("PySide6", "shiboken6", "qasync", "pyqtgraph", "ferrum_gui")
ENGINE_PACKAGES = ("executors", "ferrum_cli", "ferrum_api")

_PROBE = """
import contextlib, io, sys
import executors, executors.models.store, ferrum_cli.main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        ferrum_cli.main.main(["--help"])
    except SystemExit:
        pass
assert "models" in out.getvalue(), out.getvalue()
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {qt!r})
print("LOADED:" + ",".join(loaded))
"""


def test_importing_the_engine_and_cli_help_loads_no_qt():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", _PROBE.replace("{qt!r}", repr(set(QT_ONLY)))],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    line = next(l for l in proc.stdout.splitlines() if l.startswith("LOADED:"))
    assert line == "LOADED:", f"Qt-side modules were imported: {line}"


def test_ferrum_help_runs_as_a_module():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "ferrum_cli.main", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "models" in proc.stdout and "info" in proc.stdout


def _imported_roots(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
              and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return found


def test_no_engine_source_imports_qt():
    sources = [p for pkg in ENGINE_PACKAGES if (ROOT / pkg).is_dir() for p in sorted((ROOT / pkg).rglob("*.py"))]
    assert any(p.parts[-2] == "executors" for p in sources), "executors/ sources not found"
    offenders = []
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for lineno, module in _imported_roots(tree):
            if module.split(".")[0] in QT_ONLY:
                offenders.append(f"{path.relative_to(ROOT)}:{lineno} imports {module}")
    assert not offenders, "engine code must stay Qt-free:\n" + "\n".join(offenders)


def test_the_ast_check_catches_a_qt_import():
    source = "import os\nfrom PySide6.QtCore import QObject\nimport importlib\nimportlib.import_module('qasync')\n"
    tree = ast.parse(source)
    roots = {m.split(".")[0] for _, m in _imported_roots(tree)}
    assert {"PySide6", "qasync"} <= roots
