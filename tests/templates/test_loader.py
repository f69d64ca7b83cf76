"""Template loading: valid built-ins load, and every invalid template names file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from compendium.errors import TemplateError
from compendium.templates.loader import parse_template
from compendium.templates.registry import builtin_names, load_template
from compendium.templates.untrusted import load_template_file

BUILTIN_DIR = Path(__file__).parents[2] / "compendium" / "templates" / "builtin"


def error_of(text: str, source: str = "templates/my.yaml") -> TemplateError:
    with pytest.raises(TemplateError) as info:
        parse_template(text, source=source)
    return info.value


def test_builtins_are_the_three_documented_ones_and_validate():
    assert builtin_names() == ["entity-graph", "topics", "wiki"]
    for name in builtin_names():
        template = load_template_file(BUILTIN_DIR / f"{name}.yaml")
        assert template.name == name
        assert template.version >= 1 and template.description
        assert {"component", "concept"} <= {t.name for t in template.entity_types}
        assert {"uses", "part_of", "related_to"} <= {t.name for t in template.relation_types}


def test_builtin_artifacts():
    assert load_template("wiki").artifacts == ["wiki_pages", "entity_graph", "topics", "outline"]
    assert load_template("entity-graph").artifacts == ["entity_graph"]
    assert load_template("topics").artifacts == ["topics"]


def test_component_pattern_types_technical_names():
    import re

    wiki = load_template("wiki")
    component = next(t for t in wiki.entity_types if t.name == "component")
    hits = [n for n in ("Buffer Manager", "Write-Ahead Log", "Page Cache", "Lock Table")
            if any(re.search(p, n) for p in component.patterns)]  # fmt: skip
    assert hits == ["Buffer Manager", "Write-Ahead Log", "Page Cache", "Lock Table"]
    assert not any(re.search(p, "Catalog lookup") for p in component.patterns)


def test_valid_template_keeps_values():
    t = parse_template(
        "name: mine\nversion: 3\nreduce:\n  auto_merge: 0.9\n  review_band: [0.8, 0.9]\n",
        source="my.yaml",
    )
    assert (t.version, t.reduce.auto_merge, t.reduce.review_band) == (3, 0.9, (0.8, 0.9))


@pytest.mark.parametrize(
    ("text", "line", "key", "says"),
    [
        ("name: x\nreduce:\n  auto_merge: 0.9\n  auto_marge: 1\n", 4, "reduce.auto_marge",
         "unknown key (valid keys: auto_merge, review_band"),
        ("name: x\ncolour: red\n", 2, "colour", "unknown key (valid keys: name, version"),
        ("name: x\nplan:\n  topics:\n    size: 3\n", 4, "plan.topics.size",
         "valid keys: resolution, min_size, max_topics"),
        ("name: x\nentity_types:\n  - name: a\n  - nam: b\n", 4, "entity_types[1].nam",
         "valid keys: name, description, patterns"),
        ("name: x\n\nmap:\n  batch_chunks: 0\n", 4, "map.batch_chunks", "must be ≥ 1 (got 0)"),
        ("name: x\nmap:\n  concurrency: 65\n", 3, "map.concurrency", "must be ≤ 64 (got 65)"),
        ("name: x\nmap:\n  concurrency: lots\n", 3, "map.concurrency", "must be an integer"),
        ("name: x\nreduce:\n  auto_merge: high\n", 3, "reduce.auto_merge", "must be a number"),
        ("name: x\nmodels: [a]\n", 2, "models", "must be a mapping"),
        ("name: x\nartifacts: [wiki]\n", 2, "artifacts[0]", "must be one of 'wiki_pages'"),
        ("name: My Template\n", 1, "name", "must match"),
        ("name: x\nreduce:\n  auto_merge: 0.9\n  review_band: [0.8, 0.99]\n", 4,
         "reduce.review_band", "low <= high <= auto_merge"),
        ("name: x\nplan:\n  maybe_band: [0.9, 0.8]\n", 3, "plan.maybe_band", "low <= high"),
        ("name: x\nreduce:\n  review_band: [0.1, 0.2, 0.3]\n", 3, "reduce.review_band", "at most 2"),
        ("name: x\nversion: 1\nname: y\n", 3, "name", "duplicate key (first set at line 1)"),
        ("name: x\nentity_types:\n  - name: a\n    patterns: ['(unclosed']\n", 4,
         "entity_types[0].patterns[0]", "not a valid regular expression"),
        ("name: x\nrelation_types:\n  - name: uses\n  - name: uses\n", 4,
         "relation_types[1].name", "duplicate type 'uses'"),
    ],
)  # fmt: skip
def test_invalid_template_names_file_line_and_key(text, line, key, says):
    err = error_of(text)
    assert (err.file, err.line, err.key) == ("templates/my.yaml", line, key)
    assert str(err).startswith(f"templates/my.yaml:{line}: {key}: ")
    assert says in str(err)


def test_first_error_in_file_order_and_others_listed():
    err = error_of("name: x\nmap:\n  batch_chunks: 0\n  concurrency: lots\nrefine:\n  bad: 1\n")
    assert (err.line, err.key) == (3, "map.batch_chunks")
    assert "2 more problem(s): line 4: map.concurrency; line 6: refine.bad" in str(err)


def test_yaml_syntax_error_names_file_and_line():
    err = error_of("name: x\nmap:\n  batch_chunks: [1, 2\n  concurrency: 3\n")
    assert err.file == "templates/my.yaml" and err.line == 4
    assert "YAML syntax error" in str(err)


def test_bad_indentation_is_a_syntax_error_with_line():
    err = error_of("name: x\nmap:\n  batch_chunks: 1\n concurrency: 3\n")
    assert err.line == 4 and "YAML syntax error" in str(err)


@pytest.mark.parametrize("text", ["", "   \n", "# only a comment\n"])
def test_empty_file_says_so(text):
    err = error_of(text)
    assert err.file == "templates/my.yaml"
    assert "empty" in str(err)


@pytest.mark.parametrize(("text", "kind"), [("- a\n- b\n", "a list"), ("just text\n", "str")])
def test_non_mapping_top_level_says_so(text, kind):
    err = error_of(text)
    assert err.line == 1 and "must be a mapping of keys" in str(err) and kind in str(err)


def test_unsafe_yaml_tags_are_refused():
    err = error_of("name: !!python/object/apply:os.system ['true']\n")
    assert err.line == 1 and "tag not allowed" in str(err)


def test_file_name_is_the_default_name_and_errors_name_the_path(tmp_path):
    path = tmp_path / "notes-wiki.yaml"
    path.write_text("description: mine\nmap:\n  batch_chunks: 2\n", encoding="utf-8")
    assert load_template_file(path).name == "notes-wiki"
    path.write_text("description: mine\nmap:\n  batch_chunk: 2\n", encoding="utf-8")
    with pytest.raises(TemplateError, match=rf"^{path}:3: map.batch_chunk: unknown key"):
        load_template_file(path)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(TemplateError, match="no such template file"):
        load_template_file(tmp_path / "absent.yaml")
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(TemplateError, match="not UTF-8"):
        load_template_file(binary)


# ---- prompts -------------------------------------------------------------------------------

ESCAPES = [
    "{{ ''.__class__.__mro__ }}",
    "{{ cycler.__init__.__globals__ }}",
    "{{ lipsum.__globals__['os'] }}",
    "{{ cycler|attr('__in' ~ 'it__') }}",
    "{{ '{0.__class__}'.format(1) }}",
    "{% for c in chunks %}{{ c.text.__class__ }}{% endfor %}",
    "{% if false %}{{ self.__dict__ }}{% endif %}",
    "{% for c in chunks %}{{ chunks.append(1) }}{% endfor %}",
    "{{ evidence.pop() }}",
]


@pytest.mark.parametrize("prompt", ESCAPES)
def test_prompts_reaching_python_internals_fail_validation(prompt):
    text = "name: x\nmap:\n  batch_chunks: 2\n  prompt: |\n    Extract.\n    " + prompt + "\n"
    err = error_of(text)
    assert (err.line, err.key) == (4, "map.prompt")
    assert "unsafe" in str(err) or "not allowed" in str(err)


def test_prompt_syntax_error_names_key_and_prompt_line():
    err = error_of("name: x\nrefine:\n  writer_prompt: |\n    ok\n    {% for e in %}\n")
    assert (err.line, err.key) == (3, "refine.writer_prompt")
    assert "Jinja syntax error" in str(err) and "prompt line 2" in str(err)


def test_prompt_that_fails_when_rendered_is_rejected():
    err = error_of("name: x\nreduce:\n  summary_prompt: '{{ max_chars / 0 }}'\n")
    assert err.key == "reduce.summary_prompt" and "ZeroDivisionError" in str(err)


def test_prompt_with_unknown_variables_is_accepted():
    t = parse_template(
        "name: x\nplan:\n  prompt: '{{ something_new }} {% for q in questions %}{{ q.label }}"
        "{{ q.candidate.name }}{% endfor %}'\n",
        source="my.yaml",
    )
    assert "something_new" in t.plan.prompt


def test_every_shipped_prompt_passes_validation():
    from compendium.templates.loader import check_prompt

    prompts = sorted((BUILTIN_DIR / "prompts").glob("*.j2"))
    assert any(p.name == "page_layout.md.j2" for p in prompts)
    for path in prompts:
        check_prompt(path.read_text(encoding="utf-8"), file=path.name, line=None, key="k")


RESOURCE_BOMBS = [
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    "{{ 'a' * 10**10 }}",
    "{% if false %}{{ 'a' * 10**10 }}{% endif %}",  # render.py would fold it while compiling
    "{% if false %}{{ 'a'|center(10**10) }}{% endif %}",
    "{{ 'a' * 1000 * 1000 * 1000 }}",
    "{% set n = 10**9 %}{{ 'x' * n }}",
    "{{ '%0999999999d' % 1 }}",
    "{{ '{:999999999}'.format(1) }}",
    "{{ range(10**9) | list }}",
]


@pytest.mark.parametrize("prompt", RESOURCE_BOMBS)
def test_prompts_that_would_exhaust_memory_or_time_fail_fast(prompt):
    err = error_of(f"name: x\nrefine:\n  writer_prompt: {prompt!r}\n".replace("\\'", "''"))
    assert err.key == "refine.writer_prompt" and "unsafe prompt" in str(err)


def test_ordinary_arithmetic_and_formatting_still_pass():
    prompt = (
        "{{ '-' * 80 }} {{ '%s * %s' % (1, 2) }} {{ '%5.2f' | format(3.14159) }} "
        "{{ 'x{}'.format(1) }} {{ range(10) | length }}{% for i in range(3) %}{{ i }}{% endfor %}"
    )
    t = parse_template(f"name: x\nrefine:\n  writer_prompt: {prompt!r}\n", source="my.yaml")
    assert t.refine.writer_prompt == prompt
