"""A scripted stand-in of an OpenAI-compatible model API on loopback, which
Agent Zero reaches through LiteLLM as it reaches any "Other OpenAI
compatible" provider. The chat model answers with the test's script (one
tool call per step, or a `Refusal`) and every request is recorded; the
utility model answers briefly."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Refusal:
    """A script step the API refuses (HTTP 400, which Agent Zero does not
    retry in the call; its `_error_retry` plugin tries the step once more)."""

    def __init__(self, message):
        self.message = message


class ModelStandin:
    def __init__(self, embed=None, on_chat=None):
        self.embed = embed  # texts -> vectors, for /embeddings (None: not served)
        self.on_chat = on_chat  # called at each chat-model request (the benchmark's clock)
        self.requests: list = []  # (model, messages) of every chat-model call
        self.script: list = []  # what the chat model answers, in order
        self.lock = threading.Lock()
        self.answered = threading.Event()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if self.path.endswith("/embeddings") and standin.embed:
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [{"object": "embedding", "index": i, "embedding": v}
                            for i, v in enumerate(standin.embed(texts))]
                    out = json.dumps({"object": "list", "data": data, "model": body.get("model"),
                                      "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                    return
                text = standin.answer(body)
                if isinstance(text, Refusal):
                    out = json.dumps({"error": {"message": text.message, "type": "invalid_request_error",
                                                "code": None, "param": None}}).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out)
                    return
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    for i in range(0, len(text), 40):
                        self._chunk({"content": text[i:i + 40]}, None)
                    self._chunk({}, "stop")
                    self.wfile.write(b"data: [DONE]\n\n")
                else:
                    out = json.dumps({"id": "x", "object": "chat.completion", "created": int(time.time()),
                                      "model": body.get("model"), "choices": [
                                          {"index": 0, "message": {"role": "assistant", "content": text},
                                           "finish_reason": "stop"}],
                                      "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(out)))
                    self.end_headers()
                    self.wfile.write(out.encode())

            def _chunk(self, delta, finish):
                data = {"id": "x", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": "scripted", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def api_base(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def answer(self, body) -> str:
        if body.get("model") != "scripted-chat":
            return "ok"
        if self.on_chat:
            self.on_chat()
        with self.lock:
            self.requests.append(body.get("messages") or [])
            step = self.script.pop(0) if self.script else None
        if callable(step):
            step = step()
        if isinstance(step, Refusal):
            return step
        if step is None:
            step = ("response", {"text": "(the script ended)"})
        name, args = step
        return json.dumps({"thoughts": [f"calling {name}"], "headline": f"Using {name}",
                           "tool_name": name, "tool_args": args})

    def prompt(self, i) -> str:
        """The whole text of the i-th chat-model request."""
        return "\n".join(str(m.get("content")) for m in self.requests[i])

    def stop(self):
        self.server.shutdown()
