"""The rotating log file under the data folder (in a fresh process: it installs root handlers)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def test_log_file_rotates_and_keeps_tracebacks(tmp_path):
    script = textwrap.dedent("""
        import logging
        from executors.core.errors import InternalError
        from executors.core.logs import BACKUPS, MAX_BYTES, log_error, setup_file_logging
        path = setup_file_logging("test-app", "1.2.3")
        try:
            int("x")
        except ValueError as exc:
            err = InternalError("Unexpected ValueError while parsing", "this is a bug")
            err.__cause__ = exc
        log_error(err)
        for i in range(MAX_BYTES // 100 * 2):
            logging.getLogger("noise").info("%05d %s", i, "x" * 90)
        print(path)
    """)
    env = dict(os.environ, FERRUM_DATA_DIR=str(tmp_path / "data"))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    log = tmp_path / "data" / "logs" / "ferrum.log"
    assert out.stdout.strip() == str(log)
    files = sorted(p.name for p in log.parent.iterdir())
    assert files[:2] == ["ferrum.log", "ferrum.log.1"] and len(files) <= 6
    assert all(p.stat().st_size <= (1 << 20) + 200 for p in log.parent.iterdir())
    first = "".join(p.read_text(encoding="utf-8") for p in sorted(log.parent.iterdir(), reverse=True))
    assert "test-app 1.2.3 started" in first
    assert "Unexpected ValueError while parsing" in first and "Traceback" in first and "invalid literal" in first
