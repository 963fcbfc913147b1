"""Handing work to A2A agents: a real engine, and real A2A servers — the
official SDK's, FastA2A's, and FastA2A exactly as Agent Zero ships it —
each running a scripted agent (agents.py)."""

import json
import os
import pathlib
import socket
import stat
import subprocess
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "clients" / "python" / "tests"))

from pad_engine import Engine, free_port, pad_binary  # noqa: E402
import scratchpad  # noqa: E402

TOKEN = "s3cr3t-a0-token"


class Agent:
    """One scripted agent on a real A2A server, on loopback."""

    def __init__(self, flavour: str, tmp: pathlib.Path, port: int = 0):
        self.flavour, self.port = flavour, port or free_port()
        self.log = tmp / f"{flavour}-{self.port}.log"
        self.proc = None
        self.token = TOKEN
        self.start()

    @property
    def url(self) -> str:
        base = f"http://127.0.0.1:{self.port}"
        return f"{base}/a2a/t-{self.token}" if self.flavour == "agent-zero" else base

    def start(self, token: str = TOKEN) -> None:
        self.token = token
        self.proc = subprocess.Popen([sys.executable, str(HERE / "agents.py"), self.flavour,
                                      str(self.port), str(self.log)],
                                     env=dict(os.environ, A2A_AGENT_TOKEN=token))
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the {self.flavour} agent exited")
                time.sleep(0.05)
        raise RuntimeError(f"the {self.flavour} agent did not come up")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # a request it never answers
                self.proc.kill()
                self.proc.wait()

    def received(self) -> list:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def delivery_becomes(c, note_id, state):
    """Waits for a delivery's state: the engine posts what the agent said,
    then saves the state, so a read between the two (a busy machine) still
    sees the one before."""
    wait_for(f"the delivery {state}", lambda: delivery(c, note_id)["state"] == state)


def wait_for(what, check, timeout=30.0):
    deadline = time.time() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def replies(c, note_id):
    return c.thread(note_id)["replies"]


def delivery(c, note_id):
    found = c.deliveries(entry=note_id)
    return found[0] if found else None


@pytest.fixture
def engine():
    e = Engine()
    yield e
    e.stop()


@pytest.fixture
def agents(tmp_path):
    started = []

    def make(flavour, port=0):
        a = Agent(flavour, tmp_path, port)
        started.append(a)
        return a

    yield make
    for a in started:
        a.stop()


def test_registering_reads_the_card_and_keeps_the_secret(agents):
    engine = Engine(log_level="debug")
    try:
        registering_reads_the_card_and_keeps_the_secret(engine, agents)
        # Debug logs of registering, sending, following and failing name no secret.
        log = engine.log()
        assert "registered agent agent-zero" in log
        assert TOKEN not in log and "bearer-xyz" not in log
    finally:
        engine.stop()


