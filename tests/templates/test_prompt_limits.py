"""Prompt renders are bounded: steps, time, output and value sizes; a stranger's prompt renders
in a worker process that is killed past its deadline."""

from __future__ import annotations

import time
import uuid

import pytest

from compendium.errors import TemplateError
from compendium.templates import render as rendering
from compendium.templates import untrusted, worker
from compendium.templates.loader import parse_template
from compendium.templates.render import default_prompt, render, render_here

CHUNKS = [{"label": "c1", "text": "One."}, {"label": "c2", "text": "Two."}]
STOPPED = "loop steps|to render"  # which limit comes first depends on the machine's load

def says_one_of(alternatives: str, error: Exception) -> bool:
    return any(part in str(error) for part in alternatives.split("|"))


# (prompt, what the error says); each must fail fast, whatever the data.
BOMBS = [
    ("{% set a=[0]*99999 %}{% for x in a %}{% for y in a %}{% endfor %}{% endfor %}", STOPPED),
    ("{% for i in range(99999) %}{% for j in range(99999) %}{{ loop.cycle(1, 2) }}{% endfor %}{% endfor %}",
     STOPPED),
    ("{{ lipsum(99999) }}", "lipsum() writes at most"),
    ("{{ lipsum(5, max=99999) }}", "lipsum() writes at most"),
    ("{{ range(10**9)|list }}", "too large"),
    ("{% set s='a'*99999 %}{{ s.replace('', s) }}", "replaced text would be larger"),
    ("{% set s='a'*99999 %}{{ s|replace('', s) }}", "replaced text would be larger"),
    ("{% set s='a'*99999 %}{{ ([1]*99999)|join(s) }}", "joined text would be larger"),
    ("{% set s='a'*99999 %}{{ s.join([1]*99999) }}", "joined text would be larger"),
    ("{% set a=[0]*99999 %}{% set b=[a,a,a,a,a,a,a,a,a,a] %}{% set c=[b,b,b,b,b,b,b,b,b,b] %}{{ c }}",
     "list or mapping would be larger"),
    ("{% set a=[0]*99999 %}{% set b=[a]*99999 %}{{ b }}", "repeated list would be larger"),
    ("{% set ns=namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
     "joined text (~) would be larger"),
    ("{% set ns=namespace(s=[1]) %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
     "sum would be larger|to render"),
    ("{% for i in range(99999) %}" + "x" * 1000 + "{% endfor %}", "writes more than"),
    ("{% for i in range(99999) %}{% set x %}" + "y" * 1000 + "{% endset %}{% endfor %}", "writes more than"),
    ("{% for i in range(99999) %}{{ ''|center(99999) }}{% endfor %}", "writes more than"),
    ("{% macro m(n) %}{{ m(n) }}{{ m(n) }}{% endmacro %}{{ m(1) }}", "calls itself too deeply"),
    ("{{ ('\t' * 99999).expandtabs(99999) }}", "expanded text would be larger"),
    ("{{ ('\n' * 99999)|indent(99999) }}", "indented text would be larger"),
    ("{{ [[0]*999]*99|sum(start=[]) }}", "adds numbers only"),
    ("{{ [1]|slice(99999, [0]*99999)|list|string }}", "would be larger"),
    ("{{ 'abc'.translate({97: 'x'}) }}", "not available"),
    ("{% set ns=namespace(x=2) %}{% for i in range(30) %}{% set ns.x = ns.x ** 64 %}{% endfor %}",
     "number is too large"),
    ("{{ ('a ' * 50000)|wordwrap(1, wrapstring='x' * 99999) }}", "wrapped text would be larger"),
    # no loop at all: sixty costly filter calls in a row still meet the time limit
    ("{% set s = 'a' * 99999 %}" + "{{ s|wordwrap(1)|length }}" * 60, "to render"),
]


@pytest.mark.parametrize(("prompt", "says"), BOMBS)
def test_costly_prompts_fail_fast_with_a_clear_error(prompt, says):
    # The message says which limit refused it: a size check before the work, or the step and
    # time limits of the render itself (no wall-clock bound here: a loaded machine is slow).
    with pytest.raises(TemplateError) as info:
        render(prompt, where="mine: refine.page_template", chunks=CHUNKS)
    assert says_one_of(says, info.value) and str(info.value).startswith("mine: refine.page_template")


@pytest.mark.parametrize(("prompt", "says"), BOMBS[:5])
def test_costly_prompts_fail_validation_fast_naming_the_key(prompt, says):
    text = f"name: x\nrefine:\n  writer_prompt: {prompt!r}\n".replace("\\'", "''")
    with pytest.raises(TemplateError) as info:
        parse_template(text, source="t.yaml")
    assert info.value.key == "refine.writer_prompt" and says_one_of(says, info.value)


GATED = (
    "{% if chunks|length > 1 %}{% for i in range(99999) %}{% for j in range(99999) %}{{ i }}"
    "{% endfor %}{% endfor %}{% endif %}{% for c in chunks %}[{{ c.label }}] {{ c.text }} {% endfor %}"
)


def test_a_loop_gated_on_the_data_passes_validation_then_fails_fast_when_compiled():
    template = parse_template(f"name: x\nmap:\n  prompt: |-\n    {GATED}\n", source="t.yaml")
    assert render(template.map.prompt, where="x: map.prompt", chunks=CHUNKS[:1]) == "[c1] One. "
    with pytest.raises(TemplateError, match=STOPPED):
        render(template.map.prompt, where="x: map.prompt", chunks=CHUNKS)  # two chunks: the trap
    # The next batch does not pay for the trap again.
    with pytest.raises(TemplateError, match="ran past its step or time limit earlier"):
        render(template.map.prompt, where="x: map.prompt", chunks=CHUNKS[:1])


