"""Scratchpad client for Python: one module, standard library only.

Talks to a running engine (`pad serve`) over its Unix socket, speaking the
protocol of docs/protocol.md: JSON-RPC 2.0, one JSON object per line.

    from scratchpad import Client

    with Client(author="agent-research") as pad:
        entry = pad.add("login retries 3x before failing", pad="proj-x", tags=["login"])
        for hit in pad.search("authentication problems", pad="proj-x")["hits"]:
            print(hit["entry"]["id"], hit["found_by"], hit["entry"]["content"])
        for event in pad.subscribe(pads=["proj-*"]):
            print(event["type"], event.get("entry", {}).get("content"))

Errors from the engine raise `ScratchpadError` subclasses carrying the
JSON-RPC `code`, the instructive `message` and `data` (`field`, `limit`,
`got`); a missing engine raises `EngineUnavailable`.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import socket
import struct
import time
import urllib.error
import uuid
import urllib.request
from typing import Any, Deque, Dict, Iterator, List, Optional

__all__ = [
    "Client",
    "HttpClient",
    "Subscription",
    "default_socket_path",
    "new_key",
    "ScratchpadError",
    "ParseError",
    "InvalidRequest",
    "MethodNotFound",
    "InvalidParams",
    "InternalError",
    "NotFound",
    "Conflict",
    "Forbidden",
    "TooLarge",
    "Unavailable",
    "EngineUnavailable",
]

PROTOCOL_VERSION = 1

# A write that takes an idempotency key (`entry.add`, `task.claim`, `ask`) is sent
# again with the same key after each of these waits (seconds) while the
# engine answers Unavailable or OutcomeUnknown: it is stored once.
WRITE_RETRY_WAITS = (0.5, 1.0, 2.0)


class ScratchpadError(Exception):
    """An error answer from the engine. Branch on the class or `code`, not on `message`."""

    code = 0
    #: On a write that takes an idempotency key and failed in a way that may
    #: have stored it (`Unavailable` past the retries, `OutcomeUnknown`, the
    #: connection lost): its key. The same call with `idempotency_key=` this
    #: key is stored once.
    idempotency_key: Optional[str] = None

    def __init__(self, message: str, code: Optional[int] = None, data: Any = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.data = data if data is not None else {}

    @property
    def field(self) -> Optional[str]:
        """The parameter that was wrong, when the engine names one."""
        return self.data.get("field") if isinstance(self.data, dict) else None

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"


class ParseError(ScratchpadError):
    code = -32700


class InvalidRequest(ScratchpadError):
    code = -32600


class MethodNotFound(ScratchpadError):
    code = -32601


class InvalidParams(ScratchpadError):
    code = -32602


class InternalError(ScratchpadError):
    code = -32603


class NotFound(ScratchpadError):
    code = -32001


class Conflict(ScratchpadError):
    """An update or delete with a stale `if_version`: re-read and retry."""

    code = -32002


class Forbidden(ScratchpadError):
    code = -32003


class TooLarge(ScratchpadError):
    code = -32004


class Unavailable(ScratchpadError):
    """The engine cannot do this now (e.g. semantic search without a model)."""

    code = -32005


class OutcomeUnknown(ScratchpadError):
    """A write reached a team's PostgreSQL database but its answer was lost,
    and whether it committed could not be told: it may be stored. Sent again
    with the same ``idempotency_key`` it is stored once (``add`` and
    ``claim_task`` do that themselves); without a key, look for it
    (``list``, ``get``) before writing it again."""

    code = -32006


class EngineUnavailable(ScratchpadError, ConnectionError):
    """No engine answers on the socket, or the connection was lost."""

    code = -32005


_BY_CODE = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        NotFound,
        Conflict,
        Forbidden,
        TooLarge,
        Unavailable,
        OutcomeUnknown,
    )
}


class NotYourEngine(EngineUnavailable):
    """The socket is not served by an engine of this user: nothing was sent."""


def _refuse(what: str) -> "NotYourEngine":
    return NotYourEngine(
        f"{what}, so it is not your engine and nothing was sent to it. Remove it if "
        "you can, or set PAD_SOCKET to a socket in a directory only you can enter"
    )


def _check_socket_dir(path: str) -> None:
    """The socket's directory must be ours and not writable by others:
    nobody else could have put a socket there."""
    d = os.path.dirname(path) or "."
    try:
        st = os.stat(d)
    except OSError:
        return  # no directory: connecting fails with "no engine"
    me = os.geteuid()
    if st.st_uid != me:
        raise _refuse(f"the socket's directory {d} belongs to uid {st.st_uid}, not to you (uid {me})")
    if st.st_mode & 0o022:
        raise _refuse(f"the socket's directory {d} is writable by others (mode {st.st_mode & 0o777:o})")


def _check_peer(sock: socket.socket, path: str) -> None:
    """The process serving the socket must run as this user (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    me = os.geteuid()
    if uid != me:
        raise _refuse(f"{path} is served by uid {uid}, not by you (uid {me})")


def _error(err: Dict[str, Any]) -> ScratchpadError:
    code = err.get("code", 0)
    cls = _BY_CODE.get(code, ScratchpadError)
    return cls(err.get("message", "unknown error"), code, err.get("data"))


def default_socket_path() -> str:
    """Where the engine listens: $PAD_SOCKET, else $XDG_RUNTIME_DIR/scratchpad/pad.sock,
    else /tmp/scratchpad-$UID/pad.sock (the engine's own rule)."""
    explicit = os.environ.get("PAD_SOCKET")
    if explicit:
        return explicit
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "scratchpad", "pad.sock")
    return f"/tmp/scratchpad-{os.getuid()}/pad.sock"


