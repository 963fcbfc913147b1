"""The agent CLIs people use, from npm, each running its own MCP code against
`pad mcp` (stdio) and `pad serve --mcp-http`, with a stand-in of its
vendor's model API on loopback scripting which tools its "model" calls
(tests/clients/standin.py). What the client sent back to the model — the
tool results — is read from the stand-in's log.

Codex CLI, Gemini CLI and Claude Code need Node 22 (the `node@22` package);
the MCP Inspector's CLI checks `ask_person`'s default wait against the
TypeScript SDK's 60 s request time-out."""

import json
import time

import pytest

from pad_engine import pad_binary



def pad_env(engine, author, pad):
    return {"PAD_SOCKET": engine.socket, "PAD_AUTHOR": author, "PAD_PAD": pad}


# --- Codex CLI ---------------------------------------------------------------

def codex_config(cli, standin, engine, transport, author, pad):
    server = (f'command = "{pad_binary()}"\nargs = ["mcp"]\n'
              f'env = {{ PAD_SOCKET = "{engine.socket}", PAD_AUTHOR = "{author}", PAD_PAD = "{pad}" }}\n'
              if transport == "stdio" else
              f'url = "{engine.url}"\nbearer_token_env_var = "PAD_TOKEN"\n')
    cli.write(".codex/config.toml",
              'model = "standin"\nmodel_provider = "standin"\n\n'
              f'[model_providers.standin]\nname = "standin"\nbase_url = "{standin.url}/v1"\n'
              'wire_api = "responses"\nenv_key = "STANDIN_KEY"\n\n'
              f"[mcp_servers.pad]\n{server}")


def codex_outputs(standin):
    """The text of each tool result Codex sent back, in order."""
    last = standin.requests("openai")[-1]
    return ["\n".join(p.get("text", "") for p in i["output"]) if isinstance(i["output"], list) else i["output"]
            for i in last["input"] if i.get("type") == "function_call_output"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_codex_with_default_approval_runs_reads_and_writes_and_asks_before_a_delete(
        engine, cli, standin, transport):
    s = standin([
        {"tool": "add_note", "args": {"content": f"codex over {transport}", "tags": ["codex"]}},
        {"tool": "search_notes", "args": {"query": f"codex over {transport}", "pad": "*"}},
        {"tool": "delete_note", "args": {"id": "zzzzzzzzzzzz"}},
        {"text": "All done."},
    ])
    codex_config(cli, s, engine, transport, "codex", "codex")
    r = cli.run(["codex", "exec", "--skip-git-repo-check", "save a note, find it, delete something"],
                env={"STANDIN_KEY": "x", "PAD_TOKEN": engine.token})
    assert r.returncode == 0, r.stderr[-2000:]
    added, found, deleted = codex_outputs(s)
    assert "Saved note" in added, added
    # The note with every word first (the other transport's note, sharing
    # some words, may follow it).
    assert f"codex over {transport}" in found.split("\n\n")[1], found
    # delete_note is the one destructive tool: exec mode (approval "never")
    # refuses it rather than running it unasked.
    assert "requires approval" in deleted, deleted
    # Over HTTP the server's own pad and author apply (pad serve --mcp-pad, --mcp-author).
    pad, author = ("codex", "codex") if transport == "stdio" else ("inbox", "agent")
    with engine.client() as c:
        hits = [e for e in c.list(pad=pad)["entries"] if e["content"] == f"codex over {transport}"]
        assert hits and hits[0]["author"] == author, hits


def test_codex_shows_why_a_wrong_token_is_refused(engine, cli, standin):
    s = standin([{"text": "nothing"}])
    codex_config(cli, s, engine, "http", "codex", "codex")
    r = cli.run(["codex", "exec", "--skip-git-repo-check", "hello"],
                env={"STANDIN_KEY": "x", "PAD_TOKEN": "wrong"})
    said = r.stdout + r.stderr
    assert "mcp-http.token" in said and "pad token create" in said, said[-2000:]


# --- Gemini CLI ----------------------------------------------------------------

def gemini_settings(cli, engine, transport, token):
    server = ({"command": pad_binary(), "args": ["mcp"], "env": pad_env(engine, "gemini", "gemini")}
              if transport == "stdio" else
              {"httpUrl": engine.url, "headers": {"Authorization": f"Bearer {token}"}})
    server["trust"] = True
    cli.write(".gemini/settings.json", json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "mcpServers": {"pad": server}}))
    cli.write(".gemini/trustedFolders.json", json.dumps({str(cli.work): "TRUST_FOLDER"}))


