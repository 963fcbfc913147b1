"""A stand-in for the model vendors' APIs on loopback, so the real agent CLIs
(Codex, Gemini CLI, Claude Code) run their own MCP code against `pad mcp`
with no model behind them.

It answers OpenAI's Responses API (Codex), Google's generateContent (Gemini
CLI) and Anthropic's Messages API (Claude Code), streaming or not, with a
script: the tool calls to make, in order, then a closing text. Which step
comes next is the number of tool results the client has sent back so far,
so the client's own loop drives the script. A step names a tool by the end
of its name (clients prefix MCP tools: `mcp__pad__add_note`, `add_note`),
and the call goes to the tool the client offered with that ending.

Every request is appended to a JSON-lines log, for the test to read what
the client sent back: the tool results its model would have seen.

    python3 standin.py PORT SCRIPT.json LOG.jsonl
"""

import itertools
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = []
LOG = None
LOCK = threading.Lock()
IDS = itertools.count(1)


def record(api, path, body):
    with LOCK, open(LOG, "a") as f:
        f.write(json.dumps({"api": api, "path": path, "body": body}) + "\n")


def step_for(done, offered):
    """The script's step after `done` tool results, with the tool name the
    client offered for it (None once the script has run out: answer text)."""
    if done >= len(SCRIPT) or "tool" not in SCRIPT[done]:
        text = SCRIPT[done]["text"] if done < len(SCRIPT) else "Done."
        return None, None, text
    want = SCRIPT[done]["tool"]
    name = next((n for n in offered if n == want or n.endswith("__" + want) or n.endswith("_" + want)), None)
    if name is None:
        return None, None, f"STANDIN: no offered tool ends with {want}; offered {sorted(offered)}"
    return name, SCRIPT[done].get("args", {}), None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"raw": raw.decode(errors="replace")}

    def send_json(self, obj, status=200):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events):
        data = "".join(
            (f"event: {name}\n" if name else "") + f"data: {json.dumps(obj)}\n\n" for name, obj in events
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        record("get", self.path, None)
        if "/models" in self.path:
            return self.send_json({"object": "list", "data": [{"id": "standin", "object": "model"}],
                                   "models": []})
        self.send_json({}, 404)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.body()
        path = self.path
        if path.endswith("/responses"):
            record("openai", path, body)
            return self.openai(body)
        if "/messages" in path:
            record("anthropic", path, body)
            if path.rstrip("/").endswith("count_tokens"):
                return self.send_json({"input_tokens": 1})
            return self.anthropic(body)
        if ":generateContent" in path or ":streamGenerateContent" in path:
            record("gemini", path, body)
            return self.gemini(body, stream=":stream" in path)
        if ":countTokens" in path:
            return self.send_json({"totalTokens": 1})
        record("other", path, body)
        self.send_json({}, 404)

    # --- OpenAI Responses (Codex) ---------------------------------------
    def openai(self, body):
        items = body.get("input") or []
        done = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call_output")
        offered = {}
        for t in body.get("tools") or []:
            if t.get("type") == "function":
                offered[t["name"]] = None
            for inner in t.get("tools") or []:  # a namespace of tools
                offered[t.get("name", "") + "__" + inner.get("name", "")] = (t.get("name"), inner.get("name"))
        name, args, text = step_for(done, offered)
        rid = f"resp_{next(IDS)}"
        if name:
            item = {"type": "function_call", "id": f"fc_{next(IDS)}", "call_id": f"call_{next(IDS)}",
                    "name": name, "arguments": json.dumps(args), "status": "completed"}
            if offered[name]:
                item["namespace"], item["name"] = offered[name]
        else:
            item = {"type": "message", "id": f"msg_{next(IDS)}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}
        usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1,
                 "output_tokens_details": None, "total_tokens": 2}
        self.send_sse([
            ("response.created", {"type": "response.created", "response": {"id": rid}}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                           "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": {"id": rid, "usage": usage}}),
        ])

    # --- Anthropic Messages (Claude Code) -------------------------------
    def anthropic(self, body):
        done = 0
        for m in body.get("messages") or []:
            if isinstance(m.get("content"), list):
                done += sum(1 for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        offered = {t["name"]: None for t in body.get("tools") or [] if "name" in t}
        # Side requests (titles, summaries) offer no tools: plain text.
        if not offered:
            name, args, text = None, None, "ok"
        else:
            name, args, text = step_for(done, offered)
        mid = f"msg_{next(IDS)}"
        usage = {"input_tokens": 1, "output_tokens": 1}
        if name:
            block = {"type": "tool_use", "id": f"toolu_{next(IDS)}", "name": name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": text}
            stop = "end_turn"
        if not body.get("stream"):
            full = dict(block)
            if name:
                full["input"] = args
            else:
                full["text"] = text
            return self.send_json({"id": mid, "type": "message", "role": "assistant", "model": body.get("model"),
                                   "content": [full], "stop_reason": stop, "stop_sequence": None, "usage": usage})
        self.send_sse([
            ("message_start", {"type": "message_start", "message": {
                "id": mid, "type": "message", "role": "assistant", "model": body.get("model"), "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": usage}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 1}}),
            ("message_stop", {"type": "message_stop"}),
        ])

    # --- Gemini generateContent (Gemini CLI) ----------------------------
    def gemini(self, body, stream):
        done = 0
        for c in body.get("contents") or []:
            done += sum(1 for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p)
        offered = {}
        for t in body.get("tools") or []:
            for f in t.get("functionDeclarations") or []:
                offered[f["name"]] = None
        if not offered:
            name, args, text = None, None, "ok"
        else:
            name, args, text = step_for(done, offered)
        part = {"functionCall": {"name": name, "args": args}} if name else {"text": text}
        answer = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                                  "index": 0}],
                  "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
                  "modelVersion": "standin"}
        if stream:
            return self.send_sse([(None, answer)])
        self.send_json(answer)


def main():
    global SCRIPT, LOG
    port, script, LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    with open(script) as f:
        SCRIPT = json.load(f)
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
