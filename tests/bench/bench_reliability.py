"""Reliability and security counts for issue #17, measured, in one file: ``docs/bench/reliability.json``.

Run on demand (about two minutes, no model needed)::

    .venv/bin/python tests/bench/bench_reliability.py

It runs:

- the hostile-upload corpus (tests/hostile_uploads.py): each case in its own process, 10 s and 500 MB;
- the two-user probe on a live Chainlit server (tests/reliability_probes.py: ``cross_user_reads``);
- questions asked while the model server is killed mid-turn, and one while the app itself is killed -9,
  then a "restart" that counts the questions no longer stored;
- a stand-in model server that crashes three times under the supervisor;

and copies the concurrent-session counts from ``docs/bench/load.json`` (``tests/bench/bench_load.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.parse_args()
    from assistant.evals.report import write_bench
    from tests.hostile_uploads import run_corpus
    from tests.reliability_probes import cross_user_reads, lost_turns_after_server_kill, server_restarts_recovered
    from tests.test_api_isolation import feedback_and_revoked_logins

    work = Path(tempfile.mkdtemp(prefix="evidentia-reliability-"))
    corpus = run_corpus(work / "hostile")
    wrong = [(o.case, o.problem) for o in corpus["outcomes"] if o.problem]
    print(f"hostile uploads: {corpus['hostile_uploads_tried']} tried, problems: {wrong}", flush=True)
    users = cross_user_reads(work / "users")
    print(f"cross-user attempts: {len(users['attempts'])}, leaks: {users['cross_user_reads']}", flush=True)
    writes = feedback_and_revoked_logins(work / "writes")
    print(f"cross-user writes: {writes['cross_user_writes']}, ended logins accepted: "
          f"{writes['ended_logins_accepted']}", flush=True)
    lost = lost_turns_after_server_kill(work / "lost")
    print(f"lost turns: {lost['lost_turns_after_server_kill']} of {lost['turns_tried']} "
          f"({lost['stored_outcomes']})", flush=True)
    restarts = server_restarts_recovered(work / "restarts")
    print(f"restarts: {restarts}", flush=True)

    load_path = ROOT / "docs" / "bench" / "load.json"
    load = json.loads(load_path.read_text())["results"] if load_path.exists() else {}
    real = "concurrent_sessions_real" in load
    sfx = "_real" if real else ""

    metrics = {
        "lost_turns_after_server_kill": (lost["lost_turns_after_server_kill"], "count"),
        "turns_asked_during_kills": (lost["turns_tried"], "count"),
        "hostile_uploads_tried": (corpus["hostile_uploads_tried"], "count"),
        "hostile_upload_crashes_or_hangs": (corpus["hostile_upload_crashes_or_hangs"], "count"),
        "hostile_upload_wrong_or_unclear": (corpus["silently_wrong_or_unclear"], "count"),
        "hostile_upload_max_s": (corpus["max_seconds"], "s"),
        "hostile_upload_max_rss_mb": (corpus["max_rss_mb"], "MB"),
        **{f"hostile_uploads_{k}": (v, "count") for k, v in corpus["by_class"].items()},
        "formulas_executed": (corpus["formulas_executed"], "count"),
        "cross_user_reads": (users["cross_user_reads"], "count"),
        "cross_user_attempts": (len(users["attempts"]), "count"),
        "cross_user_writes": (writes["cross_user_writes"], "count"),
        "ended_logins_accepted": (writes["ended_logins_accepted"], "count"),
        "server_restarts_recovered": (restarts["server_restarts_recovered"], "count"),
        "server_crashes_injected": (restarts["crashes"], "count"),
    }
    if load:
        metrics["concurrent_sessions"] = (load[f"concurrent_sessions{sfx}"]["value"], "count")
        metrics["concurrent_errors"] = (load[f"concurrent_errors{sfx}"]["value"], "count")
        metrics["concurrent_crossed_turns"] = (load[f"crossed_turns{sfx}"]["value"], "count")
    notes = f"""
How each count was made (all in one run of this script; `tests/bench/bench_reliability.py`):

- **Lost turns**: {lost['turns_tried'] - 1} questions asked while the model server was killed mid-turn (alternately
  during the intent and the answer step), and one while the app process itself was killed -9; the store was then
  re-opened from disk. Stored outcomes: {sorted(set(lost['stored_outcomes'].values()))}.
- **Hostile uploads**: the corpus of tests/hostile_uploads.py, each case through `add_table_file` in its own process
  (limits 10 s, 500 MB). A case counts as *wrong or unclear* if it loaded wrong content or was refused with a message
  that is not one plain sentence (or one that does not name what the case expects). By class: {corpus['by_class']}.
  Slowest {corpus['max_seconds']:.2f} s ({corpus['slowest_case']!r}), peak RSS {corpus['max_rss_mb']:.0f} MB
  (the process's own baseline included).
- **Formulas executed**: formula cells must come back as the value Excel saved, or as their text marked
  "not computed"; a computed value or a canary file counts.
- **Cross-user reads**: two accounts on a live Chainlit server each try to read, list, rename and delete the other's
  thread by id through the HTTP API (plus one anonymous read); any attempt that returns or changes the other's data
  counts.
- **Cross-user writes / ended logins**: bob tries to write, overwrite and delete feedback in ann's chat through
  Chainlit's `/feedback` routes; a removed account's and a changed password's old login tokens are replayed
  against the API. Each attempt that succeeds or leaves a trace counts.
- **Restarts recovered**: a stand-in model server crashes {restarts['crashes']} times under the supervisor
  (`evidentia run`'s); recovered = restarts after which it answered again (answers after: {restarts['answers_after']}).
- **Concurrent sessions**: copied from `docs/bench/load.json` ({'the served model' if real else
  'the scripted fake server; the real-model run is not in that file yet'}).
"""
    write_bench("reliability", metrics, notes=notes)


if __name__ == "__main__":
    main()
