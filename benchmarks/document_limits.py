"""What a hostile document costs a running server: its RSS before, at the peak and after the
worst uploads and a compile of them, and another tenant's latency meanwhile.

Run: .venv/bin/python -m benchmarks.document_limits [--repo DIR] [--out FILE]
`--repo` runs the server of another checkout (an earlier commit, for the figure before)."""

from __future__ import annotations

import argparse
import io
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
REPORT = Path(__file__).parent / "reports" / "document_limits.md"
ADMIN = "admin-bench-key-0123456789"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PARAGRAPH = b"<w:p><w:r><w:t>All work and no play makes a dull document.</w:t></w:r></w:p>"


def docx_bomb(unpacked: int) -> bytes:
    """A DOCX (a real one, python-docx's own, its body replaced) whose document.xml unpacks to
    about `unpacked` bytes of paragraphs: a few hundred KB on the wire."""
    import docx

    buffer = io.BytesIO()
    docx.Document().save(buffer)
    out = io.BytesIO()
    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            if item.filename != "word/document.xml":
                target.writestr(item, source.read(item))
                continue
            head, _, tail = source.read(item).partition(b"<w:body>")
            with target.open("word/document.xml", "w", force_zip64=True) as member:
                member.write(head + b"<w:body>")
                block = PARAGRAPH * 4096
                for _ in range(unpacked // len(block)):
                    member.write(block)
                member.write(tail)
    return out.getvalue()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    """Processes whose parent is `pid` (started from any of its threads)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                if int(stat.read().rpartition(")")[2].split()[1]) == pid:
                    out.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return out


class Watch(threading.Thread):
    """Samples the server's RSS (and its children's) and another tenant's /me latency."""

    def __init__(self, base: str, pid: int, key: str) -> None:
        super().__init__(daemon=True)
        self.base, self.pid, self.key = base, pid, key
        self.stop = threading.Event()
        self.latencies: list[float] = []
        self.timeouts = 0
        self.peak = self.peak_children = 0

    def run(self) -> None:
        with httpx.Client(base_url=self.base, headers={"Authorization": f"Bearer {self.key}"}) as client:
            while not self.stop.is_set():
                self.peak = max(self.peak, _rss(self.pid))
                self.peak_children = max(self.peak_children, sum(_rss(c) for c in _children(self.pid)))
                started = time.monotonic()
                try:
                    client.get("/me", timeout=5.0)
                    self.latencies.append(time.monotonic() - started)
                except httpx.TimeoutException:
                    self.timeouts += 1
                self.stop.wait(0.1)


def run(repo: Path) -> dict:
    data = Path(tempfile.mkdtemp(prefix="doc-limits-"))
    port = _free_port()
    env = {**os.environ, "COMPENDIUM_ADMIN_KEY": ADMIN, "PYTHONPATH": str(repo)}
    env.pop("COMPENDIUM_STORE", None)
    server = subprocess.Popen([sys.executable, "-m", "compendium.cli", "serve", "--data-dir", str(data),
                               "--port", str(port)], cwd=repo, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    admin = {"Authorization": f"Bearer {ADMIN}"}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/openapi.json", timeout=5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.1)
        keys = {}
        for tenant in ("mallory", "alice"):
            httpx.post(f"{base}/tenants", json={"name": tenant}, headers=admin).raise_for_status()
            keys[tenant] = httpx.post(f"{base}/tenants/{tenant}/keys", json={"name": "b"},
                                      headers=admin).json()["key"]  # fmt: skip
        mallory = {"Authorization": f"Bearer {keys['mallory']}"}
        httpx.post(f"{base}/knowledge-bases", json={"name": "kb", "engine": "offline"},
                   headers=mallory).raise_for_status()  # fmt: skip
        bombs = {"bomb-200mb.docx": docx_bomb(200 << 20), "large-100mb.docx": docx_bomb(100 << 20)}
        uploads = [("fine.md", b"# Fine\n\nA fine document about ducks.\n", "text/markdown")]
        with httpx.Client(base_url=base, headers=mallory, timeout=600) as client:
            client.post("/knowledge-bases/kb/documents", files=[("files", uploads[0])]).raise_for_status()
            for _ in range(3):  # warm: the reading children started, the first compile's imports done
                client.get("/me")
            job = client.post("/knowledge-bases/kb/compile").json()
            _follow(client, job["id"])
            baseline = _rss(server.pid)
            watch = Watch(base, server.pid, keys["alice"])
            watch.start()
            started = time.monotonic()
            answers = {}
            for name, data_ in bombs.items():
                r = client.post("/knowledge-bases/kb/documents", files=[("files", (name, data_, DOCX))])
                answers[name] = (r.status_code, r.json()["error"]["message"] if r.status_code >= 400 else "")
            upload_seconds = time.monotonic() - started
            # The same files put beside the others by other means: the compile reads them.
            folder = next(data.rglob("fine.md")).parent
            for name, data_ in bombs.items():
                (folder / name).write_bytes(data_)
            started = time.monotonic()
            job = client.post("/knowledge-bases/kb/compile").json()
            final = _follow(client, job["id"])
            compile_seconds = time.monotonic() - started
            watch.stop.set()
            watch.join()
            after = _rss(server.pid)
            children_after = sum(_rss(c) for c in _children(server.pid))
        failed = (final.get("report", {}).get("phases", {}).get("ingest", {}) or {}).get("failed_documents", {})
        return {
            "sizes": {n: len(d) for n, d in bombs.items()}, "uploads": answers, "upload_seconds": upload_seconds,
            "compile_seconds": compile_seconds, "status": final.get("status"), "failed": failed,
            "baseline": baseline, "peak": watch.peak, "after": after, "peak_children": watch.peak_children,
            "children_after": children_after, "latencies": watch.latencies, "timeouts": watch.timeouts,
        }
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _follow(client: httpx.Client, job_id: str) -> dict:
    while True:
        job = client.get(f"/jobs/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(0.2)


def render(result: dict, label: str) -> list[str]:
    mb = 1 << 20
    lat = sorted(result["latencies"]) or [0.0]
    lines = [f"### {label}", ""]
    for name, size in result["sizes"].items():
        status, message = result["uploads"][name]
        lines.append(f"- upload `{name}` ({size / 1e3:.0f} KB on the wire): {status} {message}")
    for name in result["sizes"]:
        lines.append(f"- compile reading `{name}`: {result['failed'].get(name, 'read')}")
    lines += [
        f"- compile: {result['status']} in {result['compile_seconds']:.1f} s; uploads {result['upload_seconds']:.1f} s",
        f"- server RSS: baseline {result['baseline'] / mb:.0f} MB, peak {result['peak'] / mb:.0f} MB, "
        f"after {result['after'] / mb:.0f} MB; its reading children: peak {result['peak_children'] / mb:.0f} MB, "
        f"after {result['children_after'] / mb:.0f} MB",
        f"- another tenant's /me meanwhile: {len(result['latencies'])} answers, median "
        f"{statistics.median(lat) * 1000:.0f} ms, max {lat[-1] * 1000:.0f} ms, {result['timeouts']} timeouts (> 5 s)",
        "",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose server runs")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--out", type=Path, default=None, help="append the figures to this report")
    args = parser.parse_args()
    load = os.getloadavg()
    lines = render(run(args.repo.resolve()), f"{args.label} (load {load[0]:.2f}, {os.cpu_count()} cores, "
                                             f"{platform.machine()})")  # fmt: skip
    print("\n".join(lines))
    if args.out:
        with args.out.open("a", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
