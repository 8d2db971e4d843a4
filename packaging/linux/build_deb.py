"""Wrap the PyInstaller folder in a Debian package: ``ferrum-desktop_<version>_<arch>.deb``.

    python packaging/linux/build_deb.py [--bundle packaging/dist/ferrum-desktop] [--out packaging/dist]

Layout: the bundle under ``/opt/ferrum-desktop``; ``/usr/bin/ferrum`` and ``/usr/bin/ferrum-gui`` link to
its executables; the ``.desktop`` entry, hicolor icons and AppStream metainfo under ``/usr/share``.
Copies of system libraries that PyInstaller took from this machine (libxcb, libstdc++, GLib, …) are left
out when a Debian package ships the very same file: the package depends on that package instead, so the
distribution's security updates reach them. ``Depends:`` lists the Debian packages of every system library
the remaining ELF files load (``ldd`` and ``dpkg -S``) plus those loaded by name at run time (PortAudio).
Needs ``dpkg-deb``; validates with ``desktop-file-validate`` and ``appstreamcli`` where they are installed.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "pyinstaller"))

import spec_support as S  # noqa: E402

PACKAGE = S.APP_NAME                    # ferrum-desktop
PREFIX = Path("opt") / PACKAGE          # inside the package
METAINFO = HERE / f"{S.BUNDLE_ID}.metainfo.xml"
DESKTOP = S.RESOURCES / f"{PACKAGE}.desktop"
MAINTAINER = "Ferrum Desktop developers <dev@ferrum.local>"
# Loaded with dlopen/ctypes by name, so ldd cannot see them: sounddevice's PortAudio (dictation, playback).
RUNTIME_DEPENDS = ("libportaudio2",)
# how ``ldconfig -p`` names this machine's library ABI, per Debian architecture
LDCONFIG_ABI = {"amd64": "x86-64", "arm64": "AArch64"}
# Qt plugins for platforms and themes a desktop session may not have (Wayland compositors, GTK):
# a library missing for these is reported but does not fail the build.
OPTIONAL_PLUGIN_DIRS = ("platformthemes", "wayland", "egldeviceintegrations", "platforminputcontexts",
                        "xcbglintegrations", "tls", "networkinformation", "generic")
DESCRIPTION = """Local speech-to-text and document search
 Ferrum Desktop transcribes recordings (Whisper) and searches documents and
 transcripts by meaning (sentence embeddings), with the models running on this
 computer. It carries its own Python, CPU build of PyTorch, Qt and models
 (Whisper tiny.en, all-MiniLM-L6-v2, Silero VAD) under /opt/ferrum-desktop.
 .
 Commands: ferrum-gui (the desktop app) and ferrum (transcribe, embed, search,
 serve an OpenAI-compatible API)."""


@dataclass(frozen=True)
class DebResult:
    path: Path
    installed_kib: int
    depends: tuple[str, ...]
    unbundled_mib: float       # system-library copies left out in favour of Depends
    missing: tuple[str, ...]   # sonames no installed package provides (optional plugins only)


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def architecture() -> str:
    return _run(["dpkg", "--print-architecture"]).stdout.strip()


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as fp:
            return fp.read(4) == b"\x7fELF"
    except OSError:
        return False


def stage_tree(bundle: Path, root: Path) -> None:
    """The package's file tree under ``root`` (modes normalised: 0755 dirs and executables, 0644 data)."""
    shutil.copytree(bundle, root / PREFIX, symlinks=True)
    bin_dir = root / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    for exe in (S.CLI_EXE, S.GUI_EXE):
        (bin_dir / exe).symlink_to(Path("/") / PREFIX / exe)
    share = root / "usr" / "share"
    _install(DESKTOP, share / "applications" / DESKTOP.name)
    _install(METAINFO, share / "metainfo" / METAINFO.name)
    for png in S.ICON_PNGS:
        size = S._size(png)
        _install(png, share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{PACKAGE}.png")
    _install(S.RESOURCES / f"{PACKAGE}.svg", share / "icons" / "hicolor" / "scalable" / "apps" / f"{PACKAGE}.svg")
    doc = share / "doc" / PACKAGE
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(COPYRIGHT, encoding="utf-8")
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        executable = path.is_dir() or os.access(path, os.X_OK)
        path.chmod(0o755 if executable else 0o644)


def _install(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


def _owner(path: str) -> str | None:
    """The Debian package that ships ``path`` (tried also without /usr: merged-/usr systems), or None."""
    candidates = [path] + ([path[len("/usr"):]] if path.startswith("/usr/lib") else [])
    for candidate in candidates:
        done = subprocess.run(["dpkg", "-S", candidate], text=True, capture_output=True, check=False)
        if done.returncode == 0:
            return done.stdout.split(":", 1)[0].split(",")[0].strip()
    return None


def unbundle_system_libraries(root: Path) -> tuple[set[str], int]:
    """Remove top-level ``_internal`` libraries identical to a file a Debian package ships; returns those
    packages and the bytes saved. Libraries vendored by wheels (hashed names) never match."""
    internal = root / PREFIX / "_internal"
    cache = _run([shutil.which("ldconfig") or "/sbin/ldconfig", "-p"]).stdout
    abi = LDCONFIG_ABI.get(architecture(), "")
    system = {m.group(1): m.group(3) for m in re.finditer(r"^\s*(\S+) \(libc6(,[^)]*)?\) => (\S+)$", cache, re.M)
              if abi in (m.group(2) or "")}
    packages, saved = set(), 0
    for lib in sorted(internal.glob("*.so*")):
        source = system.get(lib.name)
        if lib.is_symlink() or source is None or not filecmp.cmp(lib, source, shallow=False):
            continue
        owner = _owner(str(Path(source).resolve()))
        if owner is None:
            continue
        packages.add(owner)
        saved += lib.stat().st_size
        lib.unlink()
    return packages, saved


def system_libraries(root: Path) -> tuple[dict[str, str], list[str]]:
    """({system library path: needed by}, [missing sonames]) over every ELF file of the staged bundle.

    The bundle's own folders go on ``LD_LIBRARY_PATH``, as PyInstaller's bootloader does at run time."""
    bundle = root / PREFIX
    elves = [p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink() and _is_elf(p)]
    lib_dirs = sorted({str(p.parent) for p in elves if ".so" in p.name})
    env = dict(os.environ, LD_LIBRARY_PATH=":".join(lib_dirs))
    found: dict[str, str] = {}
    missing: dict[str, str] = {}
    for elf in elves:
        out = subprocess.run(["ldd", str(elf)], env=env, text=True, capture_output=True, check=False).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))", line)
            if not m:
                continue
            soname, target = m.group(1), m.group(3)
            rel = str(elf.relative_to(bundle))
            if target is None:
                missing.setdefault(soname, rel)
            elif not Path(target).resolve().is_relative_to(bundle.resolve()):
                found.setdefault(str(Path(target).resolve()), rel)
    return found, [f"{so} (needed by {who})" for so, who in sorted(missing.items())]


