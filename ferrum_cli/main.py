"""``ferrum``: one sub-command per module; each module exposes ``register(subparsers)``.

Sub-command modules import their heavy dependencies inside their run function so that
``ferrum --help`` stays instant and never loads torch or Qt.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from executors.core.errors import FerrumError

COMMAND_MODULES = [
    "models_cmd", "info_cmd", "transcribe_cmd", "diarize_cmd", "batch_cmd", "history_cmd", "embed_cmd", "search_cmd",
    "dictate_cmd", "serve_cmd", "watch_cmd",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ferrum", description="Ferrum Desktop engine: local speech-to-text and embeddings")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"ferrum_cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ferrum_cli.{name}":
                continue  # command not built yet
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except FerrumError as exc:
        print(f"ferrum: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("ferrum: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
