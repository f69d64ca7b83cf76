"""What bounding strangers' templates costs: per-render overhead in process and through the
worker, refusal times of hostile templates, and offline compiles with hostile parts."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jinja2 import StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from compendium.engines.offline.names import choose_type, entity_type_rules
from compendium.errors import TemplateError
from compendium.templates import render as rendering
from compendium.templates import untrusted
from compendium.templates.loader import parse_template
from compendium.templates.patterns import compile_pattern
from compendium.templates.render import default_prompt, render, render_here

REPO = Path(__file__).resolve().parents[1]
REPORT = Path(__file__).parent / "reports" / "template_limits.md"
SAMPLE_CORPUS = REPO / "samples" / "corpus"
ALIAS_BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"{b}: &{b} [{','.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True))
)
LOOP_BOMB = "name: x\nmap:\n  prompt: '{% set a=[0]*99999 %}{% for x in a %}{% for y in a %}{% endfor %}{% endfor %}'\n"
REDOS = r"^(\w+\s?)*$!"


NOTES = """## How to read this

- Built-in prompts render in the compiling process under the sandbox's limits (steps, CPU
  time, output, value sizes): the "guarded − plain" column is what those limits cost. The
  page layout pays most (146 printed values, 90 steps and 31 macro calls per page).
- A prompt a template sets itself (a stranger's) renders in a long-lived worker process fed
  through a pipe, so a single C-level operation the sandbox cannot interrupt is still ended by
  killing the worker; "worker − guarded" is the round trip (pickle the variables, JSON back).
  MAP renders once per batch before an LLM call of a second or more, and the offline writer
  renders a few times per page, so the round trip is small beside the work around it.
- A worker's start-up (importing the template modules, about 0.3 s) is paid once per
  process, in the background: a server starts one at start-up, and a render worker starts
  when a template with its own prompts is loaded. After a kill the replacement starts at
  once ("next render after the kill" includes waiting for it).
- The ReDoS rows compare one name under Python's backtracking `re` with RE2's linear match.
  RE2's search costs a few µs more than `re`'s on short names (it encodes the text to UTF-8
  each call); an offline compile of samples/corpus makes 13,779 pattern searches, so about
  0.05 s per compile. The compile times above vary more than that with the machine's load.
"""


def _page_variables() -> dict:
    sentences = [{"text": f"Sentence {i} says something about the buffer manager.", "ref": i} for i in range(30)]
    return {
        "title": "Buffer Manager",
        "lead": {"text": "The Buffer Manager caches disk pages in memory.", "ref": 1},
        "sections": [{"heading": f"Part {n}", "sentences": sentences[n * 6:(n + 1) * 6]} for n in range(5)],
        "aliases": ["BufMgr", "buffer pool"],
        "related": [{"slug": f"page-{i}", "title": f"Page {i}"} for i in range(8)],
    }


def _map_variables() -> dict:
    text = "The buffer manager keeps hot pages in memory and writes dirty pages back. " * 20
    return {
        "entity_types": [{"name": f"type{i}", "description": "A kind of thing."} for i in range(9)],
        "relation_types": [{"name": f"rel{i}", "description": "A link."} for i in range(8)],
        "chunks": [{"label": f"c{i}", "header": "notes.md > Storage", "text": text} for i in range(8)],
        "max_items": 40,
    }


def _per_call(func, repeat: int, clock=time.perf_counter) -> float:
    """Microseconds per call over `repeat` calls, on `clock`."""
    func()
    started = clock()
    for _ in range(repeat):
        func()
    return (clock() - started) / repeat * 1e6


def _fastest(func, repeat: int, rounds: int = 7) -> float:
    return min(_per_call(func, repeat) for _ in range(rounds))


def render_overhead(rounds: int = 15, repeat: int = 100) -> list[tuple[str, float, float, float]]:
    """The three ways of rendering, interleaved round by round; the fastest round of each is
    kept (the machine is shared: that round is the one least disturbed by other jobs)."""
    plain = ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    rows = []
    for name, prompt, variables in (("page_layout.md", default_prompt("page_layout.md"), _page_variables()),
                                    ("map", default_prompt("map"), _map_variables())):
        compiled = plain.from_string(prompt)
        stranger = prompt + "\n"  # not a built-in text: rendered by a worker
        assert render(stranger, where=name, **variables).strip() == render_here(prompt, where=name, **variables).strip()
        # In-process renders on this process's CPU clock (other jobs' load does not count);
        # the worker's round trip in wall time (the child's CPU is not this process's).
        ways = [(lambda c=compiled, v=variables: c.render(**v), time.process_time),
                (lambda p=prompt, v=variables: render_here(p, where="b", **v), time.process_time),
                (lambda s=stranger, v=variables: render(s, where="w", **v), time.perf_counter)]
        best = [float("inf")] * len(ways)
        for _ in range(rounds):
            for i, (way, clock) in enumerate(ways):
                best[i] = min(best[i], _per_call(way, repeat, clock))
        rows.append((name, *best))
    return rows


def _timed(func) -> tuple[float, str]:
    started = time.monotonic()
    try:
        func()
        outcome = "accepted"
    except TemplateError as exc:
        outcome = str(exc)
    return time.monotonic() - started, outcome


def refusals() -> list[tuple[str, float, str]]:
    rows = [("first check of a process (starts a worker)",
             *_timed(lambda: untrusted.parse_untrusted("name: warm\n", source="w.yaml")))]
    cases = [
        ("alias bomb (parse in worker)", lambda: untrusted.parse_untrusted(ALIAS_BOMB, source="bomb.yaml")),
        ("\\u0002 in YAML", lambda: untrusted.parse_untrusted("name: x\ndescription: a\x02b\n", source="c.yaml")),
        ("[0]*99999 with nested loops", lambda: untrusted.parse_untrusted(LOOP_BOMB, source="l.yaml")),
        ("lipsum(99999)", lambda: untrusted.parse_untrusted(
            "name: x\nrefine:\n  writer_prompt: '{{ lipsum(99999) }}'\n", source="p.yaml")),
        ("lookahead pattern", lambda: untrusted.parse_untrusted(
            "name: x\nentity_types:\n  - name: a\n    patterns: ['x(?=y)']\n", source="r.yaml")),
        ("data-gated loop at compile (first)", lambda: render(
            "{% if chunks|length > 1 %}{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}"
            "{% endfor %}{% endif %}", where="gated", chunks=[1, 2])),
        ("data-gated loop at compile (again)", lambda: render(
            "{% if chunks|length > 1 %}{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}"
            "{% endfor %}{% endif %}", where="gated", chunks=[1, 2])),
    ]
    for name, func in cases:
        seconds, outcome = _timed(func)
        rows.append((name, seconds, outcome))
    # The last line of defence: a child past its deadline is killed, and the next call is served.
    saved = rendering.RENDER_DEADLINE
    rendering.RENDER_DEADLINE = 0.05
    seconds, outcome = _timed(lambda: render("{# kill #}{% for i in range(99999) %}{{ loop.cycle(1, 2) }}{% endfor %}",
                                             where="slow"))
    rendering.RENDER_DEADLINE = saved
    rows.append(("render past a 0.05 s deadline (killed)", seconds, outcome))
    seconds, outcome = _timed(lambda: render("{{ 'next' }}", where="after"))
    rows.append(("next render after the kill", seconds, outcome))
    env = {**os.environ}
    env.pop("COMPENDIUM_STORE", None)
    with tempfile.TemporaryDirectory() as tmp:
        bomb = Path(tmp) / "bomb.yaml"
        bomb.write_text(ALIAS_BOMB)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "compendium.cli", "templates", "validate", str(bomb)],
                              capture_output=True, text=True, cwd=REPO, env=env)
        rows.append(("CLI alias bomb, whole command incl. start-up", time.monotonic() - started,
                     done.stderr.strip().splitlines()[-1]))
    return rows


def redos() -> list[tuple[str, float]]:
    template = parse_template(
        f"name: x\nentity_types:\n  - name: slow\n    patterns: ['{REDOS}']\n  - name: concept\n", source="t.yaml")
    rules = entity_type_rules(template)
    name = "a" * 22 + "!"
    started = time.monotonic()
    re.search(REDOS, name)
    python_re = time.monotonic() - started
    per_call = _fastest(lambda: choose_type(name, "name", rules), 2000)
    builtin = r"\b(?:uses?|using|calls?|relies on|built on|builds on|leverages?)\b"  # entity-graph.yaml
    text = "the buffer manager relies on a clock sweep"
    with_re, with_re2 = re.compile(builtin), compile_pattern(builtin)
    return [("Python re, one name of 23 characters (s)", python_re),
            ("RE2 via choose_type, same name (µs per call)", per_call),
            ("a built-in pattern, one search with re (µs)", _fastest(lambda: with_re.search(text), 20000)),
            ("the same with RE2 (µs)", _fastest(lambda: with_re2.search(text), 20000))]


def offline_compiles(rounds: int = 3) -> list[tuple[str, float, int]]:
    """Each variant `rounds` times, interleaved; the fastest run of each is reported."""
    best: dict[str, tuple[float, int]] = {}
    for _ in range(rounds):
        for label, seconds, pages in _offline_round():
            if label not in best or seconds < best[label][0]:
                best[label] = (seconds, pages)
    return [(label, seconds, pages) for label, (seconds, pages) in best.items()]


def _offline_round() -> list[tuple[str, float, int]]:
    wiki = (REPO / "compendium" / "templates" / "builtin" / "wiki.yaml").read_text()
    variants = {
        "wiki (built-in)": None,
        "wiki + ReDoS pattern on every type": wiki.replace("    patterns:\n", f"    patterns:\n      - '{REDOS}'\n")
        .replace("    patterns: []", f"    patterns: ['{REDOS}']"),
        "wiki + own page layout (worker renders)": _with_own_layout(wiki),
    }
    rows = []
    env = {**os.environ}
    for var in ("COMPENDIUM_STORE", "COMPENDIUM_LLM_BASE_URL", "COMPENDIUM_LLM_MODEL"):
        env.pop(var, None)
    for label, text in variants.items():
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "kb"
            cli = [sys.executable, "-m", "compendium.cli"]
            subprocess.run([*cli, "init", str(ws)], check=True, capture_output=True, env=env, cwd=REPO)
            shutil.copytree(SAMPLE_CORPUS, Path(tmp) / "docs")
            subprocess.run([*cli, "-w", str(ws), "add", str(Path(tmp) / "docs")], check=True,
                           capture_output=True, env=env, cwd=REPO)
            args = []
            if text is not None:
                (ws / "templates").mkdir(exist_ok=True)
                (ws / "templates" / "mine.yaml").write_text(text.replace("name: wiki", "name: mine", 1))
                args = ["--template", "mine"]
            report = Path(tmp) / "report.json"
            started = time.monotonic()
            done = subprocess.run([*cli, "-w", str(ws), "compile", "--plain", "--report", str(report), *args],
                                  capture_output=True, text=True, env=env, cwd=REPO)
            seconds = time.monotonic() - started
            assert done.returncode == 0, done.stderr[-2000:]
            pages = json.loads(report.read_text())["pages"]["created"]
            rows.append((label, seconds, pages))
    return rows


def _with_own_layout(wiki: str) -> str:
    layout = default_prompt("page_layout.md") + "\n"  # not the built-in text: a worker renders it
    body = "\n".join("    " + line for line in layout.splitlines())
    assert "\nrefine:\n" in wiki and "page_template" not in wiki
    return wiki.replace("\nrefine:\n", f"\nrefine:\n  page_template: |\n{body}\n", 1)


def main() -> None:
    overhead = render_overhead()
    refused = refusals()
    pattern = redos()
    compiles = offline_compiles()
    lines = [
        "# Bounding strangers' templates: overhead and refusal times",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other engineers' jobs, "
        f"Python {platform.python_version()}. Reproduce: `.venv/bin/python benchmarks/template_limits.py`.",
        "",
        "## Per-render cost (µs per render, fastest of 15 interleaved rounds of 100)",
        "",
        "Plain: Jinja's ImmutableSandboxedEnvironment without our limits. Guarded: our sandbox in "
        "this process (how built-in prompts render). Both in CPU time. Worker: a stranger's prompt, "
        "pickled to a long-lived child process and back over a pipe, in wall time.",
        "",
        "| prompt | plain | guarded | worker | guarded − plain | worker − guarded |",
        "|---|---|---|---|---|---|",
    ]
    for name, base, guarded, through in overhead:
        lines.append(f"| {name} | {base:.0f} | {guarded:.0f} | {through:.0f} | {guarded - base:+.0f} | {through - guarded:+.0f} |")
    lines += ["", "## Refusals (wall time from the call to the error)", "", "| case | seconds | error |", "|---|---|---|"]
    for name, seconds, outcome in refused:
        lines.append(f"| {name} | {seconds:.3f} | {outcome.replace('|', '/')[:140]} |")
    lines += ["", "## ReDoS pattern `" + REDOS + "`", "", "| measure | value |", "|---|---|"]
    for name, value in pattern:
        lines.append(f"| {name} | {value:.3f} |")
    lines += ["", "## Offline compiles of samples/corpus (whole CLI command, fastest of 3)", "",
              "| template | seconds | pages |", "|---|---|---|"]
    for label, seconds, pages in compiles:
        lines.append(f"| {label} | {seconds:.1f} | {pages} |")
    lines += ["", NOTES]
    REPORT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
