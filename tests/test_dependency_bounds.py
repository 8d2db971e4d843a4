"""The dependency bounds in pyproject.toml are the versions this suite runs on.

Every dependency has an upper bound, so a release nobody has tested (a torch without quantised tensors,
a transformers that renames a module) never reaches a fresh install unannounced. The floors are what CI
installs: the quick tier never runs on older versions, so an older floor would promise what no test ran.
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CORE = [Requirement(r) for r in PYPROJECT["dependencies"]]
EXTRAS = [Requirement(r) for group in PYPROJECT["optional-dependencies"].values() for r in group]
# Pinned to one minor release: the floor must be the release installed here.
PINNED_TO_TESTED = ("torch", "transformers")


def _applies(req: Requirement) -> bool:
    return req.marker is None or req.marker.evaluate({"extra": ""})


def _installed(name: str) -> Version | None:
    try:
        return Version(importlib.metadata.version(name))
    except importlib.metadata.PackageNotFoundError:
        return None


def _floor(req: Requirement) -> Version | None:
    floors = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
    return min(floors) if floors else None


@pytest.mark.parametrize("req", CORE + EXTRAS, ids=str)
def test_every_dependency_has_an_upper_bound(req):
    assert any(s.operator in ("<", "<=", "==", "~=") for s in req.specifier), (
        f"{req} has no upper bound: bound it at the newest version the tests ran on")


@pytest.mark.parametrize("req", [r for r in CORE if _applies(r)], ids=str)
def test_core_dependencies_are_installed_within_their_bounds(req):
    version = _installed(req.name)
    assert version is not None, f"{req.name} is a core dependency but is not installed"
    assert req.specifier.contains(version, prereleases=True), f"{req.name} {version} is outside {req.specifier}"


@pytest.mark.parametrize("name", PINNED_TO_TESTED)
def test_the_floor_is_the_release_the_suite_runs_on(name):
    req = next(r for r in CORE if r.name == name)
    floor, version = _floor(req), _installed(name)
    assert floor is not None and version is not None
    assert version.release[: len(floor.release)] == floor.release, (
        f"{name}: the suite runs on {version} but pyproject.toml's floor is {floor}")


def test_the_torch_installer_uses_pyprojects_bounds():
    script = (ROOT / "scripts" / "install_torch.sh").read_text()
    spec = re.search(r"^spec='([^']+)'", script, re.MULTILINE)
    assert spec is not None, "scripts/install_torch.sh names no torch spec"
    torch_req = next(r for r in CORE if r.name == "torch")
    assert Requirement(spec.group(1)).specifier == torch_req.specifier
    local = re.search(r"torch==([0-9.]+)", script)
    assert local is not None and torch_req.specifier.contains(Version(local.group(1)))
