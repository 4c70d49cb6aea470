"""TEST DOUBLE: a stand-in for vLLM's OpenAI-compatible server, run as `python -m vllm.entrypoints.openai.api_server`
with this folder's parent on PYTHONPATH, so the backend's managed vLLM (backend/model/vllm/) starts a real process
that answers over real HTTP. Nothing here is a language model: every answer is a scripted Kimina answer, and its
"tokens" are chunks of 4 characters. Standard library only.

What it copies from vLLM's source (vllm-project/vllm):
- 048027f vllm/entrypoints/openai/api_server.py `__main__`: the flags are parsed by an argparse parser
  (FlexibleArgumentParser over make_arg_parser), so an unknown flag is refused ("unrecognized arguments", exit 2);
  `--model` names the model (the `vllm serve MODEL` CLI takes it positionally instead).
- same file, setup_server: the socket is bound before the engine loads (issue 8204) and only listens once it has
  loaded, so /health is refused until then; SIGTERM during loading raises KeyboardInterrupt("terminated").
- --uds PATH (vllm-project/vllm PR #18097, May 2025; 0052233 vllm/entrypoints/openai/cli_args.py FrontendArgs.uds:
  "Unix domain socket path. If set, host and port arguments are ignored."; 0001948 api_server.py setup_server /
  create_server_unix_socket: an AF_UNIX SOCK_STREAM socket bound to PATH, logged as `unix:PATH`). Like vLLM it does
  not remove the socket file when it ends.
- same file, AuthenticationMiddleware: with --api-key, else the VLLM_API_KEY environment variable
  (`args.api_key or envs.VLLM_API_KEY`), every path under /v1 needs `Authorization: Bearer <key>`, else
  401 {"error": "Unauthorized"}; /health and /tokenize are not under /v1 and need none.
- vllm/entrypoints/utils.py log_non_default_args: its "non-default args" line prints the flags as given, --api-key
  included (releases before redact_sensitive_args), so a key passed as a flag lands in the log.
- 98b137c vllm/entrypoints/serve/instrumentator/health.py: GET /health answers 200 with an empty body.
- d7e5252 vllm/entrypoints/openai/engine/protocol.py ModelCard (GET /v1/models: owned_by "vllm", root,
  max_model_len) and UsageInfo; completion stream chunks as `text_completion` objects with `text`,
  `finish_reason`, then the usage chunk with empty choices when stream_options.include_usage, then [DONE].
- /tokenize answers {count, max_model_len, tokens, token_strs} (serve/tokenize), as the TS stand-in
  (test/model/standInOpenAIServer.ts) does for vLLM.
- its log lines are shaped like vLLM's (`INFO MM-DD hh:mm:ss [file.py:line] message`, the engine core's lines
  prefixed `(EngineCore_DP0 pid=N)`), and like vLLM it runs the engine core as a child process.

Knobs for the tests, read from the environment (vLLM has none of these):
  STAND_IN_VLLM_LOAD_SECONDS   how long "loading" takes before the port listens (default 0.5)
  STAND_IN_VLLM_FAIL_LOAD      a message: print it as an error while loading and exit 1
  STAND_IN_VLLM_DIE_ONCE       a file: while it exists, the next completion request removes it, streams a few
                               chunks, then the process dies (exit 1), as when the engine core crashes
  STAND_IN_VLLM_IGNORE_SIGTERM 1: ignore SIGTERM (a server stuck in shutdown), so only SIGKILL ends it
  STAND_IN_VLLM_CHUNK_DELAY_MS pause between streamed chunks (default 2)
"""

import argparse
import json
import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK_CHARS = 4