def new_key() -> str:
    """A fresh idempotency key (a random UUID's 32 hex digits). Make one
    before a write that may be run again (a reconnect that repeats the
    call) and pass it as `idempotency_key=`: every run is the same write."""
    return uuid.uuid4().hex


def _params(**kw: Any) -> Dict[str, Any]:
    """Drops arguments left at None, so the engine applies its defaults."""
    return {k: v for k, v in kw.items() if v is not None}


class Client:
    """One connection to the engine. Not thread-safe: use one per thread.

    `author` is sent in `hello` and becomes the default author of writes made
    through this connection; it defaults to $PAD_AUTHOR. `token` (default
    $PAD_TOKEN) limits the connection to the pads an access token covers.
    """

    def __init__(
        self,
        socket_path: Optional[str] = None,
        author: Optional[str] = None,
        client: str = "python",
        timeout: Optional[float] = 30.0,
        token: Optional[str] = None,
    ):
        self.socket_path = socket_path or default_socket_path()
        _check_socket_dir(self.socket_path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(self.socket_path)
        except OSError as e:
            self._sock.close()
            raise EngineUnavailable(
                f"no Scratchpad engine at {self.socket_path} ({e.strerror or e}); "
                "start one with `pad serve`, or set PAD_SOCKET to where it listens"
            ) from None
        try:
            _check_peer(self._sock, self.socket_path)
        except NotYourEngine:
            self._sock.close()
            raise
        self._reader = self._sock.makefile("rb")
        self._ids = itertools.count(1)
        self._events: Deque[Dict[str, Any]] = collections.deque()
        self.server = self.hello(author or os.environ.get("PAD_AUTHOR"), client,
                                 token=token or os.environ.get("PAD_TOKEN") or None)

    # -- plumbing -----------------------------------------------------------

    def close(self) -> None:
        try:
            self._reader.close()
        finally:
            self._sock.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _read_message(self) -> Dict[str, Any]:
        try:
            line = self._reader.readline()
        except socket.timeout:
            raise
        except OSError as e:
            raise EngineUnavailable(f"connection to the engine lost: {e}") from None
        if not line:
            raise EngineUnavailable("the engine closed the connection")
        return json.loads(line)

    def call(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """Calls any method; returns its `result` or raises its error.
        Events that arrive meanwhile are kept for `events()`/`subscribe()`."""
        request_id = next(self._ids)
        request = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        try:
            self._sock.sendall(json.dumps(request).encode("utf-8") + b"\n")
        except OSError as e:
            raise EngineUnavailable(f"connection to the engine lost: {e}") from None
        while True:
            message = self._read_message()
            if message.get("method") == "event":
                self._events.append(message.get("params", {}))
                continue
            if message.get("id") not in (request_id, None):
                continue  # an answer to nothing we are waiting for
            if "error" in message:
                raise _error(message["error"])
            return message.get("result")

    def _write(self, method: str, params: Dict[str, Any]) -> Any:
        """A write that takes an idempotency key: sent with a fresh key
        (unless `params` carry one), and sent again with the same key after
        each of `WRITE_RETRY_WAITS` while the engine answers Unavailable
        (-32005) or OutcomeUnknown (-32006). The engine stores a key's write
        once and answers a retry as it answered the first call."""
        key = params.setdefault("idempotency_key", new_key())
        try:
            for wait in WRITE_RETRY_WAITS:
                try:
                    return self.call(method, params)
                except (Unavailable, OutcomeUnknown):
                    time.sleep(wait)
            return self.call(method, params)
        except (Unavailable, OutcomeUnknown, EngineUnavailable) as e:
            # It may be stored: the key is what lets the caller go on trying.
            e.idempotency_key = key
            raise

    def next_event(self, subscription: Optional[int] = None) -> Dict[str, Any]:
        """Blocks until the next event of `subscription` (of any subscription
        of this connection, if None); others are kept for their turn."""
        for i, event in enumerate(self._events):
            if subscription is None or event.get("subscription") == subscription:
                del self._events[i]
                return event
        while True:
            message = self._read_message()
            if message.get("method") != "event":
                continue
            event = message.get("params", {})
            if subscription is None or event.get("subscription") == subscription:
                return event
            self._events.append(event)

    # -- methods --------------------------------------------------------------

    def hello(self, author: Optional[str] = None, client: str = "python",
              token: Optional[str] = None) -> Dict[str, Any]:
        return self.call("hello", _params(author=author, client=client, token=token))

    def add(
        self,
        content: str,
        pad: str = "inbox",
        *,
        tags: Optional[List[str]] = None,
        kind: Optional[str] = None,
        author: Optional[str] = None,
        **fields: Any,
    ) -> Dict[str, Any]:
        """Writes an entry and returns it. Other fields (`status`, `assignee`,
        `resume`, `category`, `confidence`, `depends_on`, `remind_in`,
        `remind_at`, `pinned`, `meta`, `idempotency_key`) go as keyword
        arguments. Sent with an idempotency key (a fresh one unless given)
        and retried with it while the engine cannot answer: stored once."""
        params = _params(pad=pad, content=content, tags=tags, kind=kind, author=author)
        params.update(fields)
        return self._write("entry.add", params)["entry"]

    def get(self, id: str) -> Dict[str, Any]:
        return self.call("entry.get", {"id": id})["entry"]

    def update(self, id: str, *, if_version: Optional[int] = None, **changes: Any) -> Dict[str, Any]:
        """Changes fields of an entry; a field set to None is cleared. With
        `if_version`, raises `Conflict` if someone changed it first."""
        params = dict(changes, id=id)
        if if_version is not None:
            params["if_version"] = if_version
        return self.call("entry.update", params)["entry"]

    def delete(self, id: str, *, if_version: Optional[int] = None) -> Dict[str, Any]:
        return self.call("entry.delete", _params(id=id, if_version=if_version))

    def list(
        self,
        pad: Optional[str] = None,
        *,
        tags: Optional[List[str]] = None,
        author: Optional[str] = None,
        kind: Optional[str] = None,
        status: Optional[str] = None,
        since: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> Dict[str, Any]:
        """One page, newest first: `{"entries": [...], "next_cursor": ...}`."""
        return self.call(
            "entry.list",
            _params(pad=pad, tags=tags, author=author, kind=kind, status=status,
                    since=since, limit=limit, cursor=cursor),
        )

    def iter_entries(self, pad: Optional[str] = None, **filters: Any) -> Iterator[Dict[str, Any]]:
        """Every matching entry, newest first, page after page."""
        filters.setdefault("limit", 500)
        cursor = None
        while True:
            page = self.list(pad, cursor=cursor, **filters)
            yield from page["entries"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def search(
        self,
        query: str,
        *,
        mode: Optional[str] = None,
        pad: Optional[str] = None,
        tags: Optional[List[str]] = None,
        kind: Optional[str] = None,
        author: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> Dict[str, Any]:
        """`{"hits": [{"entry", "score", "found_by"}], "mode": ...}`; `mode` is
        `hybrid` (default), `text` or `semantic`."""
        return self.call(
            "search",
            _params(query=query, mode=mode, pad=pad, tags=tags, kind=kind, author=author, limit=limit),
        )

    def tags(self, pad: Optional[str] = None) -> List[Dict[str, Any]]:
        return self.call("tags.list", _params(pad=pad))["tags"]

    def pads(self, include_archived: bool = False) -> List[Dict[str, Any]]:
        return self.call("pad.list", {"include_archived": include_archived})["pads"]

    _UNSET: Any = object()

    def configure_pad(self, name: str, *, ttl_seconds: Any = _UNSET, max_entries: Any = _UNSET) -> Dict[str, Any]:
        """Sets a pad's idle TTL and rolling window (None: never / unbounded);
        creates or restores the pad."""
        params: Dict[str, Any] = {"name": name}
        if ttl_seconds is not Client._UNSET:
            params["ttl_seconds"] = ttl_seconds
        if max_entries is not Client._UNSET:
            params["max_entries"] = max_entries
        return self.call("pad.configure", params)["pad"]

    def touch_pad(self, name: str) -> Dict[str, Any]:
        return self.call("pad.touch", {"name": name})["pad"]

    def clear_pad(self, name: str, *, keep_pinned: bool = False) -> int:
        return self.call("pad.clear", {"name": name, "keep_pinned": keep_pinned})["deleted"]

    def export_pad(self, name: str, format: str = "markdown", *, budget: Optional[int] = None) -> str:
        """The pad as markdown (working memory, at most `budget` characters)
        or JSON."""
        return self.call("pad.export", _params(name=name, format=format, budget=budget))["text"]

    # -- plans and tasks -------------------------------------------------------

    def add_task(self, content: str, pad: str = "inbox", *, after: Optional[List[str]] = None,
                 **fields: Any) -> Dict[str, Any]:
        """Adds a task (status todo) that waits on the entries in `after`."""
        return self.add(content, pad, kind="task", depends_on=after or [], **fields)

    def plan(self, pad: str) -> Dict[str, Any]:
        """The pad's tasks in dependency order: `{"plans", "entries": [{"entry",
        "state", "waiting_on"}], "counts"}`."""
        return self.call("plan.order", {"pad": pad})

    def claim_task(self, pad: str, agent: Optional[str] = None,
                   lease_seconds: Optional[int] = None, *,
                   idempotency_key: Optional[str] = None) -> Optional[Dict[str, Any]]:
        """Takes the next ready task (now `doing`, held under a lease), or
        returns None when nothing is ready. Retried with its idempotency key
        (a fresh one unless given) as `add` is: a retry never takes a second
        task; once the lease ran out it raises `Conflict` instead."""
        return self._write("task.claim", _params(pad=pad, agent=agent, lease_seconds=lease_seconds,
                                                  idempotency_key=idempotency_key))["entry"]

    def heartbeat(self, id: str, resume: Optional[str] = None, *, agent: Optional[str] = None,
                  lease_seconds: Optional[int] = None) -> Dict[str, Any]:
        """Renews the lease on a held task and records where the work stands."""
        return self.call("task.heartbeat", _params(id=id, resume=resume, agent=agent,
                                                   lease_seconds=lease_seconds))["entry"]

    def complete_task(self, id: str, resume: Optional[str] = None, *,
                      agent: Optional[str] = None) -> Dict[str, Any]:
        return self.call("task.complete", _params(id=id, resume=resume, agent=agent))["entry"]

    def fail_task(self, id: str, error: Optional[str] = None, *, retry: bool = False,
                  resume: Optional[str] = None, agent: Optional[str] = None) -> Dict[str, Any]:
        """Marks a task failed, or with `retry` puts it back in the queue."""
        return self.call("task.fail", _params(id=id, error=error, retry=retry, resume=resume,
                                              agent=agent))["entry"]

    def share(self, id: str, to: List[str]) -> List[Dict[str, Any]]:
        """Copies an entry to other pads, with `meta.shared_from`."""
        return self.call("entry.share", {"id": id, "to": to})["copies"]

    def report(self, pad: Optional[str] = None) -> Dict[str, Any]:
        return self.call("report", _params(pad=pad))

    # -- threads and questions --------------------------------------------------

    def reply(self, id: str, content: str, pad: Optional[str] = None, **fields: Any) -> Dict[str, Any]:
        """Answers entry `id` (a unique id prefix is enough): the reply joins
        its thread and reaches its author's inbox. It goes to the entry's own
        pad unless `pad` says otherwise."""
        if pad is None:
            pad = self.get(id)["pad"]
        return self.add(content, pad, reply_to=id, **fields)

    def thread(self, id: str) -> Dict[str, Any]:
        """`{"entry": …, "replies": […]}`: the entry and every reply under
        it, oldest first (each names its parent in `reply_to`)."""
        return self.call("entry.thread", {"id": id})

    def ask(self, question: str, pad: str = "inbox", *, choices: Optional[List[str]] = None,
            wait_seconds: int = 60, author: Optional[str] = None,
            idempotency_key: Optional[str] = None) -> Dict[str, Any]:
        """Asks the person (a `question` entry tagged `needs_eyes`, with
        `choices` as buttons) and waits up to `wait_seconds` (at most 110)
        for the answer. Returns `{"question", "answer", "waited_seconds"}`;
        `answer` is the reply entry, or None when nobody answered in time —
        the question stays open and a later answer reaches `inbox()`.
        Retried with its idempotency key (a fresh one unless given) as `add`
        is: a retry asks nothing new and waits for the first question's answer."""
        with self._longer(wait_seconds + 15):
            return self._write("ask", _params(content=question, pad=pad, choices=choices,
                                              wait_seconds=wait_seconds, author=author,
                                              idempotency_key=idempotency_key))

    def wait_for_answer(self, question: str, wait_seconds: int = 60) -> Dict[str, Any]:
        """Waits up to `wait_seconds` (at most 110) for the answer to a question
        asked before (its id or a unique prefix), without asking again; returns
        as `ask` does."""
        with self._longer(wait_seconds + 15):
            return self.call("ask", {"id": question, "wait_seconds": wait_seconds})

    @contextlib.contextmanager
    def _longer(self, seconds: float) -> Iterator[None]:
        """A call that legitimately takes `seconds` (a wait) gets that long."""
        previous = self._sock.gettimeout()
        if previous is not None:
            self._sock.settimeout(max(previous, seconds))
        try:
            yield
        finally:
            self._sock.settimeout(previous)

    def inbox(self, author: Optional[str] = None, *, peek: bool = False) -> Dict[str, Any]:
        """New `needs_eyes` entries, replies and due reminders for `author`."""
        return self.call("inbox", _params(author=author, peek=peek or None))

    # -- access tokens (owner only) -------------------------------------------

    def create_token(self, name: str, pads: List[str], *, read_only: bool = False) -> str:
        """Issues a token for `pads` (names or 'prefix*'); returns its secret."""
        return self.call("token.create", {"name": name, "pads": pads, "read_only": read_only})["secret"]

    def tokens(self) -> List[Dict[str, Any]]:
        return self.call("token.list")["tokens"]

    def revoke_token(self, name: str) -> None:
        self.call("token.revoke", {"name": name})

    def send(self, agent: str, content: str, pad: str = "inbox", **fields: Any) -> Dict[str, Any]:
        """Hands a note to `agent` (`to`): stored in `pad`, sent over A2A when
        the agent is registered (else it waits in the agent's inbox). Its
        replies land in the note's thread; `deliveries()` says where it stands."""
        return self.add(content, pad, to=[agent], **fields)

    def add_agent(self, name: str, url: str, *, token: Optional[str] = None,
                  replace: bool = False) -> Dict[str, Any]:
        """Registers an A2A agent (owner only); returns it as `agent.list` shows it."""
        return self.call("agent.add", _params(name=name, url=url, token=token, replace=replace))["agent"]

    def agents(self, seen_within: Optional[int] = None) -> Dict[str, Any]:
        """`{"agents": registered, "seen": authors seen lately with what each is doing}`."""
        return self.call("agent.list", _params(seen_within=seen_within))

    def remove_agent(self, name: str) -> Dict[str, Any]:
        return self.call("agent.remove", {"name": name})

    def deliveries(self, pad: Optional[str] = None, entry: Optional[str] = None) -> List[Dict[str, Any]]:
        """Where addressed notes stand with their agents (sent, working, waiting_for_you, done, …)."""
        return self.call("agent.deliveries", _params(pad=pad, entry=entry))["deliveries"]

    def stats(self) -> Dict[str, Any]:
        return self.call("stats")

    def reindex(self) -> int:
        """Embeds every entry again (semantic search); returns how many are queued."""
        return self.call("reindex")["queued"]

    def subscribe(
        self,
        pads: Optional[List[str]] = None,
        tags: Optional[List[str]] = None,
        kinds: Optional[List[str]] = None,
    ) -> "Subscription":
        """Starts receiving events; iterate the result to get them as they come
        (`created`, `updated`, `deleted`, `needs_eyes`, `pad_expired`, `lagged`).
        A trailing `*` in a pad name matches a prefix."""
        result = self.call("subscribe", _params(pads=pads, tags=tags, kinds=kinds))
        return Subscription(self, result["subscription"])

    def unsubscribe(self, subscription: int) -> None:
        self.call("unsubscribe", {"subscription": subscription})


class HttpClient(Client):
    """The engine's protocol over HTTP, for a client that cannot reach the
    socket (a container): `POST /rpc` on the engine's `--mcp-http` listener,
    with an access token (`pad token create`) as bearer, which names the
    author and limits the pads. One request per call; events need the socket,
    so poll `inbox()` instead of `subscribe()`."""

    def __init__(self, url: str, token: str, client: str = "python", timeout: Optional[float] = 30.0):
        base = url.rstrip("/")
        self.url = base if base.endswith("/rpc") else base + "/rpc"
        self.socket_path = self.url
        self._token = token
        self._timeout = timeout
        self._ids = itertools.count(1)
        self._events = collections.deque()
        if not token:
            raise Forbidden("reaching the engine over HTTP needs an access token: create one with "
                            "`pad token create --name <agent> --pads '*'`")
        self.server = self.call("hello", {"client": client})

    def close(self) -> None:
        pass

    @contextlib.contextmanager
    def _longer(self, seconds: float) -> Iterator[None]:
        previous = self._timeout
        if previous is not None:
            self._timeout = max(previous, seconds)
        try:
            yield
        finally:
            self._timeout = previous

    def call(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        body = json.dumps({"jsonrpc": "2.0", "id": next(self._ids), "method": method,
                           "params": params or {}}).encode("utf-8")
        request = urllib.request.Request(self.url, data=body, method="POST", headers={
            "Authorization": f"Bearer {self._token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                message = json.loads(response.read())
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace").strip()
            if e.code == 401:
                raise Forbidden(f"the engine at {self.url} refused the token: {text}") from None
            raise EngineUnavailable(f"the engine at {self.url} answered HTTP {e.code}: {text}") from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            raise EngineUnavailable(
                f"no Scratchpad engine answers at {self.url} ({reason}); start it with "
                "`pad serve --mcp-http ADDR` (or turn on the app's HTTP endpoint), or fix the URL") from None
        if "error" in message:
            raise _error(message["error"])
        return message.get("result")

    def next_event(self, subscription: Optional[int] = None) -> Dict[str, Any]:
        raise MethodNotFound("events need the engine's socket; over HTTP, poll inbox() instead")


class Subscription:
    """An iterator of one subscription's events, blocking until each comes.
    The client stays usable for other calls in between: events that arrive
    meanwhile are kept, in order, for their subscription."""

    def __init__(self, client: Client, id: int):
        self.client = client
        self.id = id

    def __iter__(self) -> "Subscription":
        return self

    def __next__(self) -> Dict[str, Any]:
        return self.client.next_event(self.id)

    def close(self) -> None:
        """Stops the events (those already sent may still be read)."""
        self.client.unsubscribe(self.id)
