"""Documents of a knowledge base: upload (size, type and path checked), list, read, delete."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from starlette.datastructures import UploadFile as StarletteUpload

from ..compiler.orchestrator import last_compile
from ..errors import InputError, NotFound
from ..ingest.bounded_reading import READERS, ReadLimits
from ..ingest.document_files import file_hash, find_documents
from ..storage.records import Document
from ..tempfiles import disk_full, temp_file
from ..tenancy import kb_records, kb_root
from ..workspace import (
    SNIFF_BYTES,
    SUPPORTED_EXTENSIONS,
    document_path,
    remove_document_file,
    sniff,
)
from .auth import KB, service, store_of
from .errors import COMMON, ApiError, errors
from .pagination import Paged, PageParams, page_of
from .schemas import DocumentOut

router = APIRouter(prefix="/knowledge-bases/{kb}/documents", tags=["documents"],
                   responses={**COMMON, **errors(404)})

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_FILES = 200
_TEXT = {"text/plain", "application/octet-stream"}
CONTENT_TYPES: dict[str, set[str]] = {
    ".md": _TEXT | {"text/markdown", "text/x-markdown"},
    ".markdown": _TEXT | {"text/markdown", "text/x-markdown"},
    ".txt": _TEXT,
    ".text": _TEXT,
    ".rst": _TEXT | {"text/x-rst", "text/prs.fallenstein.rst"},
    ".html": {"text/html", "application/xhtml+xml", "application/octet-stream"},
    ".htm": {"text/html", "application/xhtml+xml", "application/octet-stream"},
    ".pdf": {"application/pdf", "application/octet-stream"},
    ".docx": {
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/octet-stream",
    },
}


def max_file_bytes(request: Request) -> int:
    """The largest file one upload may carry (app.state.max_upload_bytes, else MAX_FILE_BYTES)."""
    return int(getattr(request.app.state, "max_upload_bytes", MAX_FILE_BYTES))


MAX_NAME_BYTES = 255  # one file or folder name, as most file systems allow
MAX_PATH_BYTES = 1024


def _refuse(name: str, why: str) -> ApiError:
    return ApiError(422, "invalid_input", f"{name[:300]!r}: {why}", "files")


def check_name(name: str) -> None:
    """A name the documents folder can hold and a compile will read; ApiError if not."""
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise _refuse(name, "control characters are not allowed in a file name")
    parts = PurePosixPath(name).parts
    if any(p.startswith(".") and p not in (".", "..") for p in parts):
        raise _refuse(name, "hidden files and folders (a name starting with '.') are never "
                            "compiled; rename it without the leading '.'")
    if any(len(p.encode()) > MAX_NAME_BYTES for p in parts):
        raise _refuse(name, f"a file or folder name is longer than {MAX_NAME_BYTES} bytes; "
                            "shorten it")
    if len(name.encode()) > MAX_PATH_BYTES:
        raise _refuse(name, f"the path is longer than {MAX_PATH_BYTES} bytes; shorten it")


def _existing(root: Path, path: str) -> Path:
    """The document file at `path`, or NotFound (a name no upload could have made is none)."""
    try:
        check_name(path)
        target = document_path(root, path)
    except (ApiError, InputError):
        raise NotFound(f"no document {path[:300]!r}", field="path") from None
    if not target.is_file():
        raise NotFound(f"no document {path!r}", field="path")
    return target


def _check(name: str, content_type: str | None, head: bytes) -> None:
    suffix = PurePosixPath(name).suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        raise ApiError(415, "unsupported_media_type",
                       f"{name}: unsupported file type {suffix or '(none)'!r}; supported: "
                       + ", ".join(sorted(SUPPORTED_EXTENSIONS)), "files")
    declared = (content_type or "application/octet-stream").split(";")[0].strip().lower()
    if declared not in CONTENT_TYPES.get(suffix, set()):
        raise ApiError(415, "unsupported_media_type",
                       f"{name}: content type {declared!r} does not match a {suffix} file", "files")
    why = sniff(name, head)
    if why is not None:
        raise ApiError(415, "unsupported_media_type", f"{name}: {why}", "files")


def _temp_beside(target: Path, name: str) -> tuple[int, str]:
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        raise InputError(f"{name}: refusing to write through a symlink", field="files")
    fd, temp = temp_file(target.parent)  # named so the next compile sweeps it if we are killed
    return fd, str(temp)


async def _save(upload: StarletteUpload, target: Path, limit: int, name: str) -> tuple[int, str]:
    """Copy into a temp file beside the target; (size, temp path). The caller renames it into
    place once the whole upload passed, so a compile never reads half a document, nor half an
    upload."""
    fd, temp = _temp_beside(target, name)
    size = 0
    try:
        with os.fdopen(fd, "wb") as out:
            while block := await upload.read(1 << 20):
                size += len(block)
                if size > limit:
                    raise ApiError(413, "too_large", f"{name}: larger than {limit} bytes", "files")
                try:
                    out.write(block)
                except OSError as exc:
                    full = disk_full(target, size, exc)
                    if full is exc:
                        raise
                    raise ApiError(507, "insufficient_storage", str(full), "files") from exc
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    return size, temp


async def _unpacked(temp: str, name: str, limits: ReadLimits) -> int:
    """What a zip-based document (DOCX) unpacks to, read in a bounded child process; 413
    naming the limit past MAX_UNPACKED, 415 when it is no zip that can be read."""
    try:
        return await asyncio.to_thread(READERS.unpacked_size, Path(temp), limits)
    except InputError as exc:
        status, code = (413, "too_large") if "limit" in exc.message else (415, "unsupported_media_type")
        raise ApiError(status, code, f"{name}: {exc.message.partition(': ')[2]}", "files") from None


# A folder an upload may name: parts of letters (any script), digits, spaces and punctuation,
# none starting with '.', a space or a slash, no colon, at most 4 parts of 61 characters, so the
# bytes stay within MAX_NAME_BYTES a part and MAX_PATH_BYTES a path; or none.
FOLDER_PATTERN = (r"^(?:[^\s/.:\x00-\x1f\x7f][^/:\x00-\x1f\x7f]{0,60}"
                  r"(?:/[^\s/.:\x00-\x1f\x7f][^/:\x00-\x1f\x7f]{0,60}){0,3})?$")
_EXTENSIONS = "|".join(sorted(e.lstrip(".") for e in SUPPORTED_EXTENSIONS))

# The form is read in the route, after the key and the knowledge base are checked: a stranger's
# upload is refused before a byte of it is read. So the body is described here by hand.
UPLOAD_BODY = {"required": True, "content": {"multipart/form-data": {
    "schema": {
        "type": "object", "required": ["files"], "additionalProperties": False,
        "properties": {
            "files": {"type": "array", "minItems": 1, "maxItems": MAX_FILES,
                      "items": {"type": "string", "format": "binary"},
                      "description": (
                          f"documents (at most {MAX_FILES}); a file's name ends in .{_EXTENSIONS.replace('|', ', .')} "
                          "(case aside), may hold sub-folders, no part of it starting with '.', and its bytes "
                          "are of that type: a PDF starts with %PDF-, a DOCX is a zip, the others are text; "
                          "each part's Content-Type is that type's or application/octet-stream; "
                          f"a file is at most {MAX_FILE_BYTES} bytes and a DOCX unpacks to at most 128 MB")},
            "folder": {"type": "string", "default": "", "pattern": FOLDER_PATTERN,
                       "description": "folder to put them in, inside documents/"},
        },
    },
    # What a file part is: its name and content type, as a client sends them.
    "encoding": {"files": {
        "contentType": "text/markdown",
        "headers": {"Content-Disposition": {"schema": {"type": "string"},
                                            "example": 'form-data; name="files"; filename="notes.md"'}},
    }},
}}}


@router.post("", status_code=201, response_model=list[DocumentOut], responses=errors(415, 507),
             openapi_extra={"requestBody": UPLOAD_BODY})
async def upload(kb: KB, request: Request) -> list[dict[str, Any]]:
    """The request as a whole is bounded before it is read (api/limits.py); each file here."""
    async with request.form(max_files=MAX_FILES, max_fields=10) as form:
        unknown = sorted(set(form.keys()) - {"files", "folder"})
        if unknown:
            raise InputError(f"unknown form field {unknown[0][:100]!r}: an upload has files and folder",
                             field=unknown[0][:100])
        files = [f for f in form.getlist("files") if isinstance(f, StarletteUpload)]
        folder = form.get("folder") or ""
        if not files:
            raise InputError("no files: send them as multipart/form-data fields named 'files'",
                             field="files")
        if not isinstance(folder, str):
            raise InputError("folder must be text, not a file", field="folder")
        if folder and not re.fullmatch(FOLDER_PATTERN, folder):
            check_name(folder)  # the reason for hidden, control characters and lengths
            raise InputError(f"folder {folder[:300]!r}: parts may not start with '.', a space or '/', hold a "
                             "colon or control characters, or be more than 4 of 61 characters", field="folder")
        return await _store_uploads(request, kb, files, folder)


async def _store_uploads(request: Request, kb: Any, files: list[StarletteUpload],
                         folder: str) -> list[dict[str, Any]]:
    limit = max_file_bytes(request)
    root = kb_root(service(request).data_dir, kb)
    planned = []
    for upload_file in files:
        raw = (upload_file.filename or "").replace("\\", "/")
        name = f"{folder.strip('/')}/{raw}" if folder.strip("/") else raw
        if not raw:
            raise InputError("a file has no name", field="files")
        check_name(name)
        target = document_path(root, name)  # refuses '..', absolute paths, symlinks out
        head = await upload_file.read(SNIFF_BYTES)
        await upload_file.seek(0)
        _check(name, upload_file.content_type, head)
        planned.append((upload_file, target, PurePosixPath(*PurePosixPath(name).parts).as_posix()))
    saved: list[tuple[str, Path, str, int]] = []  # (temp, target, name, size)
    try:
        unpacked = 0
        for upload_file, target, name in planned:
            size, temp = await _save(upload_file, target, limit, name)
            saved.append((temp, target, name, size))
            if target.suffix.lower() == ".docx":
                unpacked += await _unpacked(temp, name, request.app.state.document_limits)
                if unpacked > request.app.state.max_upload_unpacked:
                    raise ApiError(413, "too_large", f"{name}: the upload's documents unpack to more than the "
                                   f"{request.app.state.max_upload_unpacked / 1e6:.0f} MB limit of one upload; "
                                   "send them in several uploads", "files")
        for temp, target, _, _ in saved:
            os.replace(temp, target)
    finally:
        for temp, _, _, _ in saved:
            with contextlib.suppress(FileNotFoundError):  # renamed into place, or refused
                os.unlink(temp)
    return [{"path": name, "size": size, "format": "", "compiled": False, "status": "new"}
            for _, _, name, size in saved]


async def _records(request: Request, kb: Any) -> dict[str, Document]:
    scoped = kb_records(store_of(request), kb)
    return {d.path: d async for d in scoped.scan(Document)}  # type: ignore[attr-defined,misc]


def _out(path: str, size: int, record: Document | None, file: Path | None = None,
         failed: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"path": path, "size": size, "status": "new"}
    if record is not None:
        out.update(format=record.format, title=record.title, chunks=len(record.chunk_ids), compiled=True,
                   status="changed" if file is not None and _changed(file, size, record) else "compiled")
    reason = (failed or {}).get("documents", {}).get(path)
    if reason and out["status"] != "compiled" and file is not None and file.stat().st_mtime <= failed["at"]:
        # (and not touched since that compile tried it). The reason names the file already shown,
        # by its path on the server: keep what follows it.
        cut = reason.find(f"{path}: ")
        out.update(status="failed", error=reason[cut + len(path) + 2:] if cut >= 0 else reason)
    return out


async def _failed(request: Request, kb: Any) -> dict[str, Any]:
    """The documents the last compile could not read, with why, and when it ran."""
    last = await last_compile(kb_records(store_of(request), kb)) or {}
    documents = ((last.get("phases") or {}).get("ingest") or {}).get("failed_documents") or {}
    return {"documents": documents, "at": last.get("finished_at") or 0.0}


def _changed(file: Path, size: int, record: Document) -> bool:
    """Whether the file differs from what the last compile read (hashed only when it may)."""
    if size != record.size:
        return True
    return file.stat().st_mtime > record.updated_at and file_hash(file) != record.content_hash


@router.get("", response_model=Paged[DocumentOut])
async def list_documents(kb: KB, request: Request, page: Annotated[PageParams, Depends()]) -> dict:
    root = kb_root(service(request).data_dir, kb) / "documents"
    files = find_documents(root) if root.is_dir() else {}
    records, failed = await _records(request, kb), await _failed(request, kb)
    items = [_out(p, files[p].stat().st_size, records.get(p), files[p], failed) for p in sorted(files)]
    return page_of(items, lambda d: d["path"], page)


@router.get("/{path:path}", response_model=DocumentOut)
async def read_document(kb: KB, path: str, request: Request) -> dict:
    target = _existing(kb_root(service(request).data_dir, kb), path)
    records, failed = await _records(request, kb), await _failed(request, kb)
    return _out(path, target.stat().st_size, records.get(path), target, failed)


@router.delete("/{path:path}", status_code=204)
async def delete_document(kb: KB, path: str, request: Request) -> None:
    """Remove the file; the next compile purges what was derived only from it."""
    root = kb_root(service(request).data_dir, kb)
    _existing(root, path)
    remove_document_file(root, path)
