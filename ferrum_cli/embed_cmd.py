"""``ferrum embed``: sentence embeddings of one text per line, as a .npy file or JSON."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "embed", help="embed texts (one per line) with a sentence-embedding model",
        description="Embed each line of the input with a sentence-embedding model. Without --output "
                    "the vectors are printed as JSON; with --output they are saved as a float32 .npy "
                    "array of shape [lines, dim], in input order (empty lines are embedded too).")
    p.add_argument("--input", "-i", default="-", metavar="FILE", help="text file, one text per line; '-' = stdin (default)")
    p.add_argument("--output", "-o", type=Path, default=None, metavar="OUT.npy", help="save the vectors as .npy")
    p.add_argument("--json", action="store_true", help="print the vectors as JSON (the default without --output)")
    p.add_argument("--model", "-m", default=None, help="embedding model name or folder (default: all-MiniLM-L6-v2)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per core, up to 8)")
    p.add_argument("--int8", action="store_true", help="int8 linear layers on the CPU (faster, cosine ≥ 0.995 to fp32)")
    p.set_defaults(func=run)


def _read_lines(source: str) -> list[str]:
    from executors.core.errors import IOError_, NotFoundError

    if source == "-":
        text = sys.stdin.read()
    else:
        path = Path(source)
        if not path.is_file():
            raise NotFoundError(f"Input file {path} not found", "pass an existing text file, or '-' for stdin")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise IOError_(f"Cannot read {path}: {exc}", "the input must be a UTF-8 text file") from exc
    return text.splitlines()


def run(args) -> int:
    import numpy as np

    from executors.core.errors import InvalidParameterError, IOError_
    from executors.service import EMBEDDING

    from .engine import load, open_engine

    texts = _read_lines(args.input)
    if not texts:
        raise InvalidParameterError("The input has no lines to embed", "give one text per line")
    if args.output is not None and args.output.suffix != ".npy":
        raise InvalidParameterError(f"--output {args.output} must end in .npy", "name the output file like vectors.npy")
    device = "cpu" if args.int8 and args.device == "auto" else args.device
    with open_engine(args, device=device, embedding_model=args.model, embedding_int8=args.int8) as engine:
        model = load(engine, EMBEDDING)
        start = time.perf_counter()
        vectors = engine.search.embed(texts).result()
        seconds = time.perf_counter() - start
    if args.output is not None:
        try:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            np.save(args.output, vectors)
        except OSError as exc:
            raise IOError_(f"Cannot write {args.output}: {exc}", "check the folder and its permissions") from exc
    if args.json or args.output is None:
        json.dump({"model": model.model_id, "dim": int(vectors.shape[1]),
                   "embeddings": [[round(float(x), 7) for x in row] for row in vectors]}, sys.stdout)
        sys.stdout.write("\n")
    embedder = model.executor
    m = embedder.metrics()
    where = f" → {args.output}" if args.output is not None else ""
    print(f"Embedded {len(texts)} texts (dim {vectors.shape[1]}, {model.dtype}, {model.device}) "
          f"with {model.model_id} in {seconds:.2f} s (load {model.load_seconds:.2f} s); "
          f"{m.truncated_texts} truncated at {embedder.max_seq_length} tokens{where}", file=sys.stderr)
    return 0