def log(level: str, where: str, message: str, prefix: str = "") -> None:
    stamp = time.strftime("%m-%d %H:%M:%S")
    stream = sys.stderr if level in ("ERROR", "WARNING") else sys.stdout
    print(f"{prefix}{level} {stamp} [{where}] {message}", file=stream, flush=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="vLLM OpenAI-Compatible RESTful API server (stand-in).")
    parser.add_argument("--model", required=True)
    parser.add_argument("--host", default=None)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--uds", default=None)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--served-model-name", nargs="+", default=None)
    parser.add_argument("--max-model-len", type=int, default=None)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def kimina_answer(prompt: str, sample: int, seed: int | None) -> str:
    """A scripted answer in the Kimina format: a think block, then the proof in a lean4 fence."""
    statement = "theorem stand_in : True"
    fence = prompt.rfind("```lean4\n")
    if fence >= 0:
        body = prompt[fence + len("```lean4\n"):]
        end = body.find("```")
        statement = (body[:end] if end >= 0 else body).strip()
        for tail in ("sorry", "by", ":="):  # `… := by sorry` → `…`
            statement = statement.removesuffix(tail).strip()
    return (
        f"<think>\nSample {sample} (seed {seed}) of the stand-in vLLM: the goal closes by simp.\n</think>\n\n"
        f"The proof closes the goal with `simp`.\n\n```lean4\n{statement} := by\n  simp\n```"
    )


class State:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.served = (args.served_model_name or [args.model])[0]
        self.max_model_len = args.max_model_len or 40960
        self.engine_core: subprocess.Popen[bytes] | None = None


def chunks(text: str) -> list[str]:
    return [text[i:i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)]


class UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    """HTTP over a Unix socket: http.server's handler with a threaded AF_UNIX server."""

    daemon_threads = True

    def get_request(self):  # type: ignore[override]
        request, _ = super().get_request()
        return request, ("unix", 0)  # the handler reads client_address[0]; an AF_UNIX peer has no address