def registering_reads_the_card_and_keeps_the_secret(engine, agents):
    zero = agents("agent-zero")
    sdk = agents("sdk")
    with engine.client() as c:
        c.hello(author="user")
        shown = c.add_agent("agent-zero", zero.url)
        assert shown["card"]["name"] == "Agent Zero"
        assert shown["card"]["skills"][0]["name"] == "General AI Assistant"
        assert shown["url"].endswith("/a2a/t-…") and TOKEN not in json.dumps(shown)
        c.add_agent("helper", sdk.url, token="bearer-xyz")
        listed = c.agents()
        names = {a["name"]: a for a in listed["agents"]}
        assert names["helper"]["card"]["name"] == "Scripted SDK agent"
        assert TOKEN not in json.dumps(listed) and "bearer-xyz" not in json.dumps(listed)
        with pytest.raises(scratchpad.Conflict):
            c.add_agent("helper", sdk.url)
        with pytest.raises(scratchpad.Unavailable) as down:
            c.add_agent("nobody", f"http://127.0.0.1:{free_port()}")
        assert "cannot reach" in str(down.value) and "A2A server" in str(down.value)
        with pytest.raises(scratchpad.InvalidParams):
            c.add_agent("x", "ftp://somewhere")
        # What the CLI shows, and the file the secrets live in.
        env = dict(engine.env)
        out = subprocess.run([pad_binary(), "agent", "ls"], env=env, capture_output=True,
                             text=True, check=True).stdout
        assert "agent-zero" in out and "Agent Zero" in out and TOKEN not in out
        # The URL with its token can come on stdin, out of `ps`; a query in
        # it stays after the card's path.
        again = subprocess.run([pad_binary(), "agent", "add", "zero-again", "--a2a", "-"], env=env,
                               input=zero.url + "?project=p1\n", capture_output=True, text=True)
        assert again.returncode == 0, again.stderr
        assert "zero-again" in again.stdout and TOKEN not in again.stdout
        assert {a["name"]: a for a in c.agents()["agents"]}["zero-again"]["card"]["name"] == "Agent Zero"
        path = pathlib.Path(engine.data) / "agents.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        # Work handed over and back: no answer, export or event names the secret.
        sub = c.subscribe(pads=["proj"])
        note = c.send("agent-zero", "hello", pad="proj")
        wait_for("the answer", lambda: [r for r in replies(c, note["id"]) if r["kind"] == "result"])
        seen = [c.deliveries(pad="proj"), c.thread(note["id"]), c.export_pad("proj", "json"),
                c.export_pad("proj"), c.agents()]
        events = []
        while len(events) < 5:
            events.append(next(iter(sub)))
        assert any(ev["type"] == "delivery" for ev in events)
        assert TOKEN not in json.dumps(seen) + json.dumps(events)
        assert c.remove_agent("helper")["removed"] is True
        assert "helper" not in {a["name"] for a in c.agents()["agents"]}


@pytest.mark.parametrize("flavour", ["sdk", "fasta2a"])
def test_question_answer_result(engine, agents, flavour):
    agent = agents(flavour)
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("helper", agent.url)
        note = c.send("helper", "please ask me which database", pad="proj")
        question = wait_for("the agent's question", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "question"), None))
        assert question["author"] == "helper"
        assert "needs_eyes" in question["tags"]
        assert question["content"] == "Which database: staging or prod?"
        delivery_becomes(c, note["id"], "waiting_for_you")
        c.reply(question["id"], "staging")
        result = wait_for("the result", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "result"), None))
        assert result["content"] == "done: used staging"
        assert result["author"] == "helper"
        d = wait_for("done", lambda: (d := delivery(c, note["id"])) and d["state"] == "done" and d)
        got = agent.received()
        assert [m["text"] for m in got] == ["please ask me which database", "staging"]
        assert got[0]["context"] == got[1]["context"]
        if flavour == "sdk":
            # The answer went back on the same task.
            assert got[0]["task"] == got[1]["task"] == d["task"]
            status = [r for r in replies(c, note["id"]) if r["kind"] == "note" and r["author"] == "helper"]
            assert [s["content"] for s in status] == ["looking into it"]


@pytest.mark.parametrize("flavour", ["sdk", "fasta2a", "agent-zero"])
def test_a_failure_comes_back_needing_eyes(engine, agents, flavour):
    agent = agents(flavour)
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("helper", agent.url)
        note = c.send("helper", "this will fail", pad="proj")
        failed = wait_for("the failure", lambda: next(
            (r for r in replies(c, note["id"]) if "needs_eyes" in r["tags"]), None))
        assert failed["author"] == "helper"
        reason = "it gave no reason" if flavour == "agent-zero" else "the disk is full"
        assert failed["content"] == f"helper failed: {reason}"
        delivery_becomes(c, note["id"], "failed")


def test_agent_zero_as_shipped_follows_the_new_task_of_each_message(engine, agents):
    zero = agents("agent-zero")
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("agent-zero", zero.url)
        note = c.add("@agent-zero summarise the logs", "proj", to=["@agent-zero"])
        first = wait_for("the answer", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "result"), None))
        assert first["content"] == "agent zero says: @agent-zero summarise the logs"
        # A follow-up in the thread: the same context, a new task, its reply a message.
        c.reply(first["id"], "and the errors only")
        second = wait_for("the second answer", lambda: [
            r for r in replies(c, note["id"]) if r["kind"] == "result"][1:])
        assert second[0]["content"] == "agent zero says: and the errors only"
        got = zero.received()
        assert len(got) == 2 and got[0]["context"] == got[1]["context"]
        assert got[0]["task"] != got[1]["task"]
        assert delivery(c, note["id"])["task"] != got[0]["task"]


