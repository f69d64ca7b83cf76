"""The workspace on disk: compendium.yaml, documents/, templates/, .compendium/ and site/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

from .errors import InputError, WorkspaceError
from .tempfiles import DOCUMENTS, sweep, temp_file

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


def add_documents(workspace: Path, paths: list[Path]) -> list[Path]:
    """Copy files, and folders recursively, into WORKSPACE/documents/. A folder keeps its
    structure under a folder of its own name. Hidden files and folders, symlinks met while
    walking a folder, and unsupported extensions are skipped. Returns the files written."""
    root = documents_dir(workspace)
    root.mkdir(parents=True, exist_ok=True)
    sweep(root, earlier=DOCUMENTS)  # what a killed add left half-copied
    copied: list[Path] = []
    for source in paths:
        source = Path(source).expanduser()
        if not source.exists():
            raise InputError(f"{source}: no such file or folder")
        if source.is_dir():
            copied += _add_folder(workspace, source)
        elif source.suffix.lower() not in SUPPORTED_EXTENSIONS:
            raise InputError(
                f"{source}: unsupported file type {source.suffix or '(none)'!r}",
                hint="supported: " + ", ".join(sorted(SUPPORTED_EXTENSIONS)),
            )
        else:
            target = _copy(workspace, source, source.name)
            if target is not None:
                copied.append(target)
    return copied


def _add_folder(workspace: Path, folder: Path) -> list[Path]:
    root = documents_dir(workspace).resolve()
    folder = folder.resolve()
    if folder.is_relative_to(root):
        return []  # already inside documents/
    copied = []
    for current, dirs, files in os.walk(folder):  # never follows symlinked folders
        here = Path(current)
        # Skip hidden folders and the workspace's own documents/ (adding the workspace).
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and (here / d).resolve() != root)
        for name in sorted(files):
            source = here / name
            if name.startswith(".") or source.is_symlink():
                continue
            if source.suffix.lower() not in SUPPORTED_EXTENSIONS:
                continue
            relative = source.relative_to(folder.parent).as_posix()
            target = _copy(workspace, source, relative)
            if target is not None:
                copied.append(target)
    return copied


def _copy(workspace: Path, source: Path, relative: str) -> Path | None:
    target = document_path(workspace, relative)
    if source.resolve() == target.resolve():
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        raise InputError(f"{target} is a symlink; refusing to write through it")
    # Copy beside the target then rename: a reader never sees half a document.
    fd, temp = temp_file(target.parent)
    os.close(fd)
    try:
        shutil.copyfile(source, temp)
        shutil.copystat(source, temp)
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise InputError(f"{source}: cannot copy: {exc.strerror}") from exc
    return target


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
