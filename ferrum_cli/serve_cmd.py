"""``ferrum serve``: the OpenAI-compatible API without the app (models load once, in this process)."""

from __future__ import annotations

import sys

from executors.whisper.options import DEFAULT_BATCH_WINDOWS  # light: no torch


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "serve", help="serve the OpenAI-compatible API (transcriptions, translations, embeddings)",
        description="Serve /v1/audio/transcriptions, /v1/audio/translations, /v1/embeddings and /v1/models. "
                    "Listens on loopback only unless --allow-remote is given; requests need the bearer token "
                    "printed at start (generated once and kept in the data folder) unless --no-auth.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 = any free port)")
    p.add_argument("--token", default=None, help="bearer token to require (default: the saved token)")
    p.add_argument("--no-auth", action="store_true", help="accept requests without a token")
    p.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --host (prints a warning)")
    p.add_argument("--max-upload-mb", type=float, default=200, help="largest request body in MB (default 200)")
    p.add_argument("--model", default=None, help="Whisper model (default whisper-tiny.en)")
    p.add_argument("--embedding-model", default=None, help="embedding model (default all-MiniLM-L6-v2)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per core, up to 8)")
    p.add_argument("--batch-size", type=int, default=None, metavar="N",
                   help=f"30 s windows of an upload decoded together (default {DEFAULT_BATCH_WINDOWS}; 1 = one at a time)")
    p.add_argument("--no-history", action="store_true",
                   help="keep no transcription in the transcript history (by default each lands there, "
                        "unless its request sends the form field history=false)")
    p.set_defaults(func=run)


def run(args) -> int:
    import asyncio

    from executors.core.errors import InvalidParameterError
    from executors.service import MODEL_KINDS, EngineService
    from ferrum_api.server import ApiConfig, ApiServer, is_loopback

    from .engine import service_settings

    if args.max_upload_mb <= 0:
        raise InvalidParameterError("--max-upload-mb must be positive", "e.g. --max-upload-mb 200")
    if args.batch_size is not None and args.batch_size < 1:
        raise InvalidParameterError("--batch-size must be at least 1", "use 1 to decode one window at a time")
    config = ApiConfig(host=args.host, port=args.port, token=args.token, auth=not args.no_auth,
                       allow_remote=args.allow_remote, max_upload_bytes=int(args.max_upload_mb * 2**20),
                       save_history=not args.no_history,
                       **({} if args.batch_size is None else {"batch_size": args.batch_size}))
    service = EngineService(service_settings(args, whisper_model=args.model, embedding_model=args.embedding_model))
    server = ApiServer(service, config)  # refuses a remote host without --allow-remote
    if not is_loopback(args.host):
        print(f"ferrum: WARNING: listening on {args.host}: anyone who can reach this address "
              f"{'can' if args.no_auth else 'and has the token can'} use the models", file=sys.stderr)
    if args.no_auth:
        print("ferrum: WARNING: authentication is off (--no-auth)", file=sys.stderr)

    async def serve() -> None:
        url = await server.start()
        print(f"Ferrum API at {url}", flush=True)
        if server.token:
            print(f"Bearer token: {server.token}", flush=True)
        for kind in MODEL_KINDS:
            executor = await service.executor(kind)
            print(f"Loaded {kind} model {executor.model_id}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await server.stop()

    try:
        asyncio.run(serve())
    finally:
        service.close(wait=False)
    return 0