def gemini_outputs(standin):
    last = standin.requests("gemini")[-1]
    return [p["functionResponse"]["response"]["output"]
            for c in last["contents"] for p in c.get("parts", []) if "functionResponse" in p]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_gemini_cli_calls_with_wait_for_previous_succeed(engine, cli, standin, transport):
    s = standin([
        {"tool": "add_note", "args": {"content": f"gemini over {transport}", "wait_for_previous": False}},
        {"tool": "search_notes", "args": {"query": f"gemini over {transport}", "pad": "*",
                                          "wait_for_previous": True}},
        {"text": "All done."},
    ])
    gemini_settings(cli, engine, transport, engine.token)
    r = cli.run(["gemini", "-m", "gemini-2.5-flash", "-p", "save a note, then find it"],
                env={"GEMINI_API_KEY": "x", "GOOGLE_GEMINI_BASE_URL": s.url})
    assert r.returncode == 0, r.stderr[-2000:]
    calls = [p["functionCall"] for c in s.requests("gemini")[-1]["contents"]
             for p in c.get("parts", []) if "functionCall" in p]
    assert [c["args"].get("wait_for_previous") for c in calls] == [False, True], calls
    added, found = gemini_outputs(s)
    assert "Saved note" in added and "ignored the argument 'wait_for_previous'" in added, added
    assert f"gemini over {transport}" in found, found


def test_gemini_cli_with_a_wrong_token_shows_the_server_disconnected(engine, cli):
    """Gemini CLI answers every 401 with its own OAuth hint; what it shows is
    what docs/clients.md tells the person to look for."""
    gemini_settings(cli, engine, "http", "wrong")
    r = cli.run(["gemini", "mcp", "list"])
    assert "Disconnected" in r.stdout + r.stderr, r.stdout + r.stderr


# --- Claude Code ---------------------------------------------------------------

@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_claude_code_reads_a_150_note_pad_within_the_budget(engine, cli, standin, transport):
    pad = f"long-{transport}"
    with engine.client(author="agent-big") as c:
        c.add("the plan: migrate the billing tables in three steps", pad=pad, kind="plan", pinned=True)
        for i in range(150):
            c.add(f"note {i:03}: " + "what the migration step found and what is left to do. " * 28, pad=pad)
    s = standin([{"tool": "read_pad", "args": {"pad": pad}}, {"text": "Read it."}])
    server = ({"command": pad_binary(), "args": ["mcp"], "env": pad_env(engine, "claude", pad)}
              if transport == "stdio" else
              {"type": "http", "url": engine.url, "headers": {"Authorization": f"Bearer {engine.token}"}})
    cli.write("mcp.json", json.dumps({"mcpServers": {"pad": server}}))
    r = cli.run(["claude", "-p", "read the pad", "--mcp-config", str(cli.home / "mcp.json"),
                 "--allowedTools", "mcp__pad"],
                env={"ANTHROPIC_API_KEY": "x", "ANTHROPIC_BASE_URL": s.url, "ENABLE_TOOL_SEARCH": "false"})
    assert r.returncode == 0, r.stderr[-2000:]
    results = [b for m in s.requests("anthropic")[-1]["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]
    text = "\n".join(part["text"] for part in results[0]["content"])
    # 150 notes of ~1,500 characters: the whole pad is ~230 KB.
    assert len(text) < 13000, len(text)
    assert "the plan: migrate" in text and "note 149" in text, text[:500]
    assert "left out" in text and "max_chars" in text, text[-500:]


def test_claude_code_shows_why_a_wrong_token_is_refused(engine, cli):
    r = cli.run(["claude", "mcp", "add", "--transport", "http", "pad", engine.url,
                 "--header", "Authorization: Bearer wrong"])
    assert r.returncode == 0, r.stderr
    r = cli.run(["claude", "mcp", "list"])
    said = r.stdout + r.stderr
    assert "401" in said and "mcp-http.token" in said, said


# --- MCP Inspector (TypeScript SDK) ----------------------------------------------

@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_inspector_ask_person_with_the_default_wait_returns_before_the_sdk_times_out(engine, cli, transport):
    server = (["-e", f"PAD_SOCKET={engine.socket}", "-e", "PAD_PAD=inspector", "-e", "PAD_AUTHOR=inspector",
               pad_binary(), "mcp"]
              if transport == "stdio" else
              [engine.url, "--transport", "http", "--header", f"Authorization: Bearer {engine.token}"])
    started = time.monotonic()
    r = cli.run(["mcp-inspector", "--cli", *server, "--method", "tools/call",
                 "--tool-name", "ask_person", "--tool-arg", "question=Rotate the staging keys now?"],
                timeout=100)
    took = time.monotonic() - started
    assert r.returncode == 0, r.stdout[-1000:] + r.stderr[-1000:]
    out = json.loads(r.stdout[r.stdout.index("{"):])
    assert out["isError"] is False
    assert out["content"][0]["text"].startswith("No answer yet after 45 s"), out
    assert took < 60, took