def owning_packages(paths: list[str]) -> set[str]:
    packages = set()
    for path in paths:
        owner = _owner(path)
        if owner is None:
            raise SystemExit(f"no Debian package owns {path}, which the bundle loads: install it from a "
                             "package (or keep it in the bundle) and rebuild")
        packages.add(owner)
    return packages


def depends(root: Path) -> tuple[list[str], list[str]]:
    libs, missing = system_libraries(root)
    hard_missing = [m for m in missing if not any(f"/{d}/" in m for d in OPTIONAL_PLUGIN_DIRS)]
    if hard_missing:
        raise SystemExit("libraries the bundle needs are not installed here:\n  " + "\n  ".join(hard_missing))
    packages = owning_packages(sorted(libs)) | set(RUNTIME_DEPENDS)
    glibc = _run(["dpkg-query", "-W", "-f=${Version}", "libc6"]).stdout.split("-")[0]
    listed = [f"libc6 (>= {glibc})" if p == "libc6" else p for p in sorted(packages)]
    return listed, missing


def installed_kib(root: Path) -> int:
    """Installed-Size as dpkg counts it: KiB per file (rounded up) plus one per directory and link."""
    total = 0
    for path in root.rglob("*"):
        if path.relative_to(root).parts[0] == "DEBIAN":
            continue
        total += -(-path.lstat().st_size // 1024) if path.is_file() and not path.is_symlink() else 1
    return total


def write_control(root: Path, version: str, arch: str, deps: list[str]) -> int:
    size = installed_kib(root)
    control = (f"Package: {PACKAGE}\nVersion: {version}\nArchitecture: {arch}\nMaintainer: {MAINTAINER}\n"
               f"Installed-Size: {size}\nDepends: {', '.join(deps)}\nSection: sound\nPriority: optional\n"
               f"Description: {DESCRIPTION}\n")
    debian = root / "DEBIAN"
    debian.mkdir(mode=0o755)
    (debian / "control").write_text(control, encoding="utf-8")
    prerm = debian / "prerm"
    prerm.write_text(PRERM, encoding="utf-8")
    prerm.chmod(0o755)
    return size


def validate(root: Path) -> None:
    """The .desktop entry and the AppStream metainfo, with the distribution's validators where present."""
    share = root / "usr" / "share"
    checks = [(["desktop-file-validate", str(share / "applications" / DESKTOP.name)], "desktop-file-utils"),
              (["appstreamcli", "validate", "--no-net", str(share / "metainfo" / METAINFO.name)], "appstream")]
    for cmd, package in checks:
        if shutil.which(cmd[0]) is None:
            print(f"{cmd[0]} not found: skipped (apt-get install {package})")
            continue
        done = subprocess.run(cmd, text=True, capture_output=True, check=False)
        output = (done.stdout + done.stderr).strip()
        if done.returncode != 0 or "error:" in output:
            raise SystemExit(f"{' '.join(cmd[:2])} failed:\n{output}")
        print(f"{cmd[0]}: ok")


def build_deb(bundle: Path, out_dir: Path, compression: str = "xz") -> DebResult:
    if not (bundle / S.CLI_EXE).is_file():
        raise SystemExit(f"{bundle} holds no PyInstaller build: run packaging/build.py first")
    if shutil.which("dpkg-deb") is None:
        raise SystemExit("dpkg-deb not found: build the .deb on Debian or Ubuntu (apt-get install dpkg)")
    arch = architecture()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ferrum-deb-", dir=out_dir) as tmp:
        root = Path(tmp) / "root"
        stage_tree(bundle, root)
        validate(root)
        _, saved = unbundle_system_libraries(root)
        deps, missing = depends(root)
        size = write_control(root, S.VERSION, arch, deps)
        deb = out_dir / f"{PACKAGE}_{S.VERSION}_{arch}.deb"
        _run(["dpkg-deb", "--root-owner-group", f"-Z{compression}", "--build", str(root), str(deb)])
    return DebResult(deb, size, tuple(deps), saved / 2**20, tuple(missing))


COPYRIGHT = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ferrum-desktop

Files: *
Copyright: Ferrum Desktop developers
License: Apache-2.0
 On Debian systems the full text is in /usr/share/common-licenses/Apache-2.0.

Files: opt/ferrum-desktop/_internal/*
Copyright: their respective authors
License: various
 The bundle carries Python, PyTorch (BSD-3-Clause), Qt and PySide6 (LGPL-3),
 FFmpeg via PyAV (LGPL-2.1+), ONNX Runtime (MIT), transformers (Apache-2.0)
 and other Python packages, each under its own licence: see the *.dist-info
 folders and licence files next to them. Models: Whisper tiny.en (MIT),
 all-MiniLM-L6-v2 (Apache-2.0), Silero VAD (MIT).
"""

# Run before the files go (remove and upgrade): bytecode Python may have written next to sources kept in
# the bundle, so that dpkg can remove every folder it created.
PRERM = """#!/bin/sh
set -e
if [ -d /opt/ferrum-desktop ]; then
    find /opt/ferrum-desktop -depth -name __pycache__ -type d -exec rm -rf {} + 2>/dev/null || true
fi
exit 0
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "packaging" / "dist" / PACKAGE)
    parser.add_argument("--out", type=Path, default=ROOT / "packaging" / "dist")
    parser.add_argument("--compression", choices=["xz", "zstd", "gzip", "none"], default="xz")
    args = parser.parse_args(argv)
    result = build_deb(args.bundle, args.out, args.compression)
    for item in result.missing:
        print(f"note: optional plugin library not installed here: {item}")
    print(f"left out {result.unbundled_mib:.0f} MiB of system-library copies; Depends: {', '.join(result.depends)}")
    print(f"{result.path}: {result.path.stat().st_size / 2**20:.0f} MiB (.deb), "
          f"installed size {result.installed_kib / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
