"""Bounded: numbers at the edge are refused with their range (no wrapped
times, no pad archived by a typo), a last request without its newline is
answered, and the engine raises its open-files limit."""

import json
import os
import resource
import socket
import subprocess
import time

import pytest

from pad_engine import Engine, pad_binary
import scratchpad

TEN_YEARS = 10 * 365 * 86400


@pytest.fixture(scope="module")
def engine():
    e = Engine()
    yield e
    e.stop()


@pytest.mark.parametrize("params, field", [
    ({"name": "edge", "ttl_seconds": 9223372036854775807}, "ttl_seconds"),
    ({"name": "edge", "ttl_seconds": 10 ** 12}, "ttl_seconds"),
    ({"name": "edge", "max_entries": 2 ** 62}, "max_entries"),
])
def test_configure_refuses_numbers_past_their_range(engine, params, field):
    with engine.client() as c:
        c.add("keep me", pad="edge")
        with pytest.raises(scratchpad.InvalidParams) as refused:
            c.call("pad.configure", params)
        assert refused.value.field == field
        assert "give 1 to" in refused.value.message
        pad = next(p for p in c.call("pad.list")["pads"] if p["name"] == "edge")
        assert pad["expires_at"] is None or pad["expires_at"] > pad["last_write_at"]


def test_the_longest_ttl_is_ten_years_and_expires_after_the_last_write(engine):
    with engine.client() as c:
        c.add("long lived", pad="decade")
        pad = c.call("pad.configure", {"name": "decade", "ttl_seconds": TEN_YEARS})["pad"]
        assert pad["expires_at"] > pad["last_write_at"]
        assert pad["expires_at"][:4] >= str(time.gmtime().tm_year + 9)


@pytest.mark.parametrize("secs", [2 ** 64 - 1, 2 ** 63 - 1, 10 ** 13])
def test_a_reminder_past_ten_years_is_refused(engine, secs):
    with engine.client() as c:
        with pytest.raises(scratchpad.InvalidParams) as refused:
            c.add("remind me", pad="edge", remind_in=secs)
        assert refused.value.field == "remind_in" and "ten years" in refused.value.message


def test_a_reminder_in_an_hour_is_an_hour_from_now(engine):
    with engine.client() as c:
        e = c.add("remind me", pad="edge", remind_in=3600)
        assert e["remind_at"] > e["created_at"]
        assert e["remind_at"][:4] == e["created_at"][:4] or e["created_at"][5:10] == "12-31"


def test_an_export_budget_past_its_range_is_refused(engine):
    with engine.client() as c:
        with pytest.raises(scratchpad.InvalidParams) as refused:
            c.call("pad.export", {"name": "edge", "format": "markdown", "budget": 2 ** 63})
        assert refused.value.field == "budget"


def test_a_last_request_without_its_newline_is_answered(engine):
    s = socket.socket(socket.AF_UNIX)
    s.connect(engine.socket)
    s.sendall(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "stats"}).encode())
    s.shutdown(socket.SHUT_WR)
    s.settimeout(10)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    answer = json.loads(data.decode().splitlines()[0])
    assert answer["id"] == 7 and "result" in answer, answer


def test_the_engine_raises_its_open_files_limit_to_the_hard_limit(tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard <= 256:
        pytest.skip(f"the hard limit is only {hard}")
    sock = tmp_path / "run" / "pad.sock"
    env = dict(os.environ, PAD_HOME=str(tmp_path / "data"), PAD_SOCKET=str(sock), PAD_NO_SEMANTIC="1", PAD_LOG="warn")
    proc = subprocess.Popen([pad_binary(), "serve"], env=env,
                            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)))
    try:
        deadline = time.time() + 20
        while not sock.exists():
            assert time.time() < deadline and proc.poll() is None
            time.sleep(0.02)
        limits = open(f"/proc/{proc.pid}/limits").read()
        line = next(l for l in limits.splitlines() if l.startswith("Max open files"))
        assert line.split()[3] == str(hard), line
    finally:
        proc.terminate()
        proc.wait()


def raw(engine, line: bytes):
    s = socket.socket(socket.AF_UNIX)
    s.connect(engine.socket)
    s.sendall(line + b"\n")
    f = s.makefile("rb")
    answer = json.loads(f.readline())
    s.close()
    return answer


def test_a_batch_over_the_request_cap_is_refused_whole(engine):
    batch = [{"jsonrpc": "2.0", "id": i, "method": "entry.add",
              "params": {"pad": "batch-cap", "content": f"n{i}"}} for i in range(101)]
    answer = raw(engine, json.dumps(batch).encode())
    assert answer["error"]["code"] == -32004 and "limit is 100" in answer["error"]["message"]
    with engine.client() as c:
        assert c.call("entry.list", {"pad": "batch-cap"})["entries"] == [], "nothing in it was run"


def test_a_batch_stops_computing_answers_past_its_byte_cap(engine):
    with engine.client() as c:
        for i in range(100):
            c.add("y" * 3900, pad="batch-big")
    # 100 lists of ~400 KB each would be ~40 MB of answers.
    batch = [{"jsonrpc": "2.0", "id": i, "method": "entry.list", "params": {"pad": "batch-big", "limit": 100}}
             for i in range(100)]
    answers = raw(engine, json.dumps(batch).encode())
    assert len(answers) == 100
    done = [a for a in answers if "result" in a]
    cut = [a for a in answers if "error" in a]
    assert 30 <= len(done) < 100 and cut, (len(done), len(cut))
    assert all(a["error"]["code"] == -32004 and "not run" in a["error"]["message"] for a in cut)
    assert sum(len(json.dumps(a)) for a in answers) < 24 << 20


def test_a_search_with_a_nul_in_it_is_answered(engine):
    with engine.client() as c:
        c.add("alpha beta", pad="nul")
        hits = c.call("search", {"query": "alpha\u0000beta", "pad": "nul", "mode": "text"})["hits"]
        assert [h["entry"]["content"] for h in hits] == ["alpha beta"]
