"""Entry point of both frozen programs: started as ``ferrum-gui`` it runs the app, under any other name the CLI.

One script for both keeps a single PyInstaller analysis (torch + transformers take most of the build
time). The name it was started as picks the program: on Linux ``ferrum-gui`` is a link to ``ferrum``
(``argv[0]``), elsewhere its own executable.
"""

import multiprocessing
import os
import sys
from pathlib import Path


def main() -> int:
    multiprocessing.freeze_support()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the bundle carries its models; never reach the hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    name = Path(sys.argv[0] or sys.executable).stem.lower()
    if name.startswith("ferrum-gui"):
        from ferrum_gui.app import main as gui_main
        return gui_main()
    from ferrum_cli.main import main as cli_main
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
