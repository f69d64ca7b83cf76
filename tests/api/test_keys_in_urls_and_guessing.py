"""A key is taken from the Authorization header only: one in the URL is refused and never
logged; an address guessing keys is answered 429 with Retry-After; a busy port is named."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx

from compendium.api.limits import FailedLogins, redact_query
from tests.api.conftest import ADMIN_KEY, REPO


async def test_a_key_in_the_url_is_refused_even_when_it_is_right(make_api):
    async with make_api(run_worker=False) as api:
        key = await api.tenant_key("acme")
        for name in ("api_key", "token", "access_token"):
            r = await api.client.get(f"/me?{name}={key}")
            assert r.status_code == 401, r.text
            assert f"{name}=" in r.json()["error"]["message"] and key not in r.text
            # The header does not make a key in the URL acceptable.
            r = await api.client.get(f"/me?{name}={key}", headers=api.as_(key))
            assert r.status_code == 401
        assert (await api.client.get("/me", headers=api.as_(key))).status_code == 200


async def test_failed_sign_ins_from_one_address_are_answered_429_with_retry_after(make_api):
    async with make_api(run_worker=False) as api:
        key = await api.tenant_key("acme")
        statuses = []
        for n in range(60):
            r = await api.client.get("/me", headers=api.as_(f"cmp_0123456789abcdef_wrong{n}"))
            statuses.append(r.status_code)
            if r.status_code == 429:
                break
        assert statuses[0] == 401 and statuses[-1] == 429, statuses
        assert 10 <= statuses.count(401) <= 30
        wait = int(r.headers["Retry-After"])
        assert wait >= 1 and r.json()["error"]["code"] == "too_many_requests"
        # While it waits, even a right key from that address is not tried.
        assert (await api.client.get("/me", headers=api.as_(key))).status_code == 429


def test_a_guesser_waits_and_others_do_not():
    failures = FailedLogins(burst=5, every=2.0)
    for _ in range(5):
        assert failures.retry_after("10.0.0.1", now=100.0) == 0
        failures.failed("10.0.0.1", now=100.0)
    assert failures.retry_after("10.0.0.1", now=100.0) == 2
    assert failures.retry_after("10.0.0.2", now=100.0) == 0  # another address is not held up
    assert failures.retry_after("10.0.0.1", now=102.0) == 0  # one more guess per 2 s
    failures = FailedLogins(addresses=3)
    for n in range(10):
        failures.failed(f"10.0.0.{n}", now=1.0)
    assert len(failures._debt) == 3  # a flood of addresses costs bounded memory


def test_credentials_in_a_query_string_are_redacted():
    assert redact_query("/me?api_key=cmp_abc_secret&x=1") == "/me?api_key=REDACTED&x=1"
    assert redact_query("/a?x=1&TOKEN=s3&key=k") == "/a?x=1&TOKEN=REDACTED&key=REDACTED"
    assert redact_query("/knowledge-bases?limit=5") == "/knowledge-bases?limit=5"
    # However the name is written: percent-encoded, its '=' escaped, after a ';'.
    key = "cmp_0123456789abcdef_TheSecretPart"
    assert redact_query(f"/me?api%5Fkey={key}&x=1") == "/me?api%5Fkey=REDACTED&x=1"
    assert redact_query(f"/me?api_key%3D{key}") == "/me?api_key=REDACTED"
    assert redact_query(f"/me?a=1;api_key={key}") == "/me?a=1;api_key=REDACTED"
    # One of our keys is redacted under any name, in the path too, percent-encoded or not.
    assert redact_query(f"/me?q={key}") == "/me?q=REDACTED"
    assert redact_query(f"/pages/{key}?x=1") == "/pages/REDACTED?x=1"
    assert "TheSecretPart" not in redact_query("/me?q=" + key.replace("_", "%5F"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(tmp_path, port: int) -> subprocess.Popen:
    env = {**os.environ, "COMPENDIUM_ADMIN_KEY": ADMIN_KEY}
    env.pop("COMPENDIUM_STORE", None)
    return subprocess.Popen(
        [sys.executable, "-m", "compendium.cli", "serve", "--data-dir", str(tmp_path), "--port", str(port),
         "--no-worker"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def _wait_up(server: subprocess.Popen, base: str) -> None:
    deadline = time.monotonic() + 60  # a bound on a failure, not the wait itself
    while True:
        try:
            httpx.get(f"{base}/openapi.json", timeout=5)
            return
        except httpx.TransportError:
            assert time.monotonic() < deadline and server.poll() is None, "the server did not start"
            time.sleep(0.05)


def test_the_access_log_never_holds_a_key_sent_in_the_url_and_a_busy_port_is_named(tmp_path):
    port = _free_port()
    server = _serve(tmp_path / "a", port)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_up(server, base)
        secret = "cmp_0123456789abcdef_TheSecretPart"
        assert httpx.get(f"{base}/me?api_key={secret}&limit=5").status_code == 401
        # The name percent-encoded is still refused, and still not logged; nor is a key under another name.
        assert httpx.get(f"{base}/me?api%5Fkey={secret}").status_code == 401
        assert httpx.get(f"{base}/me?a=1;api_key={secret}").status_code == 401
        # A second server on the same port: exit 2, the port named.
        second = _serve(tmp_path / "b", port)
        out, _ = second.communicate(timeout=120)
        assert second.returncode == 2, out
        assert f"port {port} on 127.0.0.1 is in use" in out
        # The access log up to the last request's line (what follows is read at exit).
        log = _lines_until(server, "/me?a=1;")
        assert "/me?api_key=REDACTED&limit=5" in log and "/me?api%5Fkey=REDACTED" in log
    finally:
        server.terminate()
        rest, _ = server.communicate(timeout=30)
    assert "TheSecretPart" not in log + rest


def _lines_until(server: subprocess.Popen, marker: str) -> str:
    """The server's output up to and including the first line holding `marker`."""
    assert server.stdout is not None
    seen = []
    for line in server.stdout:
        seen.append(line)
        if marker in line:
            return "".join(seen)
    raise AssertionError("".join(seen))
