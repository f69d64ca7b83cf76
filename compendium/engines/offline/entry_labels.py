"""An authors' entry and its label: whether "`class storage.fallback.FallbackStorage`: ...",
"`atomic(using=None)`: ..." or "`class Widget(attrs=None)`: ..." names a page's subject, in the
subject's own letter case, and whether its text opens on the reader's situation."""

from __future__ import annotations

import re

from .standalone import entry_label

# The kind a signature opens with, inside its code marks: "`class ", "`exception ", "`def "
SIGNATURE_KIND = re.compile(r"(?:class|exception|def|function|method|attribute|data|property|interface|enum)\s+")


_CALL = re.compile(r"\s*\(.*$", re.S)


def labels_subject(text: str, names: set[str], types: frozenset[str] = frozenset()) -> bool:
    """Whether an entry's label names the subject (`names` lowercased) by its signature:
    "`AT_INIT ([name])`: ...", "`atomic(using=None)`: ...", "`class storage.fallback.FallbackStorage`: ...".
    `types`: type_parts of the subject's names."""
    name = _label_name(text)
    if not name:
        return False
    bare = {n.strip("`*").removesuffix("()") for n in names}
    name = name.lower()
    # "`class Widget(attrs=None)`" is the entry of the type its module qualifies ("django.forms.Widget");
    # a module's last part is not (`graphviz`, the directive, is not the extension sphinx.ext.graphviz)
    return name in bare or name.rpartition(".")[2] in bare or name in types


def type_parts(names) -> frozenset[str]:
    """The type names ending the subject's qualified names, lowercased ("django.forms.Widget" ->
    widget)."""
    return frozenset(name.lower() for name in _type_names(names))


def _type_names(names) -> list[str]:
    """The type names ending the subject's qualified names, as written."""
    parts = (n.strip("`*").removesuffix("()").rpartition(".") for n in names)
    return [last for module, _, last in parts if module and last[:1].isupper()]


def _label_name(text: str) -> str:
    """The name an entry's label gives, as written, without its kind, arguments or owner's
    qualification kept apart ("`class storage.fallback.FallbackStorage`: ..." ->
    "storage.fallback.FallbackStorage"); "" for no label, or a constructor's."""
    end = entry_label(text)
    if not end:
        return ""
    written = text[:end].strip().rstrip(":").strip("`*")
    kind = SIGNATURE_KIND.match(written.lower())
    name = _CALL.sub("", written[kind.end():] if kind else written).strip()
    if not kind and "(" in written and name[:1].isupper() and any(c.islower() for c in name):
        return ""  # "`EventListenerSupport(Class<L> listenerInterface)`": a constructor, not its class
    return name


# A label's call with arguments ("`savepoint(using=None)`"), not a man page's section ("`scalar(1)`").
ARGUMENTS = re.compile(r"\((?!\d*\)`)[^)]")
# An entry whose text opens on the reader's situation ("`class ModelForm`: If you're building
# ...") leads into a use of the subject, not into what it is (a setting's "When set to ..." does).
_CONDITION = re.compile(r"(?:If|When|Whenever|Unless|Once)\s+you\b")


def authored_entry(text: str, names: tuple[str, ...]) -> tuple[bool, bool]:
    """(is the text the authors' entry naming the subject, is its label a call with arguments).
    A label is code, so it names the subject in the subject's own letter case, but for a first
    letter a sentence capitalised (`scalar` is Scalar): `srid` (a field's option) is not the
    subject SRID, `queryset` not QuerySet."""
    name = _label_name(text)
    written = {_cased(n.strip("`*").removesuffix("()")) for n in [*names, *_type_names(names)]}
    if not name or not (_cased(name) in written or _cased(name.rpartition(".")[2]) in written):
        return False, False
    if opens_on_condition(text):
        return False, False
    return True, bool(ARGUMENTS.search(text, 0, entry_label(text)))


def _cased(name: str) -> str:
    """A name as its letter case tells it apart: all but its first letter."""
    return name[:1].lower() + name[1:]


def opens_on_condition(text: str) -> bool:
    return bool(_CONDITION.match(text, entry_label(text)))