def test_an_agent_that_is_down_is_retried_then_reached(engine, agents):
    agent = agents("fasta2a")
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("helper", agent.url)
        agent.stop()
        note = c.send("helper", "echo this when you are back", pad="proj")
        d = wait_for("a failed try", lambda: (d := delivery(c, note["id"])) and d["attempts"] >= 1 and d)
        assert d["state"] == "pending" and d["detail"].startswith("not delivered: cannot reach")
        assert "helper" in {a["name"] for a in c.agents()["agents"] if a["reachable"] is False}
        agent.start()
        result = wait_for("the result", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "result"), None), timeout=40)
        assert result["content"] == "echo: echo this when you are back"


def test_after_retrying_long_enough_the_person_is_asked(agents):
    e = Engine(extra_args=["--agent-retry-seconds", "2"])
    try:
        agent = agents("fasta2a")
        with e.client() as c:
            c.hello(author="user")
            c.add_agent("helper", agent.url)
            agent.stop()
            note = c.send("helper", "echo me eventually", pad="proj")
            asked = wait_for("the question", lambda: next(
                (r for r in replies(c, note["id"]) if r["kind"] == "question"), None))
            assert asked["author"] == "engine" and "needs_eyes" in asked["tags"]
            assert asked["choices"] == ["retry", "drop"]
            assert "could not deliver this note to helper" in asked["content"]
            delivery_becomes(c, note["id"], "failed")
            agent.start()
            c.reply(asked["id"], "retry")
            result = wait_for("the result", lambda: next(
                (r for r in replies(c, note["id"]) if r["kind"] == "result"), None))
            assert result["content"] == "echo: echo me eventually"
            # "retry" was the person's word to the pad, not a message for the agent.
            assert [m["text"] for m in agent.received()] == ["echo me eventually"]
    finally:
        e.stop()


def test_an_engine_killed_while_the_agent_works_still_brings_the_result_once(engine, agents):
    agent = agents("sdk")
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("helper", agent.url)
        note = c.send("helper", "slow work please", pad="proj")
        wait_for("working", lambda: (d := delivery(c, note["id"])) and d["state"] == "working")
    engine.kill()
    engine.start()
    with engine.client() as c:
        wait_for("the result", lambda: [r for r in replies(c, note["id"]) if r["kind"] == "result"])
        time.sleep(1.5)
        results = [r for r in replies(c, note["id"]) if r["kind"] == "result"]
        assert [r["content"] for r in results] == ["echo: slow work please"]
        delivery_becomes(c, note["id"], "done")
        assert len(agent.received()) == 1


def test_a_token_hands_work_only_to_agents_its_grant_names(engine, agents):
    agent = agents("fasta2a")
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("helper", agent.url)
        secret = c.create_token("researcher", ["proj"])
        allowed = c.call("token.create", {"name": "lead", "pads": ["proj"], "agents": ["helper"]})
        assert allowed["token"]["agents"] == ["helper"]
    with engine.client() as t:
        t.hello(token=secret)
        with pytest.raises(scratchpad.Forbidden) as refused:
            t.send("helper", "do my bidding", pad="proj")
        assert "names no agents" in str(refused.value) and "--agents helper" in str(refused.value)
        # The grant is checked on the name the engine stores, however spelled.
        for spelling in ["@ helper", "@\thelper", "@@ HELPER", " HeLPer "]:
            with pytest.raises(scratchpad.Forbidden):
                t.add("do my bidding", "proj", to=[spelling])
        with pytest.raises(scratchpad.Forbidden):
            t.add_agent("mine", agent.url)
    with engine.client() as t:
        t.hello(token=allowed["secret"])
        note = t.send("helper", "echo for the lead", pad="proj")
        assert note["author"] == "lead"
        result = wait_for("the result", lambda: next(
            (r for r in replies(t, note["id"]) if r["kind"] == "result"), None))
        assert result["content"] == "echo: echo for the lead"
    with engine.client() as t:
        t.hello(token=secret)
        # An agent with no endpoint (MCP only): the note waits in its inbox.
        t.add("have a look at the flaky test", "proj", to=["coder"])
    with engine.client() as c:
        c.hello(author="coder")
        box = c.inbox()
        assert [e["content"] for e in box["addressed"]] == ["have a look at the flaky test"]
        assert c.inbox()["addressed"] == []
    assert [m["text"] for m in agent.received()] == ["echo for the lead"]


