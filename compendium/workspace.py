"""The workspace on disk: compendium.yaml, documents/, templates/, .compendium/ and site/."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .errors import InputError, WorkspaceError
from .tempfiles import DOCUMENTS, disk_full, sweep, temp_file

CONFIG_FILE = "compendium.yaml"
DOCUMENTS_DIR = "documents"
TEMPLATES_DIR = "templates"
STATE_DIR = ".compendium"  # the default SQLite store and caches
OUTPUT_DIR = "site"  # exports
STORE_FILE = "store.db"

# What ingest can read; anything else in an added folder is left out.
SUPPORTED_EXTENSIONS = frozenset(
    {".md", ".markdown", ".txt", ".text", ".rst", ".html", ".htm", ".pdf", ".docx"}
)

DEFAULT_CONFIG = """\
# Compendium workspace settings. Every key is optional; the values shown are the defaults.
# ${VAR} (or ${VAR:-default}) is replaced by an environment variable. Secrets are never
# written here: name the variable that holds a key with api_key_env.

knowledge_base: default
# title: Lumen DB handbook      # the exported site's title (default: this folder's name)
default_template: wiki          # `compendium templates list` shows the others

# Where compiled results live. Default: a SQLite file in .compendium/
# store: sqlite:///.compendium/store.db
# store: elasticsearch://localhost:9200
# store: mysql://user@localhost:4000/compendium

# Without an llm section Compendium runs offline: no network, rules and NLP only.
# llm:
#   base_url: https://api.openai.com/v1     # any OpenAI-compatible endpoint
#   model: gpt-4o-mini
#   api_key_env: OPENAI_API_KEY             # the variable that holds the key
#   requests_per_minute: 500
#   tokens_per_minute: 200000
#   timeout: 120
#   max_retries: 5
#   max_concurrency: 8
#   max_reply_tokens: 8192                  # reply bound (max_tokens) of JSON calls; a budget
#                                           # reserves it; lower it for a small context window
#   price_per_1k_prompt: 0.00015            # for cost reports
#   price_per_1k_completion: 0.0006

# Without an embedding section the offline embedder is used.
# embedding:
#   base_url: https://api.openai.com/v1
#   model: text-embedding-3-small
#   api_key_env: OPENAI_API_KEY
#   batch_size: 128

# token_budget: 2000000   # LLM tokens one compile may spend: a ceiling, never passed

# One compile across machines: its model calls run as tasks on `compendium worker --tasks`
# processes through a Redis broker (pip install 'compendium[distributed]'). Without it,
# the compile runs in this process.
# distributed:
#   broker: redis://127.0.0.1:6379/0          # or COMPENDIUM_BROKER
#   visibility_timeout: 300                   # seconds before a lost worker's task runs again
#   resend_after: 1200                        # seconds unanswered before the compile sends a task again

