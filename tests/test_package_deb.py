"""The Debian package end to end: build it from this checkout (PyInstaller, then dpkg-deb), install it with
apt, run both programs from /usr/bin with a bare environment (``env -i PATH=/usr/bin:/bin``), open the
window under Xvfb, remove the package and check that nothing it installed is left.

Slow tier (the PyInstaller build takes minutes); needs root, dpkg/apt, xvfb-run and the packaging extra,
and is skipped with the reason otherwise. Per-user data the app writes (``~/.cache/ferrum-desktop``, …)
is removed afterwards when this test created it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from audio_fixtures import DEV_CLIP, read_reference
from speech_eval import corpus_wer

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "ferrum-desktop"
BARE_ENV = {"PATH": "/usr/bin:/bin"}
# where the package puts files, and where dpkg triggers of other packages may write caches
WATCHED = [Path("/opt"), Path("/usr/bin"), Path("/usr/share/applications"), Path("/usr/share/icons/hicolor"),
           Path("/usr/share/metainfo"), Path("/usr/share/doc")]
# rebuilt by the desktop-file-utils / hicolor-icon-theme triggers on every install or removal of any app
TRIGGER_CACHES = {"/usr/share/applications/mimeinfo.cache", "/usr/share/icons/hicolor/icon-theme.cache"}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(5400)]


def _installed() -> bool:
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", PACKAGE], capture_output=True, text=True, check=False)
    return done.returncode == 0 and "installed" in done.stdout.split()


def _why_not() -> str | None:
    if not sys.platform.startswith("linux"):
        return "the .deb is built and installed on Debian/Ubuntu only"
    for tool in ("dpkg-deb", "dpkg-query", "apt-get", "xvfb-run"):
        if shutil.which(tool) is None:
            return f"{tool} not found (Debian/Ubuntu with `make system-deps`)"
    if os.geteuid() != 0:
        return "installing a .deb needs root (CI runs as root)"
    if importlib.util.find_spec("PyInstaller") is None:
        return "PyInstaller missing: pip install -e '.[packaging]' (make test-all installs it)"
    if _installed():
        return f"{PACKAGE} is already installed here: the test would replace and then remove it"
    return None


_REASON = _why_not()
if _REASON:
    pytestmark.append(pytest.mark.skip(reason=_REASON))


def _listing() -> set[str]:
    paths = {str(p) for top in WATCHED for p in (top, *top.parents)}
    for top in WATCHED:
        for folder, dirs, files in os.walk(top):
            paths.update(os.path.join(folder, name) for name in dirs + files)
    return paths


def _user_dirs() -> list[Path]:
    import pwd

    home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    return [home / ".cache" / PACKAGE, home / ".local" / "share" / PACKAGE, home / ".config" / "Ferrum"]


def _bare(cmd: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    done = subprocess.run(["env", "-i", *(f"{k}={v}" for k, v in BARE_ENV.items()), *cmd], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{' '.join(cmd)} -> {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done


def _apt(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(["apt-get", "-y", "-q", *args], env=env, capture_output=True, text=True, timeout=1800,
                          check=False)


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> Path:
    """The .deb built from this checkout: the PyInstaller folder (packaging/dist, reusing its work cache),
    then ``build_deb.py`` into a throw-away folder."""
    out = tmp_path_factory.mktemp("deb")
    for cmd in ([sys.executable, str(ROOT / "packaging" / "build.py"), "--no-smoke"],
                [sys.executable, str(ROOT / "packaging" / "linux" / "build_deb.py"), "--out", str(out),
                 "--compression", "gzip"]):  # installs the same as xz, which only makes it smaller, in minutes
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=4000, check=False, cwd=ROOT)
        assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    print(done.stdout)
    [path] = out.glob(f"{PACKAGE}_*.deb")
    return path


@pytest.fixture(scope="module")
def installed(deb):
    """Install with apt (as a user would), yield (files the package owns, listing before); remove if a test
    left it installed."""
    before = _listing()
    users_before = {p for p in _user_dirs() if p.exists()}
    done = _apt("install", str(deb))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    owned = subprocess.run(["dpkg-query", "-L", PACKAGE], capture_output=True, text=True, check=True).stdout.split("\n")
    yield [p for p in owned if p.strip()], before
    if _installed():
        _apt("purge", PACKAGE)
    for path in _user_dirs():  # per-user data the app wrote during this test
        if path not in users_before and path.exists():
            shutil.rmtree(path)


def test_package_declares_its_system_libraries(deb):
    fields = subprocess.run(["dpkg-deb", "-f", str(deb), "Package", "Depends", "Installed-Size"],
                            capture_output=True, text=True, check=True).stdout
    depends = fields.split("Depends:", 1)[1].split("\n", 1)[0]
    for library in ("libportaudio2", "libxcb-cursor0", "libxkbcommon-x11-0", "libc6"):
        assert library in depends, depends
    contents = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    for path in ("./opt/ferrum-desktop/ferrum-gui", "./usr/bin/ferrum -> /opt/ferrum-desktop/ferrum",
                 "./usr/share/applications/ferrum-desktop.desktop", "./usr/share/metainfo/org.ferrum.desktop.metainfo.xml",
                 "./usr/share/icons/hicolor/256x256/apps/ferrum-desktop.png"):
        assert path in contents, path
    for unwanted in ("/torch/test/", "/torch/include/", "libtorch_cuda", "/nvidia/", "ctranslate2", "faster_whisper",
                     "/sentence_transformers/", "/pytest", "QtWebEngine", "QtQml", "QtQuick"):
        assert unwanted not in contents, unwanted
    installed_kib = int(fields.split("Installed-Size:", 1)[1].split()[0])
    print(f"\n{deb.name}: {deb.stat().st_size / 2**20:.0f} MiB, installed {installed_kib / 1024:.0f} MiB")


def test_cli_runs_from_usr_bin_with_a_bare_environment(installed, tmp_path):
    assert shutil.which("ferrum", path="/usr/bin") == "/usr/bin/ferrum"
    info = json.loads(_bare(["ferrum", "info", "--json"], tmp_path).stdout)
    assert info["versions"]["ferrum-desktop"] and info["versions"]["torch"]
    assert all(report["loaded"] for report in info["executors"].values()), info["executors"]
    assert not any(path.startswith(("/opt", "/usr")) for path in info["paths"].values()), info["paths"]
    whisper = info["executors"]["whisper"]["info"]["metadata"]
    if whisper["quantized"] == "int8":   # the bundle ships the source TorchScript compiles the decoder layer from
        assert whisper["decoder_step"]["one_token_layers"] == "torchscript", whisper["decoder_step"]

    clip = shutil.copy(DEV_CLIP, tmp_path / "austen.flac")
    _bare(["ferrum", "transcribe", "--threads", "1", "-o", str(tmp_path / "out"), str(clip)], tmp_path)
    text = (tmp_path / "out" / "austen.txt").read_text(encoding="utf-8")
    assert corpus_wer([read_reference(DEV_CLIP)], [text]) < 20.0, text


def test_window_opens_under_xvfb(installed, tmp_path):
    done = _bare(["xvfb-run", "-a", "ferrum-gui", "--quit-after-show"], tmp_path)
    assert "window shown in" in done.stdout, done.stdout + done.stderr


def test_removal_leaves_nothing_behind(installed):
    owned, before = installed
    done = _apt("purge", PACKAGE)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not _installed()
    assert not Path("/opt/ferrum-desktop").exists()
    left = [p for p in owned if os.path.lexists(p) and p not in before and p != "/."]  # dirs it shared stay
    assert not left, left[:20]
    new = sorted(_listing() - before - TRIGGER_CACHES)
    assert not new, new[:20]