def test_a_token_without_the_agent_in_its_grant_cannot_steer_it_through_replies(engine, agents):
    """A reply in a thread handed to an agent goes to the agent as the
    person's words; an answer to its question continues its task. A token
    whose grant does not name the agent writes in the pad as it may, but
    what it writes there stays in the thread."""
    agent = agents("sdk")
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("helper", agent.url)
        secret = c.create_token("bystander", ["proj"])
        note = c.send("helper", "please ask me which database", pad="proj")
        question = wait_for("the agent's question", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "question"), None))
    with engine.client() as t:
        t.hello(token=secret)
        t.reply(question["id"], "prod")
        t.reply(note["id"], "also drop the users table")
    time.sleep(1.5)
    with engine.client() as c:
        assert [m["text"] for m in agent.received()] == ["please ask me which database"]
        delivery_becomes(c, note["id"], "waiting_for_you")
        c.reply(question["id"], "staging")
        wait_for("the result", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "result"), None))
        assert [m["text"] for m in agent.received()] == ["please ask me which database", "staging"]


def test_the_roster_says_who_is_here_and_what_they_do(engine, agents):
    agent = agents("fasta2a")
    with engine.client() as c, engine.client() as worker:
        c.hello(author="user")
        c.add_agent("helper", agent.url)
        worker.hello(author="agent-x")
        task = worker.add_task("migrate the staging db", "proj")
        worker.claim_task("proj", agent="agent-x")
        worker.add("approve $1,900/month?", "proj", choices=["approve", "deny"])
        roster = c.agents()
        seen = {s["author"]: s for s in roster["seen"]}
        x = seen["agent-x"]
        assert x["connected"] == 1 and x["pad"] == "proj"
        assert [t["id"] for t in x["claimed"]] == [task["id"]]
        assert [q["content"] for q in x["open_questions"]] == ["approve $1,900/month?"]
        assert seen["helper"]["registered"] is True
    with engine.client() as c:
        c.hello(author="user")
        # The engine hears the worker's connection close a moment after it
        # does (later on a busy machine): wait for it, bounded.
        wait_for("agent-x's connection to be gone", lambda: {
            s["author"]: s for s in c.agents()["seen"]}["agent-x"]["connected"] == 0)


def test_a_hanging_agent_delays_only_its_own_deliveries(engine, agents):
    """Looks at agents once went one at a time, each waiting up to 15 s:
    behind six notes to a hanging agent, a healthy one-step task waited
    more than a minute."""
    stuck, helper = agents("hanging"), agents("sdk")
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("stuck", stuck.url)
        c.add_agent("helper", helper.url)
        for i in range(6):
            c.send("stuck", f"job {i}", pad="proj")
        time.sleep(0.5)
        started = time.time()
        note = c.send("helper", "a quick one", pad="proj")
        result = wait_for("the result", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "result"), None), timeout=45)
        took = time.time() - started
        assert result["content"] == "echo: a quick one"
        # Alone it takes about a second; behind the hanging agent it took 75 s.
        assert took < 30, took
        print(f"healthy agent's result beside a hanging one: {took:.2f} s")
    stopping = time.time()
    engine.stop()
    assert time.time() - stopping < 10, "a stop does not wait out a hanging call"


def test_a_huge_answer_is_one_note_that_says_it_was_cut(engine, agents):
    """A 4 MB answer once became ~1,000 notes."""
    agent = agents("sdk")
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("helper", agent.url)
        note = c.send("helper", "a huge report please", pad="proj")
        result = wait_for("the result", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "result"), None), timeout=60)
        time.sleep(1)
        assert len(replies(c, note["id"])) <= 2  # the status line and the result
        assert result["content"].startswith("xxxx")
        assert "more characters cut: a note holds at most" in result["content"][-200:]
        assert f"The whole answer is with helper (task {delivery(c, note['id'])['task']})" in result["content"]