# Which template compiles which documents (first match wins; the rest use default_template).
# groups:
#   - template: entity-graph
#     include: ["specs/**"]
#     exclude: ["specs/drafts/**"]
"""


def init_workspace(path: Path) -> Path:
    """Create a workspace at `path` (or complete one); an existing compendium.yaml is kept."""
    root = Path(path).expanduser().absolute()
    if root.exists() and not root.is_dir():
        raise WorkspaceError(f"{root} exists and is not a folder")
    try:
        for folder in (root, root / DOCUMENTS_DIR, root / TEMPLATES_DIR, root / STATE_DIR):
            folder.mkdir(parents=True, exist_ok=True)
        config = root / CONFIG_FILE
        if not config.exists():
            # "x" mode: never clobber a file another process wrote in the meantime.
            with config.open("x", encoding="utf-8") as out:
                out.write(DEFAULT_CONFIG)
    except FileExistsError:
        pass
    except OSError as exc:
        raise WorkspaceError(f"cannot create a workspace at {root}: {exc.strerror}") from exc
    return root


def find_workspace(start: Path | None = None) -> Path:
    """The nearest folder at or above `start` (default: the current folder) holding
    compendium.yaml."""
    here = Path(start if start is not None else Path.cwd()).expanduser().absolute()
    if start is not None and not here.exists():
        raise WorkspaceError(f"{here}: no such folder", hint=f"create a workspace there with `compendium init {start}`")
    if start is not None and not here.is_dir():
        raise WorkspaceError(f"{here} is not a folder", hint="pass a workspace folder with --workspace")
    for folder in (here, *here.parents):
        if (folder / CONFIG_FILE).is_file():
            return folder
    raise WorkspaceError(
        f"no Compendium workspace in {here} or a folder above it (none holds {CONFIG_FILE})",
        hint="run `compendium init DIR` or pass --workspace",
    )


def documents_dir(workspace: Path) -> Path:
    return Path(workspace) / DOCUMENTS_DIR


def document_path(workspace: Path, relative: str) -> Path:
    """WORKSPACE/documents/RELATIVE, refusing any name that would land outside documents/
    (absolute paths, '..', drive letters, or a symlink inside documents/ pointing out)."""
    root = documents_dir(workspace).resolve()
    name = str(relative).replace("\\", "/")
    parts = PurePosixPath(name).parts
    if (
        not parts
        or name.startswith("/")
        or ":" in parts[0]
        or any(p in ("..", ".") or not p.strip() for p in parts)
    ):
        raise InputError(f"{relative!r} is not a document path inside {DOCUMENTS_DIR}/")
    target = root.joinpath(*parts)
    if not target.resolve().is_relative_to(root):
        raise InputError(f"{relative!r} leads outside {DOCUMENTS_DIR}/ (through a symlink)")
    return target


# What a file of each kind starts with; a text file starting with any of these is not text.
_MAGIC = {".pdf": b"%PDF-", ".docx": b"PK\x03\x04"}
_BINARY = {
    b"%PDF-": "a PDF", b"PK\x03\x04": "a zip archive (DOCX, XLSX, ...)", b"\x89PNG": "a PNG image",
    b"GIF8": "a GIF image", b"\xff\xd8\xff": "a JPEG image", b"\x7fELF": "a program (ELF)",
    b"\xd0\xcf\x11\xe0": "an old Office file (DOC, XLS)", b"\x1f\x8b": "a gzip archive",
    b"BZh": "a bzip2 archive", b"7z\xbc\xaf": "a 7-Zip archive", b"Rar!": "a RAR archive",
    b"\xfd7zXZ": "an xz archive", b"RIFF": "a RIFF file (WAV, AVI, WEBP)", b"MZ": "a Windows program",
    b"\x00\x00\x01\x00": "an icon", b"OggS": "an Ogg file", b"ID3": "an MP3 file", b"fLaC": "a FLAC file",
    b"\xca\xfe\xba\xbe": "a Java class", b"SQLite format 3": "an SQLite database", b"wOF": "a web font",
}
SNIFF_BYTES = 8192  # what sniff() needs of a file's start
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\x1b")


def sniff(name: str, head: bytes) -> str | None:
    """Why a file called `name` whose first SNIFF_BYTES are `head` is not of its extension's
    type, or None when it may be: a PDF starts with %PDF-, a DOCX is a zip; Markdown, reST,
    text and HTML are text (UTF-16 with its byte-order mark included), start with no binary
    signature, and HTML has a tag."""
    suffix = PurePosixPath(name).suffix.lower()
    magic = _MAGIC.get(suffix)
    if magic is not None:
        found = head.find(magic, 0, 1024) if suffix == ".pdf" else (0 if head.startswith(magic) else -1)
        return None if found >= 0 else f"its content is not a {suffix} file{_what(head)}"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16 text: the reader checks it
    for signature, what in _BINARY.items():
        if head.lstrip(b" \t\r\n\xef\xbb\xbf").startswith(signature):
            return f"its content is {what}, not a {suffix} text file"
    # A stray NUL or control byte is found in real manuals (a Javadoc page holds one): only a
    # share of them says binary.
    controls = sum(1 for byte in head if byte < 32 and byte not in _TEXT_CONTROLS)
    if controls > max(8, len(head) // 20):
        return f"its content is binary ({controls} control bytes in the first {len(head)}), not a {suffix} text file"
    if suffix in (".html", ".htm") and head.strip() and b"<" not in head:
        return f"its content has no HTML tag in the first {len(head)} bytes, so it is not a {suffix} file"
    return None


def _what(head: bytes) -> str:
    for signature, what in _BINARY.items():
        if head.lstrip().startswith(signature):
            return f" but {what}"
    return ""


def sniff_file(path: Path, name: str | None = None) -> str | None:
    """sniff() of the file at `path` (named `name`, else its own name); OSError if unreadable."""
    with open(path, "rb") as handle:
        return sniff(name or path.name, handle.read(SNIFF_BYTES))


@dataclass
class Added:
    """What `add` did: the files copied, each refused (source, why), the folders holding no
    document, and how many files of other types it left out."""

    copied: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)
    empty: list[Path] = field(default_factory=list)
    other_types: int = 0
    links: int = 0  # symbolic links met in a folder, left out (the file they name is added where it lies)
    source_copies: int = 0  # a Sphinx build's _sources/ copies of the pages it holds as HTML, left out


def add_documents(workspace: Path, paths: list[Path], report: Added | None = None) -> list[Path]:
    """Copy files, and folders recursively, into WORKSPACE/documents/. A folder keeps its
    structure under a folder of its own name. Hidden files and folders, symlinks met while
    walking a folder, and files of unsupported extensions in a folder are left out. Returns
    the files written.

    A file that cannot be added (missing, of an unsupported type, whose content is not its
    extension's type, whose name no documents folder can hold, or that cannot be copied) is
    refused without stopping the others: listed in `report` when one is given, else raised
    as one InputError once every other file is copied."""
    added = report if report is not None else Added()
    root = documents_dir(workspace)
    root.mkdir(parents=True, exist_ok=True)
    sweep(root, earlier=DOCUMENTS)  # what a killed add left half-copied
    for source in paths:
        source = Path(source).expanduser()
        if source.is_dir():
            _add_folder(workspace, source, added)
        elif not source.exists():
            added.refused.append((source, "no such file or folder"))
        elif source.suffix.lower() not in SUPPORTED_EXTENSIONS:
            added.refused.append((source, f"unsupported file type {source.suffix or '(none)'!r} "
                                          f"(supported: {', '.join(sorted(SUPPORTED_EXTENSIONS))})"))
        else:
            _add_file(workspace, source, source.name, added)
    if report is None and added.refused:
        first, why = added.refused[0]
        more = f"; {len(added.refused) - 1} more refused" if len(added.refused) > 1 else ""
        raise InputError(f"{first}: {why}{more}", hint="the other files were added" if added.copied else None)
    return added.copied


def _add_folder(workspace: Path, folder: Path, added: Added) -> None:
    root = documents_dir(workspace).resolve()
    folder = folder.resolve()
    if folder.is_relative_to(root):
        return  # already inside documents/
    before = len(added.copied) + len(added.refused)
    for current, dirs, files in os.walk(folder):  # never follows symlinked folders
        here = Path(current)
        # Skip hidden folders and the workspace's own documents/ (adding the workspace).
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and (here / d).resolve() != root)
        if "_sources" in dirs and (copies := _sphinx_source_copies(here)):
            # A Sphinx HTML build keeps the reST of each page it renders: read twice, every
            # passage would be cited from both copies.
            dirs.remove("_sources")
            added.source_copies += copies
        for name in sorted(files):
            source = here / name
            if name.startswith("."):
                continue
            if source.is_symlink():
                added.links += 1
                continue
            if source.suffix.lower() not in SUPPORTED_EXTENSIONS:
                added.other_types += 1
                continue
            _add_file(workspace, source, source.relative_to(folder.parent).as_posix(), added)
    if len(added.copied) + len(added.refused) == before:
        added.empty.append(folder)


def _sphinx_source_copies(build: Path) -> int:
    """How many files `build`/_sources holds when they are a Sphinx build's copies of its pages
    ("usage/start.rst.txt" beside "usage/start.html", for most of them), else 0."""
    files = [f for f in (build / "_sources").rglob("*") if f.is_file()]
    pages = 0
    for f in files:
        stem = f.relative_to(build / "_sources").as_posix().removesuffix(".txt")
        stem = stem.rsplit(".", 1)[0] if "." in stem.rsplit("/", 1)[-1] else stem
        pages += (build / f"{stem}.html").is_file()
    return len(files) if files and pages * 2 >= len(files) else 0


def _add_file(workspace: Path, source: Path, relative: str, added: Added) -> None:
    """Copy one file, or list it in `added.refused` with why."""
    try:
        why = sniff_file(source)
        if why is not None:
            added.refused.append((source, why))
            return
        target = _copy(workspace, source, relative)
    except InputError as exc:
        added.refused.append((source, str(exc).removeprefix(f"{source}: ")))
        return
    except OSError as exc:
        added.refused.append((source, f"cannot be read: {exc.strerror or exc}"))
        return
    if target is not None:
        added.copied.append(target)


def _copy(workspace: Path, source: Path, relative: str) -> Path | None:
    target = document_path(workspace, relative)
    if source.resolve() == target.resolve():
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        raise InputError(f"{target} is a symlink; refusing to write through it")
    # Copy beside the target then rename: a reader never sees half a document.
    try:
        fd, temp = temp_file(target.parent)
    except OSError as exc:
        raise _copy_error(source, target, exc) from exc
    os.close(fd)
    try:
        shutil.copyfile(source, temp)
        shutil.copystat(source, temp)
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise _copy_error(source, target, exc) from exc
    return target


def _copy_error(source: Path, target: Path, exc: OSError) -> InputError:
    try:
        needed = source.stat().st_size
    except OSError:
        needed = 0
    full = disk_full(target, needed, exc)
    if isinstance(full, InputError):
        return full
    return InputError(f"{source}: cannot copy: {exc.strerror or exc}")


def remove_document_file(workspace: Path, path: Path | str) -> Path:
    """Delete a document (a path relative to documents/, or an absolute path inside it) and
    the folders it leaves empty. Returns the path removed."""
    root = documents_dir(workspace).resolve()
    given = Path(path)
    if given.is_absolute():
        candidate = given.absolute()
        if not candidate.is_relative_to(root) and candidate.resolve().is_relative_to(root):
            candidate = candidate.resolve()
        if not candidate.is_relative_to(root):
            raise InputError(f"{path} is not inside {root}")
        relative = candidate.relative_to(root).as_posix()
    else:
        relative = str(path).replace("\\", "/")
        if relative.startswith(f"{DOCUMENTS_DIR}/"):
            relative = relative[len(DOCUMENTS_DIR) + 1 :]
    target = document_path(workspace, relative)
    if not target.is_file() and not target.is_symlink():
        raise InputError(f"no document {relative!r} in {DOCUMENTS_DIR}/")
    target.unlink()
    parent = target.parent
    while parent != root and parent.is_relative_to(root):
        try:
            parent.rmdir()  # only succeeds when empty
        except OSError:
            break
        parent = parent.parent
    return target
