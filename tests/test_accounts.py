"""Real accounts for the web UI: hashed passwords, fixed single-user name, rate-limited logins (#17)."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

from assistant.ui.auth import LoginLimiter, check_login, login_mode
from assistant.cli import main
from assistant.settings import Settings
from memory.accounts import AccountError, Accounts


@pytest.fixture
def accounts(tmp_path):
    return Accounts(tmp_path / "threads.db")


def test_passwords_are_stored_as_argon2_hashes_and_checked(accounts):
    accounts.add("ann", "correct horse")
    accounts.add("bob", "battery staple")
    assert accounts.names() == ["ann", "bob"]
    assert accounts.verify("ann", "correct horse") and not accounts.verify("ann", "battery staple")
    assert not accounts.verify("carol", "correct horse")
    stored = sqlite3.connect(accounts.path).execute("SELECT password_hash FROM evidentia_accounts").fetchall()
    assert all(h.startswith("$argon2id$") and "horse" not in h for (h,) in stored)
    assert accounts.path.stat().st_mode & 0o777 == 0o600  # other local users cannot read the hashes
    accounts.set_password("ann", "new password!")
    assert accounts.verify("ann", "new password!") and not accounts.verify("ann", "correct horse")
    accounts.remove("bob")
    assert accounts.names() == ["ann"] and not accounts.verify("bob", "battery staple")


@pytest.mark.parametrize("name,password", [("", "long enough"), ("../ann", "long enough"), ("a b", "long enough"),
                                           ("ann", "short")])
def test_bad_names_and_short_passwords_get_one_clear_message(accounts, name, password):
    with pytest.raises(AccountError):
        accounts.add(name, password)
    assert accounts.names() == []


def test_duplicate_and_missing_users_are_explained(accounts):
    accounts.add("ann", "correct horse")
    with pytest.raises(AccountError, match="already exists"):
        accounts.add("ann", "another one")
    with pytest.raises(AccountError, match="no user"):
        accounts.remove("zed")
    with pytest.raises(AccountError, match="no user"):
        accounts.set_password("zed", "long enough")


def _settings(tmp_path, **kw) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", **kw)


def test_modes(tmp_path, accounts):
    assert login_mode(_settings(tmp_path), accounts) == "local"
    assert login_mode(_settings(tmp_path, auth_password="shared secret"), accounts) == "single_user"
    accounts.add("ann", "correct horse")
    assert login_mode(_settings(tmp_path, auth_password="shared secret"), accounts) == "accounts"


def test_single_user_mode_fixes_the_user_name(tmp_path, accounts):
    settings = _settings(tmp_path, auth_password="shared secret")
    lim = LoginLimiter()
    assert check_login(settings, accounts, lim, "single_user", "owner", "shared secret") == "owner"
    # The shared password no longer opens another user's chats by typing their name.
    assert check_login(settings, accounts, lim, "single_user", "ann", "shared secret") is None
    assert check_login(settings, accounts, lim, "single_user", "owner", "wrong") is None


def test_accounts_mode_logs_each_user_in_as_themselves_only(tmp_path, accounts):
    settings = _settings(tmp_path, auth_password="shared secret")
    accounts.add("ann", "correct horse")
    accounts.add("bob", "battery staple")
    lim = LoginLimiter()
    assert check_login(settings, accounts, lim, "accounts", "ann", "correct horse") == "ann"
    assert check_login(settings, accounts, lim, "accounts", "bob", "correct horse") is None
    assert check_login(settings, accounts, lim, "accounts", "owner", "shared secret") is None
    assert check_login(settings, accounts, lim, "local", "ann", "correct horse") is None


def test_login_attempts_are_rate_limited(tmp_path, accounts):
    settings = _settings(tmp_path)
    accounts.add("ann", "correct horse")
    now = [1000.0]
    lim = LoginLimiter(per_name=5, overall=8, window_s=60.0, clock=lambda: now[0])
    for _ in range(5):
        assert check_login(settings, accounts, lim, "accounts", "ann", "guess") is None
    # Locked: even the right password waits until the window has passed.
    assert check_login(settings, accounts, lim, "accounts", "ann", "correct horse") is None
    now[0] += 61
    assert check_login(settings, accounts, lim, "accounts", "ann", "correct horse") == "ann"
    # Failures under other names lock no one else out (#79; tests/test_login_limits.py has the flood cases).
    for i in range(8):
        check_login(settings, accounts, lim, "accounts", f"user{i}", "guess")
    assert check_login(settings, accounts, lim, "accounts", "ann", "correct horse") == "ann"
    # Once their failures expire, guessed names are forgotten (they must not pile up in memory).
    now[0] += 61
    assert check_login(settings, accounts, lim, "accounts", "user1", "guess") is None
    assert set(lim._by_name) <= {"user1"}


def test_user_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("EVIDENTIA_DATA_DIR", str(tmp_path / "data"))
    runner = CliRunner()
    r = runner.invoke(main, ["user", "list"])
    assert r.exit_code == 0 and "No accounts" in r.output
    r = runner.invoke(main, ["user", "add", "ann", "--password-stdin"], input="correct horse\n")
    assert r.exit_code == 0 and "first account" in r.output, r.output
    r = runner.invoke(main, ["user", "add", "ann", "--password-stdin"], input="correct horse\n")
    assert r.exit_code == 1 and "already exists" in r.output
    r = runner.invoke(main, ["user", "add", "bob"], input="battery staple\nbattery staple\n")
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["user", "passwd", "bob", "--password-stdin"], input="tiny\n")
    assert r.exit_code == 1 and "at least 8" in r.output
    assert runner.invoke(main, ["user", "list"]).output.split() == ["ann", "bob"]
    r = runner.invoke(main, ["user", "remove", "bob"])
    assert r.exit_code == 0 and "last account" not in r.output
    acc = Accounts(tmp_path / "data" / "threads.db")
    assert acc.names() == ["ann"] and acc.verify("ann", "correct horse")
    # Removing the last account says that logins are off from the next start.
    monkeypatch.delenv("EVIDENTIA_AUTH_PASSWORD", raising=False)
    r = runner.invoke(main, ["user", "remove", "ann"])
    assert r.exit_code == 0 and "last account" in r.output and "NO login" in r.output, r.output


def test_a_login_token_is_valid_only_while_its_name_may_log_in(tmp_path, accounts):
    import time

    from assistant.ui.auth import login_still_valid

    settings = _settings(tmp_path, auth_password="shared secret")
    accounts.add("ann", "correct horse")
    now = time.time()
    assert login_still_valid(settings, accounts, "accounts", "ann", now)
    assert not login_still_valid(settings, accounts, "accounts", "ann", None)  # a token of unknown age
    assert not login_still_valid(settings, accounts, "accounts", "ann", now - 3600)  # from before the account
    # A token from the local or single-user days no longer lets anyone in.
    assert not login_still_valid(settings, accounts, "accounts", "local", now)
    assert not login_still_valid(settings, accounts, "accounts", "owner", now)
    # A changed password ends older sessions (tokens record whole seconds); a re-hash of the same one does not.
    time.sleep(1.1)
    accounts.set_password("ann", "a new password")
    assert not login_still_valid(settings, accounts, "accounts", "ann", now)
    assert login_still_valid(settings, accounts, "accounts", "ann", time.time())
    accounts.remove("ann")
    assert not login_still_valid(settings, accounts, "accounts", "ann", time.time())
    assert login_still_valid(settings, accounts, "single_user", "owner", now)
    assert not login_still_valid(settings, accounts, "single_user", "ann", now)
    assert login_still_valid(settings, accounts, "local", "local", now)
    assert not login_still_valid(settings, accounts, "local", "local", None)
    assert not login_still_valid(settings, accounts, "local", "ann", now)


def test_a_renewed_hash_keeps_sessions_and_a_changed_password_does_not(accounts):
    from argon2 import PasswordHasher

    accounts.add("ann", "correct horse")
    set_at = accounts.password_set_at("ann")
    weak = PasswordHasher(time_cost=1, memory_cost=8192).hash("correct horse")  # older, cheaper parameters
    con = sqlite3.connect(accounts.path)
    with con:
        con.execute("UPDATE evidentia_accounts SET password_hash = ? WHERE name = 'ann'", [weak])
    assert accounts.verify("ann", "correct horse")
    renewed = con.execute("SELECT password_hash FROM evidentia_accounts WHERE name = 'ann'").fetchone()[0]
    con.close()
    assert renewed != weak and renewed.startswith("$argon2id$")
    assert accounts.password_set_at("ann") == set_at
    accounts.set_password("ann", "another password")
    assert accounts.password_set_at("ann") > set_at
    assert accounts.password_set_at("zed") is None


def test_a_changed_single_user_password_ends_older_sessions(tmp_path, accounts):
    import json
    import time

    from assistant.ui.auth import login_still_valid, single_user_password_since

    first = _settings(tmp_path, auth_password="shared secret")
    since = single_user_password_since(first)
    noted = tmp_path / "data" / "single_user_password.json"
    assert noted.stat().st_mode & 0o777 == 0o600 and "shared secret" not in noted.read_text()
    assert json.loads(noted.read_text())["hash"].startswith("$argon2id$")
    assert single_user_password_since(first) == since  # a restart with the same password keeps sessions
    token_time = time.time()
    assert login_still_valid(first, accounts, "single_user", "owner", token_time, single_user_since=since)
    time.sleep(1.1)  # tokens record whole seconds
    changed = single_user_password_since(_settings(tmp_path, auth_password="a new secret"))
    assert changed > since
    assert not login_still_valid(first, accounts, "single_user", "owner", token_time, single_user_since=changed)
    assert login_still_valid(first, accounts, "single_user", "owner", time.time(), single_user_since=changed)
    assert not login_still_valid(first, accounts, "single_user", "owner", None, single_user_since=changed)
    noted.write_text("not json")  # a damaged note: the password counts as new, nothing crashes
    assert single_user_password_since(first) > changed
