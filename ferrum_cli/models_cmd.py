"""``ferrum models [--json]`` lists the local models; ``ferrum models import PATH`` adds a CT2 folder."""

from __future__ import annotations

import json
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser("models", help="list local models or import a CTranslate2 Whisper folder",
                              description="List bundled, imported and cached models, or import a model folder.")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(func=run_list)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    imp = actions.add_parser("import", help="convert a CTranslate2 (faster-whisper) Whisper folder once and name it",
                             description="Convert a faster-whisper model folder (model.bin, config.json, "
                                         "tokenizer.json) into the model cache; use it afterwards by its name.")
    imp.add_argument("path", type=Path, metavar="PATH", help="the CTranslate2 Whisper folder")
    imp.add_argument("--name", default=None, help="name to use it by (default: the folder name)")
    imp.add_argument("--json", action="store_true", help="print machine-readable JSON")
    imp.set_defaults(func=run_import)


def human_size(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def run_list(args) -> int:
    from executors.models.store import list_models

    entries = list_models()
    if args.json:
        print(json.dumps([e.to_dict() for e in entries], indent=2))
        return 0
    if not entries:
        print("no models found (reinstall ferrum-desktop to restore the bundled ones)")
        return 0
    width = max(len(e.name) for e in entries)
    for e in entries:
        state = "" if e.ready else "  (converted on first use)"
        print(f"{e.name:<{width}}  {e.kind:<9}  {e.source:<8}  {human_size(e.size_bytes):>9}  {e.path}{state}")
    return 0


def run_import(args) -> int:
    from executors.models.cache import folder_size
    from executors.models.store import import_model

    resolved = import_model(args.path, args.name)
    if args.json:
        print(json.dumps({"name": resolved.model_id, "path": str(resolved.path), "kind": resolved.kind,
                          "size_bytes": folder_size(resolved.path), "source": str(Path(args.path).resolve())}))
    else:
        print(f"imported {resolved.model_id}: {resolved.path}")
        print(f"use it with --model {resolved.model_id}")
    return 0