def test_a_strangers_prompt_renders_as_it_would_in_process():
    layout = default_prompt("page_layout.md") + "\n"  # not the built-in text: goes to a worker
    variables = {
        "title": "Buffer Manager",
        "lead": {"text": "It caches pages.", "ref": 1},
        "sections": [{"heading": "Design", "sentences": [{"text": "It uses a clock.", "ref": 2}]}],
        "aliases": ["BufMgr"],
        "related": [{"slug": "wal", "title": "WAL"}],
    }
    assert render(layout, where="l", **variables) == render_here(layout, where="l", **variables)
    assert "It uses a clock.[^2]" in render(layout, where="l", **variables)


def test_ordinary_prompt_features_still_render():
    prompt = (
        "{% set ns = namespace(n=0) %}{% for c in chunks %}{% set ns.n = ns.n + 1 %}{{ loop.index }}:"
        "{{ c.text|upper }} {% endfor %}{{ ns.n }} {{ chunks|map(attribute='label')|join(', ') }} "
        "{{ 'x{}'.format(1) }} {{ [1, 2] + [3] }} {{ 'ab' ~ 'cd' }} {{ {'k': 'v'}['k'] }} {{ '-' * 3 }}"
    )
    assert render(prompt, where="p", chunks=CHUNKS) == "1:ONE. 2:TWO. 2 c1, c2 x1 [1, 2, 3] abcd v ---"


def _slow_prompt() -> str:
    # About 0.3-0.5 s of work inside the sandbox's budget; unique text, so no cache hides it.
    tag = uuid.uuid4().hex
    return f"{{# {tag} #}}{{% for i in range(99999) %}}{{{{ loop.cycle(1, 2) }}}}{{% endfor %}}"


def test_a_render_past_its_deadline_is_killed_and_the_prompt_refused_after(monkeypatch):
    monkeypatch.setattr(rendering, "RENDER_DEADLINE", 0.05)
    slow = _slow_prompt()
    with pytest.raises(worker.WorkerTimeout, match=r"took longer than 0\.05 s"):
        render(slow, where="x: map.prompt")
    with pytest.raises(TemplateError, match="ran past its step or time limit earlier"):
        render(slow, where="x: map.prompt")
    monkeypatch.setattr(rendering, "RENDER_DEADLINE", 5.0)
    assert render("{{ 1 + 2 }} {{ 'fresh' }}", where="y") == "3 fresh"  # a replacement worker


def test_validation_past_its_deadline_is_killed(monkeypatch):
    monkeypatch.setattr(untrusted, "VALIDATE_DEADLINE", 0.05)
    text = f"name: x\nmap:\n  prompt: {_slow_prompt()!r}\n"
    with pytest.raises(worker.WorkerTimeout, match="checking the template took longer") as info:
        untrusted.parse_untrusted(text, source="slow.yaml")
    assert info.value.file == "slow.yaml"
    monkeypatch.setattr(untrusted, "VALIDATE_DEADLINE", 5.0)
    assert untrusted.parse_untrusted("name: ok\n", source="ok.yaml").name == "ok"


def test_worker_errors_keep_file_line_and_key():
    with pytest.raises(TemplateError) as info:
        untrusted.parse_untrusted("name: x\nmap:\n  batch_chunks: 0\n", source="w.yaml")
    assert (info.value.file, info.value.line, info.value.key) == ("w.yaml", 3, "map.batch_chunks")
    assert str(info.value).startswith("w.yaml:3: map.batch_chunks: must be ≥ 1")


def test_engine_task_objects_render_in_the_worker_as_in_process():
    from compendium.engines.tasks import EntitySketch, PairQuestion

    sketch = EntitySketch(name="Buffer Manager", type="component", description="Caches pages.")
    pairs = [PairQuestion(label="p1", a=sketch, b=sketch, similarity=0.9)]
    prompt = default_prompt("pairs") + "\n"
    assert render(prompt, where="x: reduce.prompt", pairs=pairs) == render_here(prompt, where="x", pairs=pairs)
    assert "Buffer Manager" in render(prompt, where="x: reduce.prompt", pairs=pairs)



def test_a_template_checked_once_does_not_queue_behind_slow_checks():
    import threading

    mine = "name: mine\nmap:\n  prompt: '{% for c in chunks %}{{ c.text }}{% endfor %}'\n"
    assert untrusted.parse_untrusted(mine, source="template mine").name == "mine"
    slow = "name: slow\nmap:\n  prompt: \"{% for i in range(99999) %}{{ ('a ' * 40000)|wordcount }}{% endfor %}\"\n"

    def check_slow() -> None:
        with pytest.raises(TemplateError, match=r"to render|took longer than"):
            untrusted.parse_untrusted(slow + f"# {uuid.uuid4().hex}\n", source="slow.yaml")

    floods = [threading.Thread(target=check_slow) for _ in range(2 * worker.POOL_SIZE)]
    for flood in floods:
        flood.start()
    time.sleep(0.05)
    assert untrusted.parse_untrusted(mine, source="template mine").name == "mine"
    assert any(flood.is_alive() for flood in floods)  # answered while the flood still holds the pool
    for flood in floods:
        flood.join()
