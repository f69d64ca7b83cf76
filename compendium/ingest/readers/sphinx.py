"""Generic stand-ins for Sphinx's roles and directives, so Sphinx sources parse under docutils."""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives, roles

# Roles whose text is code (`:func:`, `:envvar:`); every other unknown role renders as text.
_CODE_ROLES = frozenset(
    "func meth class attr mod data const exc obj program option envvar file samp command kbd "
    "makevar mailheader regexp keyword type macro member var struct union enum enumerator "
    "function expr texpr concept".split()
)
# Directives that hold no reader-facing prose (navigation, indexes, includes, diagrams).
_SKIP = frozenset(
    "toctree index highlight literalinclude tabularcolumns currentmodule module-author "
    "sectionauthor codeauthor moduleauthor default-domain default-role graphviz digraph graph "
    "inheritance-diagram autosummary uml plantuml mermaid spelling:word-list todolist testsetup "
    "testcleanup py:currentmodule c:namespace cpp:namespace automodsumm automodapi".split()
)
_CODE = frozenset(
    "code-block sourcecode testcode testoutput doctest productionlist ipython jupyter-execute "
    "prompt code-tab literalinclude-text".split()
)
_VERSIONS = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}
# Containers whose argument is a title worth keeping as a line of text.
_TITLED = frozenset("seealso tab group-tab card dropdown tab-item grid-item-card centered".split())
_PROSE = frozenset(
    "only hlist glossary tabs tab-set grid grid-item ifconfig container-fluid todo".split()
) | _TITLED | frozenset(_VERSIONS)
# Sphinx's object descriptions: a signature, then prose about it.
_OBJECTS = frozenset(
    "function class method attribute data exception module decorator decoratormethod "
    "staticmethod classmethod property option envvar describe object program confval setting "
    "cmdoption event type macro member var struct union enum enumerator role directive "
    "autofunction autoclass automodule automethod autoattribute autodata autoexception "
    "autoproperty autodecorator".split()
)

_DIRECTIVE_NAME = re.compile(r"^[ \t]*\.\.[ \t]+(\w[\w:.+-]*)[ \t]*::", re.M)
_ROLE_NAME = re.compile(r"(?<![\w`\\]):([A-Za-z][\w:+.-]*):`")
_TITLE_TARGET = re.compile(r"^(.*?)\s*<([^<>]*)>$", re.S)


class _AnyOptions(dict):  # type: ignore[type-arg]
    """An option spec that accepts every option (Sphinx directives have many)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __bool__(self) -> bool:  # docutils looks for options only when the spec is truthy
        return True

    def __getitem__(self, key: str) -> Any:
        return directives.unchanged


class _Generic(Directive):
    has_content = True
    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = _AnyOptions()
    kind = "prose"

    def run(self) -> list[nodes.Node]:
        name = self.name.lower()
        argument = self.arguments[0] if self.arguments else ""
        if self.kind == "skip":
            return []
        if self.kind == "code":
            code = "\n".join(self.content)
            block = nodes.literal_block(code, code)
            if argument and name != "productionlist":
                block["language"] = argument.split()[0]
            return [block]
        if self.kind == "object":
            item = nodes.definition_list_item(classes=["object", name.split(":")[-1]])
            signatures = re.sub(r"\\[ \t]*\n[ \t]*", "", argument)  # "\" continues a signature
            for line in signatures.splitlines() or [name]:
                if line.strip():
                    item += nodes.term(line.strip(), line.strip())
            definition = nodes.definition()
            self.state.nested_parse(self.content, self.content_offset, definition)
            item += definition
            return [nodes.definition_list("", item)]
        box = nodes.container()
        label = _VERSIONS.get(name.split(":")[-1])
        if label and argument:
            version, *rest = argument.split(None, 1)
            box += self._paragraph(" ".join([f"{label} {version}.", *rest]))
        elif name.split(":")[-1] in _TITLED and argument:
            box += self._paragraph(argument)
        self.state.nested_parse(self.content, self.content_offset, box)
        return [box]


    def _paragraph(self, text: str) -> nodes.paragraph:
        """A paragraph of the argument's text, its inline markup (roles, literals) parsed."""
        inline, _ = self.state.inline_text(text, self.lineno)
        return nodes.paragraph(text, "", *inline)


_SPHINX_CODE = type("Generic_code", (_Generic,), {"kind": "code"})


def _directive_kind(name: str) -> str:
    bare = name.split(":")[-1]
    if name in _SKIP or bare in _SKIP:
        return "skip"
    if name in _CODE or bare in _CODE:
        return "code"
    if bare in _OBJECTS or (":" in name and bare not in _PROSE):
        return "object"
    return "prose"


def _role(name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: Any = None, content: Any = None):  # type: ignore[no-untyped-def]
    bare = name.split(":")[-1]
    text = text.replace("\\", "").strip()
    match = _TITLE_TARGET.match(text)
    if match and match.group(1):
        text = match.group(1)
    elif match:
        text = match.group(2)
    if text.startswith("!"):
        text = text[1:]
    if text.startswith("~"):
        text = re.split(r"[.:]", text[1:])[-1]
    if bare == "menuselection":
        text = text.replace("-->", "→")
    elif bare == "guilabel":
        text = text.replace("&&", "\0").replace("&", "").replace("\0", "&")
    if bare in _CODE_ROLES or name.startswith(("py:", "c:", "cpp:", "js:", "rst:")):
        return [nodes.literal(rawtext, text)], []
    return [nodes.Text(text)], []


class _ClassOrObject(Directive):
    """`.. class::` is docutils' class attribute setter and Sphinx's class description; a
    signature (a capital, a dot, a bracket) means the Sphinx one."""

    has_content = True
    required_arguments = 1
    optional_arguments = 0
    final_argument_whitespace = True
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        from docutils.parsers.rst.directives.misc import Class

        argument = self.arguments[0]
        if re.search(r"[A-Z.(:]", argument):
            described = type("Generic_object", (_Generic,), {"kind": "object"})
            return described(*self._args()).run()
        options = {k: v for k, v in self.options.items() if k in ("name",)}
        return Class(self.name, self.arguments, options, *self._args()[3:]).run()

    def _args(self) -> tuple[Any, ...]:
        return (self.name, self.arguments, self.options, self.content, self.lineno,
                self.content_offset, self.block_text, self.state, self.state_machine)


def register_unknown(source: str, language: Any, document: Any) -> None:
    """Register a generic stand-in for each role and directive the source uses that docutils
    does not know. docutils' registries are process-wide: a stand-in, once made, stays."""
    directives.register_directive("class", _ClassOrObject)
    # docutils maps these to its own `code`, which refuses Sphinx's options (:linenos:...).
    for name in ("code", "code-block", "sourcecode"):
        directives.register_directive(name, _SPHINX_CODE)
    for name in set(_DIRECTIVE_NAME.findall(source)):
        found, _ = directives.directive(name, language, document)
        if found is None:
            kind = _directive_kind(name.lower())
            directives.register_directive(name, type(f"Generic_{kind}", (_Generic,), {"kind": kind}))
    for name in set(_ROLE_NAME.findall(source)):
        found, _ = roles.role(name, language, 0, document.reporter)
        if found is None:
            roles.register_local_role(name, _role)
