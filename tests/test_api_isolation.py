"""Two users on a live UI server try to read each other's thread by id through Chainlit's API (#17)."""

from __future__ import annotations

from tests.reliability_probes import cross_user_reads


def test_two_users_cannot_read_each_others_threads(tmp_path):
    out = cross_user_reads(tmp_path / "data")
    assert out["own_reads_ok"] == 2 and out["own_threads_listed"] == 2, out  # the probe can see a thread: a refusal below is not a broken probe
    assert len(out["attempts"]) == 11
    assert out["cross_user_reads"] == 0, out["attempts"]
    assert all(a["status"] in (401, 403, 404) for a in out["attempts"] if a["kind"] in ("read", "element",
                                                                                         "rename", "delete"))


def feedback_and_revoked_logins(data_dir) -> dict:
    """On a live server: feedback written into another user's chat, and old login tokens of a removed account
    and of a changed password.

    Chainlit's ``/feedback`` routes take a message id with no author check, and its login token outlives the
    account it names; both are closed by assistant/ui/access.py. Returns what each attempt got.
    """
    import sqlite3
    import time

    import httpx

    from memory.accounts import Accounts
    from tests.reliability_probes import PASSWORDS, _add_thread, chainlit_server

    data_dir.mkdir(parents=True, exist_ok=True)
    accounts = Accounts(data_dir / "threads.db")
    logins = dict(PASSWORDS, carol="carol's long password")
    for name, password in logins.items():
        accounts.add(name, password)
    out = {}
    with chainlit_server(data_dir) as url:
        c = {}
        for name, password in logins.items():
            c[name] = httpx.Client(base_url=url, timeout=30)
            c[name].post("/login", data={"username": name, "password": password}).raise_for_status()
        threads = {name: _add_thread(data_dir / "threads.db", name, f"{name}'s chat") for name in PASSWORDS}
        con = sqlite3.connect(data_dir / "threads.db")
        steps = {name: con.execute('SELECT id FROM steps WHERE "threadId" = ?', [tid]).fetchone()[0]
                 for name, tid in threads.items()}

        def put(who, **feedback):
            return c[who].put("/feedback", json={"feedback": {"value": 0, **feedback}, "sessionId": "none"})

        own = put("ann", forId=steps["ann"], threadId=threads["ann"], comment="ann's own note")
        out["own_feedback"] = own.status_code
        anns_feedback = own.json().get("feedbackId") if own.status_code == 200 else None
        attempts = {
            "on_her_message": put("bob", forId=steps["ann"], threadId=threads["bob"], comment="bob was here"),
            "in_her_chat": put("bob", forId=steps["bob"], threadId=threads["ann"], comment="bob was here"),
            "overwrite_hers": put("bob", id=anns_feedback, forId=steps["bob"], threadId=threads["bob"],
                                  comment="bob was here"),
            "delete_hers": c["bob"].request("DELETE", "/feedback", json={"feedbackId": anns_feedback}),
        }
        out["bob_feedback_status"] = {k: r.status_code for k, r in attempts.items()}
        out["feedback_rows"] = [list(r) for r in con.execute(
            'SELECT "forId", comment FROM feedbacks ORDER BY comment')]
        out["carol_before"] = c["carol"].get("/user").status_code
        accounts.remove("carol")
        out["carol_after"] = {path: c["carol"].get(path).status_code for path in ("/user", "/project/settings")}
        out["carol_threads_after"] = c["carol"].post("/project/threads", json={"pagination": {"first": 5},
                                                                              "filter": {}}).status_code
        out["ann_after"] = c["ann"].get("/user").status_code
        # Bob's password changes (say it leaked): a session opened with the old one ends, a new login works.
        time.sleep(1.1)  # tokens record whole seconds
        accounts.set_password("bob", "bob's new long password")
        out["bob_old_session"] = c["bob"].get(f"/project/thread/{threads['bob']}").status_code
        fresh = httpx.Client(base_url=url, timeout=30)
        out["bob_old_password"] = fresh.post("/login", data={"username": "bob",
                                                             "password": PASSWORDS["bob"]}).status_code
        out["bob_new_password"] = fresh.post("/login", data={"username": "bob",
                                                             "password": "bob's new long password"}).status_code
        out["bob_new_session"] = fresh.get(f"/project/thread/{threads['bob']}").status_code
        con.close()
    # The counts for docs/bench/reliability.json: bob's feedback attempts that succeeded or left a trace, and
    # requests an ended login (removed account, old password) got answered.
    out["cross_user_writes"] = sum(status == 200 for status in out["bob_feedback_status"].values()) + \
        sum(comment != "ann's own note" for _, comment in out["feedback_rows"]) + (len(out["feedback_rows"]) != 1)
    out["ended_logins_accepted"] = sum(status == 200 for status in out["carol_after"].values()) + \
        (out["carol_threads_after"] == 200) + (out["bob_old_session"] == 200) + (out["bob_old_password"] == 200)
    return out


def test_feedback_stays_in_its_owners_chat_and_removed_or_changed_logins_end(tmp_path):
    out = feedback_and_revoked_logins(tmp_path / "data")
    assert out["own_feedback"] == 200, out  # the route works: the refusals below are not a broken probe
    assert all(status != 200 for status in out["bob_feedback_status"].values()), out
    # Ann's chat holds only her own feedback, unchanged; bob's attempts wrote nothing anywhere.
    assert out["feedback_rows"] == [[out["feedback_rows"][0][0], "ann's own note"]], out
    assert out["carol_before"] == 200 and out["ann_after"] == 200
    assert set(out["carol_after"].values()) == {401} and out["carol_threads_after"] == 401, out
    assert (out["bob_old_session"], out["bob_old_password"]) == (401, 401), out
    assert (out["bob_new_password"], out["bob_new_session"]) == (200, 200), out
    assert out["cross_user_writes"] == 0 and out["ended_logins_accepted"] == 0


def test_a_changed_single_user_password_ends_sessions_across_a_restart(tmp_path):
    import time

    import httpx

    from tests.reliability_probes import chainlit_server

    data = tmp_path / "data"
    data.mkdir()
    with chainlit_server(data, EVIDENTIA_AUTH_PASSWORD="the old shared secret") as url:
        old = httpx.Client(base_url=url, timeout=30)
        old.post("/login", data={"username": "owner", "password": "the old shared secret"}).raise_for_status()
        token = old.cookies
        assert old.get("/user").status_code == 200
    time.sleep(1.1)  # tokens record whole seconds
    with chainlit_server(data, EVIDENTIA_AUTH_PASSWORD="the new shared secret") as url:
        again = httpx.Client(base_url=url, timeout=30, cookies=token)  # the old cookie, on the new port
        assert again.get("/user").status_code == 401
        fresh = httpx.Client(base_url=url, timeout=30)
        assert fresh.post("/login", data={"username": "owner", "password": "the old shared secret"}).status_code == 401
        fresh.post("/login", data={"username": "owner", "password": "the new shared secret"}).raise_for_status()
        assert fresh.get("/user").status_code == 200
