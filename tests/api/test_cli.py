"""`compendium keys create` writes a key the server then accepts."""

from __future__ import annotations

import asyncio

from compendium.cli import main


async def test_keys_create_gives_a_working_key(make_api, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COMPENDIUM_STORE", raising=False)
    data = tmp_path / "server"
    # main() runs its own event loop: run it in a thread, as a separate command would.
    code = await asyncio.to_thread(main, ["keys", "create", "--tenant", "acme", "--data-dir", str(data)])
    assert code == 0
    key = capsys.readouterr().out.strip()
    assert key.startswith("cmp_")
    async with make_api(run_worker=False, data_dir=data) as api:
        me = await api.client.get("/me", headers=api.as_(key))
        assert me.status_code == 200 and me.json()["tenant"] == "acme"
        assert (await api.client.get("/me", headers=api.as_(key + "x"))).status_code == 401
