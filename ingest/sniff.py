"""Tell a file's type from its first bytes, never from its name."""

from __future__ import annotations

import codecs
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

HEAD_BYTES = 4096


@dataclass(frozen=True)
class FileType:
    family: str  # pdf | image | video | word | text | email | msg | damaged | unknown
    name: str  # short human name: 'PDF', 'PNG image', 'ZIP archive'...
    mime: str


PDF = FileType("pdf", "PDF", "application/pdf")
WORD = FileType("word", "Word document", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
OUTLOOK = FileType("msg", "Outlook message", "application/vnd.ms-outlook")
EMAIL = FileType("email", "e-mail message", "message/rfc822")
TEXT = FileType("text", "plain text file", "text/plain")
MARKDOWN = FileType("text", "Markdown text", "text/markdown")
ENCRYPTED_OFFICE = FileType("unknown", "password-protected Office file", "application/x-encrypted-office")
CFB_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # OLE compound file: old Office, Outlook .msg
# Headers that mark the start of an e-mail saved as text (RFC 5322), lower-cased.
_MAIL_HEADERS = {"from", "to", "cc", "subject", "date", "message-id", "mime-version", "received", "return-path"}
_HEADER_LINE = re.compile(rb"^[A-Za-z][A-Za-z0-9-]{0,60}:")


def _video(name: str, mime: str) -> FileType:
    return FileType("video", name, mime)


def _image(name: str, mime: str) -> FileType:
    return FileType("image", name, mime)


def sniff_bytes(head: bytes) -> FileType:
    # PDF readers accept junk before the header (seen in real files), so look a little way in.
    if b"%PDF-" in head[:1024]:
        return PDF
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return _image("PNG image", "image/png")
    if head.startswith(b"\xff\xd8\xff"):
        return _image("JPEG image", "image/jpeg")
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return _image("TIFF image", "image/tiff")
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return _image("WebP image", "image/webp")
    if head[:2] == b"BM" and len(head) >= 26:
        return _image("BMP image", "image/bmp")
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return _video("AVI video", "video/x-msvideo")
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand.startswith(b"qt"):
            return _video("QuickTime video", "video/quicktime")
        if brand in (b"heic", b"heix", b"mif1", b"avif"):
            return FileType("unknown", "HEIF/AVIF image", "image/heif")
        return _video("MP4 video", "video/mp4")
    if head[4:8] in (b"moov", b"mdat", b"wide", b"free"):
        return _video("QuickTime video", "video/quicktime")
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        if b"webm" in head[:64]:
            return _video("WebM video", "video/webm")
        return _video("Matroska video", "video/x-matroska")
    return _describe_unknown(head)


_KNOWN_OTHERS: list[tuple[bytes, str]] = [
    (b"PK\x03\x04", "ZIP archive"),
    (CFB_MAGIC, "Microsoft Office file"),
    (b"GIF8", "GIF image"),
    (b"GGUF", "GGUF model file"),
    (b"SQLite format 3", "SQLite database"),
    (b"\x7fELF", "program (ELF executable)"),
    (b"MZ", "Windows program"),
    (b"\x1f\x8b", "gzip archive"),
    (b"{\\rtf", "RTF document"),
    (b"ID3", "MP3 audio"),
    (b"OggS", "Ogg audio/video"),
    (b"fLaC", "FLAC audio"),
]


def _describe_unknown(head: bytes) -> FileType:
    for magic, name in _KNOWN_OTHERS:
        if head.startswith(magic):
            return FileType("unknown", name, "application/octet-stream")
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return FileType("unknown", "WAV audio", "audio/wav")
    if not head:
        return FileType("unknown", "empty file", "application/octet-stream")
    text = decode_text(head, final=False)
    if text is None:
        return FileType("unknown", "unrecognised binary file", "application/octet-stream")
    if _looks_like_email(head):  # before HTML: an e-mail's body may well be HTML
        return EMAIL
    lowered = text[:1024].lower()
    if "<html" in lowered or "<!doctype html" in lowered:
        return FileType("unknown", "HTML page", "text/html")
    if re.search(r"(?m)^#{1,6} \S|^\S.*\n(?:===+|---+)\s*$", text):
        return MARKDOWN
    return TEXT


def decode_text(data: bytes, *, final: bool = True) -> str | None:
    """Text from bytes: UTF-8 (with or without a BOM), UTF-16 with a BOM, else Windows-1252 when the
    bytes hold no control characters a text file never has. None: not text. With final=False the
    bytes are a file's head, and a character cut at its end is not an error."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return codecs.getincrementaldecoder("utf-16")().decode(data, final=final)
        except UnicodeDecodeError:
            return None
    try:
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(data, final=final)
    except UnicodeDecodeError:
        try:
            text = data.decode("cp1252")
        except UnicodeDecodeError:
            return None
    if any(ch in text for ch in "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17"):
        return None
    return text


def _looks_like_email(head: bytes) -> bool:
    """An RFC 5322 header block: header lines (and folded continuations) up to the first blank line,
    naming at least two of From, To, Subject, Date, Message-ID, MIME-Version, Received..."""
    seen: set[str] = set()
    lines = head.replace(b"\r\n", b"\n").split(b"\n")
    for index, line in enumerate(lines):
        if not line.strip():
            return index > 0 and len(seen) >= 2
        if line[:1] in (b" ", b"\t") and index > 0:
            continue
        if index == 0 and line.startswith(b"From "):  # an mbox separator line
            continue
        if not _HEADER_LINE.match(line):
            return False
        name = line.split(b":", 1)[0].decode("ascii", "replace").lower()
        if name in _MAIL_HEADERS:
            seen.add(name)
    return len(seen) >= 3  # the head ended inside a long header block


def _sniff_zip(path: Path) -> FileType:
    """A Word document is a ZIP (OOXML package) holding word/document.xml; say what other ZIPs are."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return FileType("damaged", "ZIP archive (a Word file is one) that is cut short or corrupted", "application/zip")
    if "[Content_Types].xml" in names:
        if "word/document.xml" in names:
            return WORD
        if "xl/workbook.xml" in names:
            return FileType("unknown", "Excel workbook", "application/vnd.ms-excel")
        if "ppt/presentation.xml" in names:
            return FileType("unknown", "PowerPoint presentation", "application/vnd.ms-powerpoint")
    if "mimetype" in names and any(n.startswith("content.xml") for n in names):
        return FileType("unknown", "OpenDocument file (save it as .docx or PDF)", "application/vnd.oasis.opendocument")
    return FileType("unknown", "ZIP archive", "application/zip")


def _sniff_cfb(path: Path) -> FileType:
    """OLE compound files: an encrypted Office file (its EncryptedPackage stream), an Outlook .msg,
    or an old Word/Excel/PowerPoint binary file."""
    import olefile

    try:
        with olefile.OleFileIO(str(path)) as ole:
            streams = {"/".join(entry) for entry in ole.listdir(streams=True, storages=False)}
    except (OSError, ValueError):  # olefile raises OSError for files that are not OLE or are cut short
        return FileType(
            "damaged", "Microsoft Office or Outlook file that is cut short or corrupted", "application/x-ole-storage"
        )
    if "EncryptedPackage" in streams:
        return ENCRYPTED_OFFICE
    if "__properties_version1.0" in streams and any(s.startswith("__substg1.0_") for s in streams):
        return OUTLOOK
    if "WordDocument" in streams:
        return FileType("unknown", "Word 97-2003 document (save it as .docx)", "application/msword")
    if "Workbook" in streams or "Book" in streams:
        return FileType("unknown", "Excel 97-2003 workbook", "application/vnd.ms-excel")
    if "PowerPoint Document" in streams:
        return FileType("unknown", "PowerPoint 97-2003 presentation", "application/vnd.ms-powerpoint")
    return FileType("unknown", "Microsoft Office file", "application/x-ole-storage")


def sniff(path: Path) -> FileType:
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    if head.startswith(b"PK\x03\x04"):
        return _sniff_zip(path)
    if head.startswith(CFB_MAGIC):
        return _sniff_cfb(path)
    return sniff_bytes(head)
