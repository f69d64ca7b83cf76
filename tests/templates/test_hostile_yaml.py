"""Template YAML and patterns from strangers: bombs, control characters and ReDoS are refused."""

from __future__ import annotations

import re
import time

import pytest

from compendium.engines.offline.names import choose_type, entity_type_rules
from compendium.errors import TemplateError
from compendium.templates.loader import MAX_YAML_CHARS, MAX_YAML_NODES, parse_template
from compendium.templates.patterns import PatternError, compile_pattern, unicode_classes

# A "billion laughs" of a few hundred bytes: nine levels of nine aliases, 9**9 strings.
ALIAS_BOMB = (
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
)


def error_of(text: str) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        parse_template(text, source="bomb.yaml")
    return info.value


def test_alias_bomb_is_refused_at_once_naming_the_line():
    assert len(ALIAS_BOMB.encode()) < 400
    err = error_of(ALIAS_BOMB)  # refused before the aliases are expanded: the message says so
    assert (err.file, err.line) == ("bomb.yaml", 1)
    assert "anchors (&a) are not allowed" in str(err)


def test_an_alias_alone_is_refused_too():
    err = error_of("name: x\ndescription: *nowhere\n")
    assert err.line == 2 and "aliases (*nowhere) are not allowed" in str(err)


def test_size_node_count_and_depth_are_bounded():
    err = error_of("name: x\ndescription: '" + "a" * MAX_YAML_CHARS + "'\n")
    assert "the limit is" in str(err)
    many = "name: x\nitems:\n" + "".join(f"- {i}\n" for i in range(MAX_YAML_NODES + 10))
    err = error_of(many)
    assert f"more than {MAX_YAML_NODES} YAML values" in str(err) and err.line is not None
    err = error_of("name: x\nd: " + "[" * 200 + "]" * 200 + "\n")
    assert err.line == 2 and "nested more than" in str(err)


@pytest.mark.parametrize("body", ["description: a\u0002b", 'description: "a\u0002b"', "# \u0002\n"])
def test_control_characters_name_file_and_line(body):
    err = error_of(f"name: x\n{body}\n")
    assert (err.file, err.line) == ("bomb.yaml", 2)
    assert "control character U+0002" in str(err)


def test_control_characters_written_as_escapes_are_kept():
    assert parse_template('name: x\ndescription: "a\\u0002b"\n', source="t.yaml").description == "a\x02b"


# ---- patterns ------------------------------------------------------------------------------

REDOS = r"^(\w+\s?)*$!"


@pytest.mark.parametrize("pattern", [r"(a)\1", r"foo(?=bar)", r"(?<!x)y", r"(?>a+)", r"a++"])
def test_patterns_re2_cannot_run_are_refused_naming_the_field(pattern):
    text = (
        "name: x\nentity_types:\n  - name: thing\n  - name: part\n    patterns:\n"
        f"      - 'ok'\n      - '{pattern}'\n"
    )
    err = error_of(text)
    assert (err.line, err.key) == (7, "entity_types[1].patterns[1]")
    assert "types.part.patterns[1]" in str(err) and "RE2" in str(err)


def test_redos_pattern_validates_and_stays_linear():
    template = parse_template(
        f"name: x\nentity_types:\n  - name: slow\n    patterns: ['{REDOS}']\n  - name: concept\n",
        source="t.yaml",
    )
    rules = entity_type_rules(template)
    name = "a" * 24 + "!"  # backtracking `re` takes seconds on each of these
    started = time.monotonic()
    for _ in range(20):
        assert choose_type(name, "name", rules) == "concept"
    assert time.monotonic() - started < 2


def test_python_unicode_classes_keep_their_meaning():
    for pattern, text in [(r"^\w+$", "Größe"), (r"^\d+$", "٣٤"), (r"a\sb", "a\u00a0b"),
                          (r"^[\w-]+$", "naïve-Ñu"), (r"x\Z", "x"), (r"^\W$", "!")]:  # fmt: skip
        assert re.search(pattern, text), pattern
        assert compile_pattern(pattern).search(text), pattern
    assert not compile_pattern(r"^\w+$").search("a b")
    assert not compile_pattern(r"^\S+$").search("a\u2003b")
    assert unicode_classes(r"[]\w]") == r"[]\p{L}\p{N}_]"


def test_compile_pattern_error_says_what_re2_lacks():
    with pytest.raises(PatternError, match="backreferences"):
        compile_pattern(r"(a)\1")


def test_patterns_are_bounded_in_size_and_number():
    err = error_of("name: x\nentity_types:\n  - name: a\n    patterns: ['\\w{500}']\n")
    assert err.key == "entity_types[0].patterns[0]" and "too large for RE2" in str(err)
    err = error_of("name: x\nentity_types:\n  - name: a\n    patterns: ['" + "a" * 1001 + "']\n")
    assert "the limit is 1000" in str(err)
    many = "".join(f"      - 'p{i}'\n" for i in range(101))
    err = error_of(f"name: x\nentity_types:\n  - name: a\n    patterns:\n{many}")
    assert (err.line, err.key) == (4, "entity_types[0].patterns") and "more than 100 patterns" in str(err)
