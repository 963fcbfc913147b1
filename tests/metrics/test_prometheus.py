"""`pad serve --metrics` checked with the official Prometheus Python client's
parser: the exposition parses, carries what a known workload did, and the
endpoint refuses non-loopback addresses unless told otherwise."""

import json
import os
import pathlib
import re
import subprocess
import tempfile
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from pad_engine import Engine, free_port, pad_binary  # noqa: I001 (puts the client on the path)
import scratchpad


def test_the_exposition_parses_and_matches_the_workload():
    port = free_port()
    engine = Engine(extra_args=["--metrics", f"127.0.0.1:{port}"])
    try:
        with engine.client(author="agent-m") as c:
            for i in range(4):
                c.add(f"finding {i}", "metrics-a", tags=["perf"])
            c.add("a task", "metrics-b", kind="task")
            c.search("finding", mode="text")
            try:
                c.get("zzzzzzzzzzzz")
            except scratchpad.NotFound:
                pass
            stats = c.stats()
            assert stats["metrics"] == f"http://127.0.0.1:{port}/metrics"
            url = stats["metrics"]
            with urllib.request.urlopen(url, timeout=10) as r:
                assert r.status == 200
                assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
                text = r.read().decode()
        parsed = list(text_string_to_metric_families(text))
        # scratchpad_entries_total (a counter) and scratchpad_entries (a gauge)
        # share a base name, so look families up by name and type.
        families = {(f.name, f.type): f for f in parsed}
        samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                   for f in parsed for s in f.samples}
        assert ("scratchpad_entries", "counter") in families
        assert ("scratchpad_entries", "gauge") in families
        assert samples[("scratchpad_entries", (("pad", "metrics-a"),))] == 4
        assert samples[("scratchpad_entries_total", (("kind", "note"),))] == 4
        assert samples[("scratchpad_entries_total", (("kind", "task"),))] == 1
        assert samples[("scratchpad_active_pads", ())] == 2
        assert samples[("scratchpad_tag_entries", (("tag", "perf"),))] == 4
        assert samples[("scratchpad_search_duration_seconds_count", (("mode", "text"),))] == 1
        assert ("scratchpad_request_duration_seconds", "histogram") in families
        assert samples[("scratchpad_errors_total", (("code", "-32001"),))] == 1
        assert samples[("scratchpad_request_duration_seconds_count", (("method", "entry.add"),))] == 5

        # Every query of the Grafana dashboard names metrics this engine exports.
        dashboard = json.loads((pathlib.Path(__file__).parents[2] / "docs" / "grafana" / "scratchpad.json").read_text())
        exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
        assert len(exprs) >= 15
        exported = {s.name for f in parsed for s in f.samples}
        for expr in exprs:
            for name in re.findall(r"scratchpad_[a-z_]+", expr):
                assert name in exported, f"dashboard query {expr!r} uses {name}, which /metrics does not export"

        req = urllib.request.Request(url, data=b"x", method="POST")
        try:
            urllib.request.urlopen(req, timeout=10)
            raise AssertionError("POST was served")
        except urllib.error.HTTPError as e:
            assert e.code == 405
    finally:
        engine.stop()


def test_a_non_loopback_address_must_be_asked_for():
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, PAD_HOME=os.path.join(d, "data"), PAD_SOCKET=os.path.join(d, "run", "pad.sock"),
                   PAD_NO_SEMANTIC="1", PAD_LOG="warn")
        r = subprocess.run([pad_binary(), "serve", "--metrics", "0.0.0.0:0"], env=env,
                           capture_output=True, text=True, timeout=30)
        assert r.returncode != 0
        assert "not a loopback address" in r.stderr and "--metrics-allow-remote" in r.stderr


def test_a_foreign_host_header_is_refused():
    """A web page cannot read the metrics by DNS rebinding: the endpoint
    answers only Host names it serves, like the MCP endpoint."""
    port = free_port()
    engine = Engine(extra_args=["--metrics", f"127.0.0.1:{port}"])
    try:
        def get(host):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers={"Host": host})
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    return r.status
            except urllib.error.HTTPError as e:
                return e.code

        assert get(f"127.0.0.1:{port}") == 200
        assert get(f"localhost:{port}") == 200
        assert get(f"evil.example:{port}") == 403
    finally:
        engine.stop()


def test_metrics_can_require_a_token():
    port = free_port()
    engine = Engine(extra_args=["--metrics", f"127.0.0.1:{port}", "--metrics-require-token"])
    try:
        token_file = os.path.join(engine.data, "metrics.token")
        token = open(token_file).read().strip()
        assert os.stat(token_file).st_mode & 0o777 == 0o600 and len(token) >= 32

        def get(headers):
            req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, e.read().decode()

        status, body = get({})
        assert status == 401 and "metrics.token" in body
        assert get({"Authorization": "Bearer " + "0" * 64})[0] == 401
        status, body = get({"Authorization": f"Bearer {token}"})
        assert status == 200 and "scratchpad_entries_total" in body
    finally:
        engine.stop()