def make_handler(state: State) -> type[BaseHTTPRequestHandler]:
    args = state.args

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def send_json(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def authorized(self) -> bool:
            key = args.api_key or os.environ.get("VLLM_API_KEY")
            if not key or not self.path.startswith("/v1"):
                return True
            scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
            if scheme.lower() == "bearer" and token == key:
                return True
            self.send_json(401, {"error": "Unauthorized"})
            return False

        def read_body(self) -> dict:
            length = int(self.headers.get("content-length") or 0)
            return json.loads(self.rfile.read(length) or b"{}")

        def do_GET(self) -> None:
            if not self.authorized():
                return
            if self.path == "/health":
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()
            elif self.path == "/v1/models":
                card = {"id": state.served, "object": "model", "created": int(time.time()), "owned_by": "vllm",
                        "root": args.model, "parent": None, "max_model_len": state.max_model_len, "permission": []}
                self.send_json(200, {"object": "list", "data": [card]})
            else:
                self.send_json(404, {"detail": "Not Found"})

        def do_POST(self) -> None:
            if not self.authorized():
                return
            body = self.read_body()
            if self.path == "/tokenize":
                text = body.get("prompt") or json.dumps(body.get("messages"))
                tokens = list(range(len(chunks(text))))
                self.send_json(200, {"count": len(tokens), "max_model_len": state.max_model_len,
                                     "tokens": tokens, "token_strs": None})
            elif self.path == "/v1/completions":
                self.completions(body)
            else:
                self.send_json(404, {"detail": "Not Found"})

        def completions(self, body: dict) -> None:
            model = body.get("model")
            if model != state.served:
                self.send_json(404, {"error": {"message": f"The model `{model}` does not exist.",
                                               "type": "NotFoundError", "param": "model", "code": 404}})
                return
            prompt = str(body.get("prompt", ""))
            n = int(body.get("n", 1))
            seed = body.get("seed")
            max_tokens = int(body.get("max_tokens") or 16)
            stops = body.get("stop") or []
            plans = []
            for k in range(n):
                text = kimina_answer(prompt, k, None if seed is None else int(seed) + k)
                finish = "stop"
                for stop in stops:
                    if stop in text:
                        text = text[:text.index(stop)]
                pieces = chunks(text)
                if len(pieces) > max_tokens:
                    pieces, finish = pieces[:max_tokens], "length"
                plans.append((pieces, finish))
            die = os.environ.get("STAND_IN_VLLM_DIE_ONCE")
            dying = bool(die) and os.path.exists(die or "")
            if dying:
                os.remove(die or "")
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            delay = float(os.environ.get("STAND_IN_VLLM_CHUNK_DELAY_MS", "2")) / 1000
            try:
                self.stream(plans, body, prompt, dying, delay)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (a cancelled request)
            self.close_connection = True

        def stream(self, plans: list, body: dict, prompt: str, dying: bool, delay: float) -> None:
            sent = 0

            def send(event: object) -> None:
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()

            for step in range(max(len(p[0]) for p in plans)):
                for index, (pieces, _) in enumerate(plans):
                    if step < len(pieces):
                        send({"id": "cmpl-standin", "object": "text_completion", "model": state.served,
                              "choices": [{"index": index, "text": pieces[step], "logprobs": None,
                                           "finish_reason": None}]})
                        sent += 1
                if dying and sent >= 3:
                    log("ERROR", "core_client.py:564", "Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.")
                    os._exit(1)
                time.sleep(delay)
            for index, (_, finish) in enumerate(plans):
                send({"id": "cmpl-standin", "object": "text_completion", "model": state.served,
                      "choices": [{"index": index, "text": "", "logprobs": None, "finish_reason": finish}]})
            if (body.get("stream_options") or {}).get("include_usage"):
                completion = sum(len(p[0]) for p in plans)
                prompt_tokens = len(chunks(prompt))
                send({"id": "cmpl-standin", "object": "text_completion", "model": state.served, "choices": [],
                      "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                                "total_tokens": prompt_tokens + completion}})
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


def main() -> None:
    args = parse_args(sys.argv[1:])
    state = State(args)
    log("INFO", "api_server.py:1885", f"vLLM API server version 0.33.0 (stand-in, a test double): model {args.model}")
    log("INFO", "utils.py:326", f"non-default args: {vars(args)}")
    # setup_server: bind before the engine loads; listen (and answer /health) only once it has loaded.
    if args.uds:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(args.uds)
        listen_address = f"unix:{args.uds}"
    else:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host or "", args.port))
        listen_address = f"http://{args.host or '0.0.0.0'}:{args.port}"

    def on_sigterm(*_: object) -> None:
        if state.engine_core:
            state.engine_core.terminate()
            state.engine_core.wait()
        log("INFO", "launcher.py:110", "Shutting down FastAPI HTTP server.")
        raise KeyboardInterrupt("terminated")

    if os.environ.get("STAND_IN_VLLM_IGNORE_SIGTERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    else:
        signal.signal(signal.SIGTERM, on_sigterm)
    try:
        # vLLM runs its engine core as a child process; the stand-in's only sleeps.
        state.engine_core = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
        core = f"(EngineCore_DP0 pid={state.engine_core.pid}) "
        log("INFO", "core.py:93", f"Initializing a V1 LLM engine with config: model={args.model!r}, "
            f"max_seq_len={state.max_model_len}, seed={args.seed}, "
            f"gpu_memory_utilization={args.gpu_memory_utilization}", core)
        load = float(os.environ.get("STAND_IN_VLLM_LOAD_SECONDS", "0.5"))
        log("INFO", "gpu_model_runner.py:2602", "Starting to load model (stand-in: no weights are read)...", core)
        time.sleep(load / 2)
        failure = os.environ.get("STAND_IN_VLLM_FAIL_LOAD")
        if failure:
            log("ERROR", "core.py:708", f"EngineCore failed to start: {failure}", core)
            state.engine_core.terminate()
            sys.exit(1)
        log("INFO", "default_loader.py:267", f"Loading weights took {load / 2:.2f} seconds", core)
        log("INFO", "gpu_model_runner.py:3625", "Graph capturing finished (stand-in)", core)
        time.sleep(load / 2)
        handler = make_handler(state)
        server: socketserver.TCPServer = (
            UnixHTTPServer(args.uds, handler, bind_and_activate=False)
            if args.uds
            else ThreadingHTTPServer((args.host or "", args.port), handler, bind_and_activate=False)
        )
        server.socket.close()
        server.socket = sock
        server.server_activate()
        log("INFO", "api_server.py:1971", f"Starting vLLM API server 0 on {listen_address}")
        log("INFO", "launcher.py:46", "Route: /health, Methods: GET")
        threading.Thread(target=server.serve_forever, daemon=True).start()
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
