"""``ferrum info [--json]``: devices, library versions, the model store and each executor's ModelInfo,
capabilities and status.

Loading the executors takes a few seconds (the bundled models are small); ``--no-load`` skips it.
"""

from __future__ import annotations

import json
import platform
from dataclasses import asdict, is_dataclass
from enum import Enum


def register(subparsers) -> None:
    p = subparsers.add_parser("info", help="show devices, versions, models and executor capabilities",
                              description="Show what Ferrum can run on this machine.")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.add_argument("--no-load", action="store_true", help="do not load the executors (faster)")
    p.add_argument("--device", default="auto", help="device to load the executors on (default: auto)")
    p.set_defaults(func=run)


def _plain(value):
    """Dataclasses and enums → JSON-ready values."""
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _versions() -> dict:
    import importlib.metadata as md

    versions = {"python": platform.python_version()}
    for dist in ("torch", "transformers", "safetensors", "tokenizers", "numpy", "ferrum-desktop"):
        try:
            versions[dist] = md.version(dist)
        except md.PackageNotFoundError:
            versions[dist] = None
    return versions


def _devices() -> dict:
    from executors.core.device import available_devices, default_threads, resolve_device

    auto = resolve_device("auto")
    return {"available": available_devices(), "auto": auto.name, "auto_dtype": auto.dtype_name,
            "threads": default_threads()}


def _executor_report(kind: str, device: str, skip: bool) -> dict:
    from executors.core.errors import FerrumError, wrap_unexpected
    from executors.models.store import resolve_model
    from executors.service import ServiceSettings, load_model

    settings = ServiceSettings(device=device)
    ref = settings.model_ref(kind)
    report = {"model": ref, "loaded": False}
    try:
        resolved = resolve_model(ref, kind=kind)
        report["path"] = str(resolved.path)
        if skip:
            return report
        executor = load_model(kind, settings).executor
        report.update(loaded=True, device=executor.device.name, info=_plain(executor.info()),
                      capabilities=_plain(executor.capabilities()), status=_plain(executor.status()))
    except ImportError as exc:
        report["error"] = f"executor not available: {exc}"
    except Exception as exc:  # noqa: BLE001 - info reports every failure instead of stopping
        err = exc if isinstance(exc, FerrumError) else wrap_unexpected(exc, f"loading the {kind} executor")
        report["error"] = str(err)
    return report


def collect(device: str = "auto", load: bool = True) -> dict:
    from executors.core.paths import cache_dir, data_dir
    from executors.models.store import list_models

    return {
        "versions": _versions(),
        "devices": _devices(),
        "paths": {"data_dir": str(data_dir()), "cache_dir": str(cache_dir())},
        "models": [e.to_dict() for e in list_models()],
        "executors": {
            "whisper": _executor_report("whisper", device, not load),
            "embedding": _executor_report("embedding", device, not load),
        },
    }


def _print_text(info: dict) -> None:
    from .models_cmd import human_size

    print("Versions:  " + ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v))
    dev = info["devices"]
    print(f"Devices:   {', '.join(dev['available'])} "
          f"(auto: {dev['auto']}, {dev['auto_dtype']}, {dev['threads']} threads)")
    print(f"Data:      {info['paths']['data_dir']}")
    print(f"Cache:     {info['paths']['cache_dir']}")
    print("Models:")
    for m in info["models"]:
        print(f"  {m['name']:<20} {m['kind']:<9} {m['source']:<8} {human_size(m['size_bytes']):>9}  {m['path']}")
    print("Executors:")
    for name, rep in info["executors"].items():
        if "error" in rep:
            print(f"  {name:<9} {rep['model']}: error: {rep['error']}")
        elif not rep["loaded"]:
            print(f"  {name:<9} {rep['model']}: not loaded ({rep.get('path', '')})")
        else:
            caps, status, model = rep["capabilities"], rep["status"], rep["info"]
            print(f"  {name:<9} {rep['model']} ({model['metadata'].get('architecture', model['model_type'])}, "
                  f"{model['num_parameters'] / 1e6:.1f} M parameters) on {rep['device']}: {status['state']}; max batch "
                  f"{caps['max_batch_size']}, max sequence {caps['max_sequence_length']}, "
                  f"dtypes {', '.join(caps['supported_dtypes'])}, devices {', '.join(caps['supported_devices'])}")
            if model["metadata"].get("int8_fallback"):
                print(f"  {'':<9} not int8: {model['metadata']['int8_fallback']}")


def run(args) -> int:
    info = collect(args.device, load=not args.no_load)
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        _print_text(info)
    return 1 if any("error" in rep for rep in info["executors"].values()) else 0
