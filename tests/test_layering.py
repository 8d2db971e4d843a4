"""The layers of the code: the import contracts in pyproject.toml ([tool.importlinter], checked by
``lint-imports``), plus what a static import graph cannot see: modules named in strings
(``importlib.import_module``) and what a start-up really loads (no Qt, and no torch until a model is
needed)."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QT_ONLY = ("PySide6", "shiboken6", "qasync", "pyqtgraph", "ferrum_gui")
HEAVY = ("torch", "transformers")  # loaded with the first model, not at start-up
ENGINE_PACKAGES = ("executors", "ferrum_cli", "ferrum_api")

_PROBE = """
import contextlib, io, sys
import executors, executors.models.store, executors.transcripts.history, ferrum_cli.main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        ferrum_cli.main.main(["--help"])
    except SystemExit:
        pass
assert "models" in out.getvalue(), out.getvalue()
roots = {m.split(".")[0] for m in sys.modules}
print("LOADED:" + ",".join(sorted(roots & {unwanted!r})))
"""


def test_importing_the_engine_and_cli_help_loads_no_qt_and_no_torch():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    probe = _PROBE.replace("{unwanted!r}", repr(set(QT_ONLY + HEAVY)))
    proc = subprocess.run([sys.executable, "-c", probe],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    line = next(l for l in proc.stdout.splitlines() if l.startswith("LOADED:"))
    assert line == "LOADED:", f"start-up imported what it should load later (or never): {line}"


def _lint_imports(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("lint-imports")
    command = [str(exe)] if exe.exists() else [shutil.which("lint-imports") or "lint-imports"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([*command, "--no-cache", "--no-logo", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_import_contracts_are_kept():
    """Engine free of Qt and front-ends, front-ends independent, the engine's own layers (pyproject.toml)."""
    proc = _lint_imports()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout
    kept = [line for line in proc.stdout.splitlines() if line.rstrip().endswith("KEPT")]
    assert len(kept) >= 3, proc.stdout


def test_lint_imports_reports_a_broken_contract(tmp_path):
    """The check can fail: a contract against an import the GUI really has (it hosts the API server)."""
    config = tmp_path / "probe.importlinter"
    config.write_text("[importlinter]\nroot_packages =\n    ferrum_gui\n    ferrum_api\n\n"
                      "[importlinter:contract:probe]\nname = probe: the GUI without the API server\n"
                      "type = forbidden\nsource_modules = ferrum_gui\nforbidden_modules = ferrum_api\n",
                      encoding="utf-8")
    proc = _lint_imports(str(config))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "BROKEN" in proc.stdout
    assert re.search(r"ferrum_gui\.\S+ -> ferrum_api", proc.stdout), proc.stdout  # names the import


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
