"""Benchmark: prefill and decode speed of two OpenAI-compatible servers side by side, on real table prompts (#80).

    .venv/bin/python tests/bench/bench_kernels.py --server vllm=http://127.0.0.1:8008/v1 \
        --server llamacpp=http://127.0.0.1:8010/v1 [--prompts 4] [--area kernels]

A claim check costs the server ~1,500 computed prompt tokens and ~400 generated ones, so prefill weighs as much as
decode; docs/bench/serving.md measured decode only (vLLM W4A16 10.3 tokens/s, llama.cpp 10.1 on one stream). Here,
for each server in turn, repetition by repetition (so a change in the machine's load falls on both):

- ``prefill_tokens_per_s``: a real table-program prompt (PubHealthTab dev claims, the tuning split, table-first
  layout) opened by a unique line so no prefix cache serves it, asking for 1 token: prompt tokens / seconds;
- ``decode_tokens_per_s``: a short prompt that asks for a long answer, 128 tokens greedy, one stream;
- ``json_program_s``: the same program prompt with the program's JSON schema as ``response_format`` (one sample),
  seconds per request, and whether the reply parsed as JSON (a server that ignores the schema is said so);
- with ``--samples n``, ``program_<n>_samples_s``: what a check asks, n programs at temperature 0.7 (one request
  with ``n``, or n requests at once to a server without it, ``--fan-out``), seconds, and the share that parsed.

Both servers must be up and otherwise idle (nothing else may use the machine during the run). Gate, fixed before
the run: a llama.cpp serving path is worth building on this machine if its median prefill is at least 1.5x
vLLM's here (the issue's end-to-end threshold for serving through llama.cpp); the end-to-end comparison (parallel
samples, logprobs) is the next step, not this bench. Writes docs/bench/<area>.{json,md,png}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from assistant.evals.report import write_bench  # noqa: E402
from assistant.settings import Settings  # noqa: E402

GATE = 1.5
DECODE_PROMPT = "Count from 1 to 400, one number per line, with nothing else."


def table_prompts(k: int) -> list[tuple[str, dict]]:
    """The program prompt and schema of the first ``k`` PubHealthTab dev claims (seeded order)."""
    from assistant.evals.tables_eval import load_split, select_items
    from tools._cells import TypedTable
    from tools._table_grammar import typed_program_schema
    from tools._table_program import program_prompt
    from tools._table_shape import shape_for_programs

    settings = Settings()
    items = select_items("pubhealthtab", load_split("pubhealthtab", Path(settings.eval_data_dir), "dev"), seed=0,
                         limit=None, split="dev")
    out = []
    for it in items:
        typed = TypedTable.build(shape_for_programs(it.table).table)
        prompt = program_prompt("table-first", "program", typed, "claim", it.claim)
        if 3000 <= len(prompt) <= 7000:  # ~1,000-2,000 tokens, a typical check's
            out.append((prompt, typed_program_schema(typed, True).model_json_schema()))
        if len(out) == k:
            break
    return out


def chat(client: httpx.Client, base: str, model: str, prompt: str, **extra) -> tuple[dict, float]:
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0, **extra}
    t0 = time.perf_counter()
    resp = client.post(f"{base}/chat/completions", json=body)
    resp.raise_for_status()
    return resp.json(), time.perf_counter() - t0


def parses(reply: dict) -> bool:
    try:
        json.loads(reply["choices"][0]["message"]["content"])
        return True
    except (ValueError, TypeError, KeyError, IndexError):
        return False


def model_of(client: httpx.Client, base: str) -> str:
    return client.get(f"{base}/models").json()["data"][0]["id"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", action="append", required=True, help="name=base_url (give two)")
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--area", default="kernels")
    ap.add_argument("--samples", type=int, default=0, help="also time the program request with this many samples")
    ap.add_argument("--fan-out", action="append", default=[],
                    help="a server (by name) without `n`: its samples are sent as that many requests at once")
    ap.add_argument("--no-json", action="append", default=[],
                    help="a server (by name) not asked the grammar-bound program (llama-cpp-python 0.3.36 cannot "
                         "parse the typed program grammar's GBNF and exits)")
    ap.add_argument("--json-object", action="append", default=[],
                    help="a server (by name) that takes the schema as {type: json_object, schema} (llama-cpp-python)")
    ap.add_argument("--runs", action="store_true", help="write under docs/bench/runs/")
    args = ap.parse_args()
    servers = dict(s.split("=", 1) for s in args.server)
    prompts = table_prompts(args.prompts)
    rows: dict[str, dict[str, list]] = {name: {"prefill": [], "decode": [], "json_s": [], "json_ok": [],
                                               "samples_s": [], "samples_ok": []} for name in servers}
    with httpx.Client(timeout=1800) as client:
        models = {name: model_of(client, base) for name, base in servers.items()}
        for name, base in servers.items():  # warm-up: first requests allocate
            chat(client, base, models[name], "Say hello.", max_tokens=4)
        for i, (prompt, schema) in enumerate(prompts):
            for name, base in (list(servers.items()) if i % 2 == 0 else list(servers.items())[::-1]):
                unique = f"Request {uuid.uuid4().hex}.\n" + prompt
                reply, seconds = chat(client, base, models[name], unique, max_tokens=1)
                rows[name]["prefill"].append(reply["usage"]["prompt_tokens"] / seconds)
                reply, seconds = chat(client, base, models[name], DECODE_PROMPT + f" ({uuid.uuid4().hex[:6]})",
                                      max_tokens=128)
                rows[name]["decode"].append(reply["usage"]["completion_tokens"] / seconds)
                # llama-cpp-python reads a schema from OpenAI's older json_object form only (json_schema is ignored)
                if name in args.no_json:
                    print(f"  {name} prompt {i + 1}: prefill {rows[name]['prefill'][-1]:.1f} tok/s, decode "
                          f"{rows[name]['decode'][-1]:.1f} tok/s", flush=True)
                    continue
                fmt = {"type": "json_object", "schema": schema} if name in args.json_object else \
                    {"type": "json_schema", "json_schema": {"name": "TableProgram", "schema": schema}}
                reply, seconds = chat(client, base, models[name], f"Request {uuid.uuid4().hex}.\n" + prompt,
                                      max_tokens=240, response_format=fmt)
                rows[name]["json_s"].append(seconds)
                rows[name]["json_ok"].append(parses(reply))
                if args.samples > 1:  # the check's real request: n samples of one prompt at temperature 0.7
                    unique = f"Request {uuid.uuid4().hex}.\n" + prompt
                    t0 = time.perf_counter()
                    if name in args.fan_out:  # a server without ``n``: n requests at once, its slots batch them
                        with ThreadPoolExecutor(args.samples) as pool:
                            replies = list(pool.map(lambda _: chat(client, base, models[name], unique, max_tokens=240,
                                                                   response_format=fmt, temperature=0.7)[0],
                                                    range(args.samples)))
                    else:
                        replies = [chat(client, base, models[name], unique, max_tokens=240, response_format=fmt,
                                        temperature=0.7, n=args.samples)[0]]
                    rows[name]["samples_s"].append(time.perf_counter() - t0)
                    choices = [c for r in replies for c in r["choices"]]
                    rows[name]["samples_ok"].append(sum(parses({"choices": [c]}) for c in choices) / args.samples)
                print(f"  {name} prompt {i + 1}: prefill {rows[name]['prefill'][-1]:.1f} tok/s, decode "
                      f"{rows[name]['decode'][-1]:.1f} tok/s, JSON program {seconds:.1f} s", flush=True)
    results: dict[str, tuple[float, str]] = {}
    for name, r in rows.items():
        results[f"prefill_tokens_per_s__{name}"] = (statistics.median(r["prefill"]), "tokens/s")
        results[f"decode_tokens_per_s__{name}"] = (statistics.median(r["decode"]), "tokens/s")
        if r["json_s"]:
            results[f"json_program_s__{name}"] = (statistics.median(r["json_s"]), "s")
            results[f"json_parsed_share__{name}"] = (sum(r["json_ok"]) / len(r["json_ok"]), "share")
        if r["samples_s"]:
            results[f"program_{args.samples}_samples_s__{name}"] = (statistics.median(r["samples_s"]), "s")
            results[f"program_samples_parsed_share__{name}"] = (statistics.mean(r["samples_ok"]), "share")
    names = list(servers)
    if len(names) == 2:
        a, b = names
        ratio = statistics.median(rows[b]["prefill"]) / statistics.median(rows[a]["prefill"])
        results[f"prefill_ratio_{b}_over_{a}"] = (ratio, "x")
        verdict = "MET" if ratio >= GATE else "NOT met"
        notes = (f"{len(prompts)} PubHealthTab dev program prompts, interleaved. Gate fixed before the run: {b}'s "
                 f"median prefill at least {GATE}x {a}'s: {ratio:.2f}x, {verdict}. Servers: "
                 + ", ".join(f"{n} = {u} ({models[n]})" for n, u in servers.items()) + "."
                 + (f" Not asked the grammar-bound program: {', '.join(args.no_json)}." if args.no_json else ""))
    else:
        notes = f"{len(prompts)} prompts."
    print(notes)
    write_bench(args.area, results, notes=notes, runs=args.runs)


if __name__ == "__main__":
    main()
