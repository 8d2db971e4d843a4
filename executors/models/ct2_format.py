"""Reader for CTranslate2's ``model.bin`` (binary version 6), with numpy only.

Layout (little endian), as written by ctranslate2's ``ModelSpec.save``:
``u32 version``, ``str spec_name``, ``u32 spec_revision``, ``u32 n_vars``, then per variable
``str name``, ``u8 rank``, ``u32 dim`` × rank, ``u8 dtype_id``, ``u32 n_bytes``, raw bytes;
then ``u32 n_aliases`` and per alias ``str alias``, ``str target``. A ``str`` is a ``u16``
length (including a trailing NUL) followed by the UTF-8 bytes and the NUL.

ctranslate2 itself is a test-only dependency; the app reads its files with this module.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..core.errors import InvalidFormatError, UnsupportedError

SUPPORTED_VERSION = 6
# Index = dtype id in the file. bfloat16 has no numpy dtype: it is widened to float32 on read.
_DTYPES = ("float32", "int8", "int16", "int32", "float16", "bfloat16")


@dataclass
class Ct2Model:
    spec_name: str
    spec_revision: int
    variables: dict[str, np.ndarray]
    aliases: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> np.ndarray:
        """The variable ``name`` (following aliases); int8/int16 weights come back dequantized to float32."""
        name = self.aliases.get(name, name)
        try:
            value = self.variables[name]
        except KeyError:
            raise InvalidFormatError(f"CTranslate2 model has no variable {name!r}",
                                     "the model.bin does not match the expected spec; re-export it") from None
        scale = self.variables.get(f"{name}_scale")
        if scale is None or value.dtype.kind != "i":
            return value
        # Quantized as round(w * scale), scale per output row (int8) or one scalar (int16).
        scale = scale.astype(np.float32).reshape((-1,) + (1,) * (value.ndim - 1)) if scale.ndim else scale
        return value.astype(np.float32) / scale

    @property
    def is_quantized(self) -> bool:
        return any(name.endswith("_scale") for name in self.variables)

    def has(self, name: str) -> bool:
        return self.aliases.get(name, name) in self.variables


class _Cursor:
    def __init__(self, buf, path: Path):
        self.buf = buf
        self.pos = 0
        self.path = path

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise InvalidFormatError(f"{self.path} is truncated at byte {self.pos}",
                                     "the file is incomplete; copy or download it again")
        values = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return values if len(values) > 1 else values[0]

    def string(self) -> str:
        length = self.take("<H")
        raw = bytes(self.buf[self.pos:self.pos + length])
        self.pos += length
        return raw.rstrip(b"\0").decode("utf-8")

    def array(self, dtype: str, shape: tuple[int, ...], n_bytes: int) -> np.ndarray:
        if self.pos + n_bytes > len(self.buf):
            raise InvalidFormatError(f"{self.path} is truncated inside a variable",
                                     "the file is incomplete; copy or download it again")
        raw = self.buf[self.pos:self.pos + n_bytes]
        self.pos += n_bytes
        if dtype == "bfloat16":
            halves = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            return halves.view(np.float32).reshape(shape)
        return np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape).copy()


def read_ct2_model(path: str | Path) -> Ct2Model:
    """Read every variable of a CTranslate2 ``model.bin`` into numpy arrays (copies, file closed)."""
    path = Path(path)
    with open(path, "rb") as fp, mmap.mmap(fp.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        cur = _Cursor(memoryview(buf), path)
        try:
            return _parse(cur, path)
        finally:
            cur.buf.release()


def _parse(cur: _Cursor, path: Path) -> Ct2Model:
    version = cur.take("<I")
    if version != SUPPORTED_VERSION:
        raise UnsupportedError(f"{path} is CTranslate2 binary version {version}; only {SUPPORTED_VERSION} is supported",
                               "re-convert the model with ctranslate2 >= 3")
    spec_name = cur.string()
    revision = cur.take("<I")
    variables: dict[str, np.ndarray] = {}
    for _ in range(cur.take("<I")):
        name = cur.string()
        rank = cur.take("<B")
        shape = tuple(int(cur.take("<I")) for _ in range(rank))
        dtype_id = cur.take("<B")
        if dtype_id >= len(_DTYPES):
            raise InvalidFormatError(f"{path}: variable {name!r} has unknown dtype id {dtype_id}",
                                     "the file may be corrupt or from a newer CTranslate2")
        n_bytes = cur.take("<I")
        variables[name] = cur.array(_DTYPES[dtype_id], shape, n_bytes)
    aliases = {}
    for _ in range(cur.take("<I")):
        alias = cur.string()
        aliases[alias] = cur.string()
    return Ct2Model(spec_name, revision, variables, aliases)
