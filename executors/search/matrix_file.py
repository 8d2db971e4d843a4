"""A collection's int8 search matrix saved beside the database, so that opening it is a memory map.

The file is only a cache of the database: it carries the key of the database state it was made
from (the database's cache token, the collection's id and version, its chunk count and largest
chunk id), and a file whose key differs, or that cannot be read whole, is ignored and rebuilt.
Files are written under a temporary name, flushed to disk and renamed, so a crash leaves
either the old file or the new one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .vectors import VectorMatrix

_MAGIC = b"FERRUM-VECTORS-1\n"
_ALIGN = 64
_FIELDS = {"codes": np.int8, "scales": np.int16, "error": np.float32, "norm": np.float32, "ids": np.int64}


def save(path: Path, key: dict, matrix: VectorMatrix) -> None:
    rows = matrix.rows()
    header = json.dumps({"key": key, "dim": matrix.dim, "rows": len(rows["ids"]), "width": matrix.width}).encode()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(_MAGIC + len(header).to_bytes(4, "little") + header)
        for name in _FIELDS:
            f.write(b"\0" * (-f.tell() % _ALIGN))
            f.write(memoryview(np.ascontiguousarray(rows[name])).cast("B"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load(path: Path, key: dict) -> VectorMatrix | None:
    """The saved matrix when ``path`` holds one made from the database state ``key``, else None."""
    from .vectors import VectorMatrix  # torch: a process that only reads the rows uses read_rows

    saved = read_rows(path, key)
    if saved is None:
        return None
    try:
        return VectorMatrix.from_rows(*saved)
    except ValueError:
        return None


def read_rows(path: Path, key: dict) -> tuple[int, dict[str, np.ndarray]] | None:
    """(dim, rows as ``VectorMatrix.rows`` gives them) when ``path`` holds a matrix made from the
    database state ``key``, else None."""
    try:
        with open(path, "rb") as f:
            if f.read(len(_MAGIC)) != _MAGIC:
                return None
            header = json.loads(f.read(int.from_bytes(f.read(4), "little")))
            offset = f.tell()
        if header["key"] != key:
            return None
        n, width = header["rows"], header["width"]
        rows = {}
        for name, dtype in _FIELDS.items():
            offset += -offset % _ALIGN
            shape = (n, width) if name == "codes" else (n,)
            # copy-on-write: the matrix may tombstone and compact rows in memory, never in the file
            rows[name] = np.memmap(path, dtype=dtype, mode="c", offset=offset, shape=shape) if n else np.zeros(shape, dtype)
            offset += rows[name].nbytes
        if os.path.getsize(path) != offset or (n and (rows["ids"][0] < 0 or rows["ids"][-1] != key["max_id"])):
            return None
        return header["dim"], rows
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError):
        return None


def remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass  # a stale file is ignored on the next load anyway