def test_a_scoped_token_sees_the_roster_of_its_own_pads_only(engine, agents):
    """The roster shows a token the agents its grant names (not their last
    error, which may quote any pad), deliveries counted in its pads, and
    the authors who wrote there — not everyone connected."""
    agent = agents("fasta2a")
    with engine.client() as c, engine.client() as elsewhere:
        c.hello(author="user")
        c.add_agent("helper", agent.url)
        c.add_agent("other", agent.url)
        lead = c.call("token.create", {"name": "lead", "pads": ["proj"], "agents": ["helper"]})["secret"]
        blind = c.create_token("blind", ["proj"])
        elsewhere.hello(author="agent-private")
        elsewhere.add("private work", "secret-pad")
        agent.stop()
        c.send("helper", "the launch codes are 0000", pad="secret-pad")
        wait_for("an error", lambda: any(a["error"] for a in c.agents()["agents"] if a["name"] == "helper"))
        with engine.client() as t:
            t.hello(token=lead)
            t.add("a note of the lead", "proj")
            roster = t.agents()
            assert [a["name"] for a in roster["agents"]] == ["helper"]
            assert roster["agents"][0]["error"] is None and roster["agents"][0]["active"] == 0
            authors = {s["author"] for s in roster["seen"]}
            assert "agent-private" not in authors and "user" not in authors, authors
            assert "lead" in authors and "other" not in authors
            assert "0000" not in json.dumps(roster)
        with engine.client() as t:
            t.hello(token=blind)
            roster = t.agents()
            assert roster["agents"] == [] and "helper" not in {s["author"] for s in roster["seen"]}
        owner = c.agents()
        assert {a["name"] for a in owner["agents"]} == {"helper", "other"}
        assert "agent-private" in {s["author"] for s in owner["seen"]}


def test_agent_zero_restarted_without_its_task_is_sent_the_note_again_once(engine, agents):
    """Agent Zero keeps A2A tasks in memory: restarted mid-task, it answers
    tasks/get with "Task not found". The thread says so, the note goes again
    once, and its result comes back once."""
    agent = agents("agent-zero")
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("agent-zero", agent.url)
        note = c.send("agent-zero", "a slow job", pad="proj")
        wait_for("the task to run", lambda: (d := delivery(c, note["id"])) and d["state"] == "working")
        agent.stop()
        agent.start()
        lost = wait_for("the loss said", lambda: next(
            (r for r in replies(c, note["id"]) if "lost this task" in r["content"]), None), timeout=40)
        assert lost["author"] == "agent-zero" and "sending it again" in lost["content"]
        result = wait_for("the result", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "result"), None), timeout=40)
        assert "a slow job" in result["content"]
        time.sleep(1)
        assert [r["kind"] for r in replies(c, note["id"])].count("result") == 1
        assert [m["text"] for m in agent.received()] == ["a slow job", "a slow job"]  # sent once more, not twice
        delivery_becomes(c, note["id"], "done")


def test_a_refused_token_asks_for_the_new_url_and_registering_again_sends_the_note(engine, agents):
    """Agent Zero's A2A URL carries a token that changes with its login: the
    engine asks the person at once (not after minutes of retries), and
    registering the agent again with the new URL sends the note at once."""
    agent = agents("agent-zero")
    with engine.client() as c:
        c.hello(author="user")
        c.add_agent("agent-zero", agent.url)
        agent.stop()
        agent.start(token="n3w-l0gin-t0ken")
        note = c.send("agent-zero", "echo after the new login", pad="proj")
        asked = wait_for("the question", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "question"), None), timeout=20)
        assert asked["author"] == "engine" and "needs_eyes" in asked["tags"]
        assert "refused this note" in asked["content"] and "--replace" in asked["content"]
        assert "s3cr3t" not in asked["content"] and "n3w-l0gin" not in asked["content"]
        delivery_becomes(c, note["id"], "failed")
        c.add_agent("agent-zero", agent.url, replace=True)
        result = wait_for("the result", lambda: next(
            (r for r in replies(c, note["id"]) if r["kind"] == "result"), None), timeout=30)
        assert result["content"] == "agent zero says: echo after the new login"
