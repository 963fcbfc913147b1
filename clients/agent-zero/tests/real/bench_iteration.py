"""What the plugin adds to one iteration of Agent Zero's real loop, beside
Agent Zero's own memory recall, on the same machine (docs/benchmarks.md,
"Agent Zero's loop"). A benchmark, not a test: run it by hand.

    A0_DIR=~/agent-zero PAD_BIN=$CARGO_TARGET_DIR/debug/pad \\
      ~/a0-venv/bin/python clients/agent-zero/tests/real/bench_iteration.py

Three runs of the same scripted chat (STEPS steps, the model a stand-in that
answers at once, so an iteration's time is Agent Zero's own work plus its
extensions'), each in a process of its own with 1,000 notes (and memories):
`bare` (neither the plugin nor `_memory`), `plugin` (the plugin, recall
every step), `memory` (Agent Zero's `_memory` with its defaults — recall
every 3rd step, no LLM query preparation — its embedder all-MiniLM-L6-v2
served by the stand-in from the same ONNX model the engine uses; it needs
`onnxruntime` and `tokenizers` in Agent Zero's venv), and `both` (the plugin
and `_memory` on together, the same 1,000 texts in each: the worst case for
duplicates). An iteration is the time between two consecutive chat-model
requests; a duplicate is a text both recalls put into the same prompt.

Two more runs measure what a delegation's task adds (helpers/delegation.py):
the chat hands the STEPS steps to a subordinate (`call_subordinate`), with
the plugin on and its delegation tasks off (`delegated`) or on (`tasks`: a
heartbeat with the steps as `resume` at each of the subordinate's steps,
and the task written and finished once); `writes_ms` is the time the
plugin's own task writes took (the task and its lease, each step's
heartbeat, the outcome), per delegation and per step.
"""

import asyncio
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "python" / "tests"))
sys.path.insert(0, str(HERE))

STEPS = int(os.environ.get("BENCH_STEPS", "60"))
NOTES = int(os.environ.get("BENCH_NOTES", "1000"))
WORDS = ("staging database kubernetes upgrade login token cache deploy rollback migration postgres "
         "redis queue worker timeout retry backup restore certificate dns proxy build release "
         "invoice customer report schedule meeting budget review incident alert latency").split()


def texts(n, seed=7):
    rng = random.Random(seed)
    return [f"note {i}: " + " ".join(rng.choice(WORDS) for _ in range(12)) for i in range(n)]


