"""A relay between clients and a real engine that loses answers on the way
back, as a network or a restarting database does: the write reaches the
engine and is stored, and the client is told `-32006` (outcome unknown)
instead of its answer. Everything else passes through untouched. It shows
what a client does with an answer it never got: the tests check that it
sends the write again with the same idempotency key, and that the engine
then stores it once.
"""

import json
import os
import socket
import tempfile
import threading
from typing import Dict, List


class LostAnswers:
    """Listens on `self.socket_path` (in a private directory, as the
    engine's is) and relays each connection to `engine_socket`. The first
    `lose` answers to calls of a method in `methods` (whose params pass
    `only`) are replaced by a
    `-32006` error, or with `hang_up` never sent: the connection is closed
    instead; `self.sent` keeps the params of every such call."""

    def __init__(self, engine_socket: str, methods=("entry.add", "task.claim"), lose: int = 1,
                 hang_up: bool = False, only=lambda params: True):
        self.engine_socket = engine_socket
        self.methods = set(methods)
        self.lose = lose
        self.hang_up = hang_up
        self.only = only  # which calls' params may lose their answer
        self.sent: List[Dict] = []
        self._lock = threading.Lock()
        self._dir = tempfile.mkdtemp(prefix="pad-lost-")
        os.chmod(self._dir, 0o700)
        self.socket_path = os.path.join(self._dir, "pad.sock")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.socket_path)
        self._listener.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            engine.connect(self.engine_socket)
            doomed = set()  # ids of requests whose answer is to be lost
            threading.Thread(target=self._up, args=(client, engine, doomed), daemon=True).start()
            threading.Thread(target=self._down, args=(engine, client, doomed), daemon=True).start()

    def _up(self, client: socket.socket, engine: socket.socket, doomed: set) -> None:
        for line in client.makefile("rb"):
            message = json.loads(line)
            if isinstance(message, dict) and message.get("method") in self.methods:
                with self._lock:
                    self.sent.append(dict(message.get("params") or {}, method=message["method"]))
                    if self.lose > 0 and self.only(message.get("params") or {}):
                        self.lose -= 1
                        doomed.add(message.get("id"))
            engine.sendall(line)
        engine.shutdown(socket.SHUT_WR)

    def _down(self, engine: socket.socket, client: socket.socket, doomed: set) -> None:
        for line in engine.makefile("rb"):
            message = json.loads(line)
            if isinstance(message, dict) and message.get("id") in doomed and "method" not in message:
                doomed.discard(message["id"])
                if self.hang_up:
                    client.shutdown(socket.SHUT_RDWR)
                    client.close()
                    return
                lost = {"code": -32006, "message": "the answer was lost on the way (a test's relay)"}
                line = (json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": lost}) + "\n").encode()
            try:
                client.sendall(line)
            except OSError:
                return
        client.close()

    def close(self) -> None:
        self._listener.close()
