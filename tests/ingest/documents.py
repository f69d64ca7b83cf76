"""Builders of small PDF and DOCX files for the ingest tests (made at test time, never committed)."""

from __future__ import annotations

from pathlib import Path


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def minimal_pdf(pages: list[list[str]], title: str | None = None) -> bytes:
    """A valid PDF with one text line per entry of each page, in Helvetica."""
    objects: list[bytes] = []
    n_pages = len(pages)
    page_ids = [4 + 2 * i for i in range(n_pages)]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{i} 0 R" for i in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, lines in enumerate(pages):
        content_id = page_ids[i] + 1
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>".encode()
        )
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for line in lines:
            ops.append(f"({_escape(line)}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info_ref = ""
    if title is not None:
        objects.append(f"<< /Title ({_escape(title)}) >>".encode())
        info_ref = f" /Info {len(objects)} 0 R"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info_ref} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def tight_pdf(lines: list[str], gap: float = 1.0) -> bytes:
    """A one-page PDF whose words are placed one by one (Courier, 12 pt) with `gap` points
    between them and no space glyph, as tightly justified text is set."""
    ops = ["BT", "/F1 12 Tf"]
    for row, line in enumerate(lines):
        x = 72.0
        for word in line.split():
            ops.append(f"1 0 0 1 {x:.2f} {720 - 16 * row} Tm ({_escape(word)}) Tj")
            x += 7.2 * len(word) + gap  # Courier: every glyph 600/1000 of the size
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>",
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def write_docx(path: Path, parts: list[tuple[str, str]], title: str = "") -> Path:
    """A DOCX with (style, text) paragraphs; style "table" takes rows as 'a|b' lines."""
    import docx

    document = docx.Document()
    if title:
        document.core_properties.title = title
    for style, text in parts:
        if style == "table":
            rows = [r.split("|") for r in text.split("\n")]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
        elif style.startswith("Heading"):
            document.add_heading(text, level=int(style.split()[1]))
        else:
            if style and style not in [s.name for s in document.styles]:
                from docx.enum.style import WD_STYLE_TYPE

                document.styles.add_style(style, WD_STYLE_TYPE.PARAGRAPH)  # e.g. a "Code" style
            document.add_paragraph(text, style=style or None)
    document.save(str(path))
    return path