def embedder():
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer
    from pad_engine import model_dir

    d = model_dir()
    tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
    tok.enable_truncation(256)
    tok.enable_padding()
    session = onnxruntime.InferenceSession(os.path.join(d, "model_quantized.onnx"),
                                           providers=["CPUExecutionProvider"])

    def embed(batch):
        enc = tok.encode_batch(batch)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        out = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                 "token_type_ids": np.zeros_like(ids)})[0]
        pooled = (out * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled.tolist()

    return embed


def run(scenario):
    from a0_setup import prepare, use_models
    from model_standin import ModelStandin
    from pad_engine import Engine, pad_binary

    tmp = pathlib.Path(tempfile.mkdtemp())
    root = prepare(os.environ["A0_DIR"], tmp, pad_binary())
    clock, sizes, holder = [], [], {}

    def on_chat():
        clock.append(time.perf_counter())
        context = holder.get("context")
        extras = context.agent0.loop_data.extras_persistent if context else {}
        sizes.append({k: len(str(v)) for k, v in extras.items()})
        dups.append(len(texts_in(str(extras.get("scratchpad", "")))
                        & texts_in(str(extras.get("memories", "")) + str(extras.get("solutions", "")))))

    memory, plugin = scenario in ("memory", "both"), scenario in ("plugin", "both", "delegated", "tasks")
    delegating = scenario in ("delegated", "tasks")
    dups = []
    model = ModelStandin(embed=embedder() if memory else None, on_chat=on_chat)
    use_models(root, model.api_base, embeddings=memory)
    from helpers import plugins

    plugins.toggle_plugin("scratchpad", plugin)
    writes = {"delegate": [], "step": [], "end": []}
    if delegating:
        from usr.plugins.scratchpad.helpers import delegation, pad

        config = root / "usr" / "plugins" / "scratchpad" / "config.json"
        config.write_text(json.dumps({**pad.DEFAULTS, "delegation_tasks": scenario == "tasks"}))
        for name in writes:
            def timed(*a, _f=getattr(delegation, name), _name=name, **k):
                t = time.perf_counter()
                try:
                    return _f(*a, **k)
                finally:
                    writes[_name].append((time.perf_counter() - t) * 1000)
            setattr(delegation, name, timed)
    engine = Engine(semantic=True)
    os.environ["PAD_SOCKET"] = engine.socket
    try:
        from agent import AgentContext, UserMessage
        from initialize import initialize_agent

        context = AgentContext(initialize_agent(), name="bench")
        if plugin:
            with engine.client(author="user") as c:
                for t in texts(NOTES):
                    c.add(t, pad="inbox")
                wait = time.monotonic() + 300
                while c.stats().get("embed_queue", 0) and time.monotonic() < wait:
                    time.sleep(0.5)
        if memory:
            async def fill():
                from plugins._memory.helpers.memory import Memory

                db = await Memory.get(context.agent0)
                for t in texts(NOTES):
                    await db.insert_text(t, {"area": "main"})

            asyncio.run(fill())
        rng = random.Random(1)
        model.script[:] = [("no_such_tool", {"about": " ".join(rng.choice(WORDS) for _ in range(6))})
                           for _ in range(STEPS)] + [("response", {"text": "done"})]
        if delegating:  # the same steps, taken by a subordinate
            model.script[:] = ([("call_subordinate", {"message": "plan the kubernetes upgrade"})] + model.script
                               + [("response", {"text": "done"})])
        holder["context"] = context
        task = context.communicate(UserMessage(
            message="Find what we know about the kubernetes upgrade and the staging database, then plan it."))
        task.result_sync(timeout=600)
    finally:
        engine.stop()
    laps = [(b - a) * 1000 for a, b in zip(clock[1:], clock[2:])]  # steady state: from the 2nd step
    laps.sort()
    prompt = [s.get("scratchpad", 0) + s.get("memories", 0) + s.get("solutions", 0) for s in sizes[1:]]
    return {"scenario": scenario, "iterations": len(laps),
            "p50_ms": round(statistics.median(laps), 2),
            "p99_ms": round(laps[min(len(laps) - 1, int(len(laps) * 0.99))], 2),
            "mean_ms": round(statistics.fmean(laps), 2),
            "prompt_chars_mean": round(statistics.fmean(prompt)) if prompt else 0,
            "prompt_chars_max": max(prompt) if prompt else 0,
            "duplicates_mean": round(statistics.fmean(dups[1:]), 2) if dups[1:] else 0,
            "writes_ms": {k: round(statistics.fmean(v), 2) for k, v in writes.items() if v}}


def texts_in(section: str) -> set:
    """The benchmark's texts ("note N: …") a recall section holds."""
    import re

    return set(re.findall(r"note \d+: [a-z ]+[a-z]", section))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--scenario":
        print("\nBENCH " + json.dumps(run(sys.argv[2])), flush=True)
        return
    rows = []
    for scenario in sys.argv[1:] or ("bare", "plugin", "memory", "both", "delegated", "tasks"):
        out = subprocess.run([sys.executable, __file__, "--scenario", scenario], capture_output=True,
                             text=True, timeout=1800)
        lines = [l[l.index("BENCH {") + 6:] for l in out.stdout.splitlines() if "BENCH {" in l]
        if not lines:  # (a run may abort at exit, after its line: ONNX Runtime's and faiss's threads)
            print(out.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"{scenario}: failed")
        rows.append(json.loads(lines[-1]))
    print(f"{'run':<8} {'iterations':>10} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'prompt chars (mean/max)':>24} "
          f"{'duplicates':>10}")
    for r in rows:
        print(f"{r['scenario']:<8} {r['iterations']:>10} {r['p50_ms']:>8} {r['p99_ms']:>8} {r['mean_ms']:>8} "
              f"{r['prompt_chars_mean']:>12}/{r['prompt_chars_max']:<11} {r['duplicates_mean']:>10}"
              + (f"  writes ms: {r['writes_ms']}" if r.get("writes_ms") else ""))


if __name__ == "__main__":
    main()
