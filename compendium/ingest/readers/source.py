"""A file's bytes as text: encodings, binary detection, and a title from the file name."""

from __future__ import annotations

from pathlib import Path

from ...errors import InputError


def decode(data: bytes, path: Path, warnings: list[str]) -> str:
    """UTF-8 (BOM allowed) or UTF-16 with BOM; otherwise decode with replacement and warn."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: invalid UTF-16 text", hint="save it as UTF-8") from exc
    if b"\x00" in data[:8192]:
        raise InputError(f"{path}: looks like a binary file (NUL bytes)", hint="only text belongs in this file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        bad = text.count("\ufffd")
        if bad > max(16, len(text) // 10):
            raise InputError(
                f"{path}: not text: {bad} undecodable bytes", hint="save it as UTF-8 text"
            ) from exc
        warnings.append(
            f"{path}: not valid UTF-8 (first bad byte at offset {exc.start}); "
            f"{bad} characters replaced"
        )
        return text


def title_from_name(path: Path) -> str:
    return path.stem.replace("_", " ").replace("-", " ").strip() or path.name
