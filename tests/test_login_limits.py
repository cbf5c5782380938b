"""Login limits slow the name under attack and no other (#79).

Before: 50 failed logins a minute under any names locked every user out, correct passwords included, so anyone who
could reach the login page could keep everyone out of the UI by typing wrong names.
"""

from __future__ import annotations

import pytest

from assistant.settings import Settings
from assistant.ui.auth import LoginLimiter, check_login
from memory.accounts import Accounts


@pytest.fixture
def setup(tmp_path):
    accounts = Accounts(tmp_path / "threads.db")
    accounts.add("ann", "correct horse")
    accounts.add("bob", "battery staple")
    now = [1000.0]
    limiter = LoginLimiter(per_name=5, overall=50, window_s=60.0, clock=lambda: now[0])
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")

    def login(name: str, password: str) -> str | None:
        return check_login(settings, accounts, limiter, "accounts", name, password)

    return login, limiter, now


def flood(limiter: LoginLimiter, names: list[str], now: list[float], each: int = 1) -> None:
    """Failed logins as check_login records them (the password check itself is not what is tested here)."""
    for name in names:
        for _ in range(each):
            if limiter.allowed(name):
                limiter.failed(name)
        now[0] += 0.01


def test_a_flood_of_wrong_names_does_not_lock_out_a_correct_password(setup):
    login, limiter, now = setup
    flood(limiter, [f"guess{i}" for i in range(300)], now)  # 6 times the old overall budget
    flood(limiter, ["bob"], now, each=10)  # and someone else's name, past its own limit
    assert login("ann", "correct horse") == "ann"
    assert login("bob", "battery staple") is None  # the attacked name waits…
    now[0] += 61
    assert login("bob", "battery staple") == "bob"  # …for one window only


def test_the_attacked_name_is_limited_per_name(setup):
    login, limiter, now = setup
    for _ in range(5):
        assert login("ann", "guess") is None
    assert not limiter.allowed("ann") and limiter.allowed("ANN ") is True  # another name (case-folded, as typed)
    assert login("ann", "correct horse") is None
    assert login("bob", "battery staple") == "bob"
    now[0] += 61
    assert login("ann", "correct horse") == "ann"


def test_under_a_flood_a_name_that_failed_gets_one_try_a_window(setup):
    # The overall ceiling binds only names that failed themselves: guessing spread over many names gets one try per
    # name and window, and a name whose owner mistyped once waits for its own failure to age out, no longer.
    login, limiter, now = setup
    flood(limiter, [f"guess{i}" for i in range(60)], now)
    assert login("ann", "a typo") is None
    assert login("ann", "correct horse") is None  # one failure during a flood: wait
    now[0] += 61
    assert login("ann", "correct horse") == "ann"


def test_failures_are_forgotten_after_the_window(setup):
    _, limiter, now = setup
    flood(limiter, [f"guess{i}" for i in range(1000)], now)
    assert len(limiter._by_name) == 1000
    now[0] += 61
    assert limiter.allowed("guess1") and limiter._by_name == {} and not limiter._failures
