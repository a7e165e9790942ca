"""E-mails (.eml, read with the standard library's email package; Outlook .msg, read with extract-msg)
-> the headers as the first paragraph, the body in paragraphs, and each attachment read as a
document of its own (a scanned PDF attachment is OCR'd like any other), linked to the e-mail.

An attachment Folio does not read (a spreadsheet, an archive), or one that is damaged, is listed in
the headers with the reason and skipped; the e-mail itself is still added. Nesting is bounded
(`Limits.max_mime_depth` parts inside parts, `max_attachment_depth` e-mails inside e-mails): the
standard library parses MIME by recursion, so a mail bomb of 2,000 nested parts would otherwise end
in a RecursionError instead of one line. An e-mail whose MIME
structure is broken (a multipart without its boundaries, a body that does not decode) is refused:
what it holds cannot be told apart, and half an e-mail read as a whole one would mislead.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from email import errors as mail_errors
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from ingest.document import Anchor, Attachment, Document, Page, Segment
from ingest.errors import CorruptFile, IngestError
from ingest.limits import Limits
from ingest.sniff import decode_text
from ingest.text import split_paragraphs

# Defects after which the parts of a message cannot be told apart.
_BROKEN_STRUCTURE = (
    mail_errors.StartBoundaryNotFoundDefect,
    mail_errors.CloseBoundaryNotFoundDefect,
    mail_errors.MultipartInvariantViolationDefect,
    mail_errors.NoBoundaryInMultipartDefect,
    mail_errors.FirstHeaderLineIsContinuationDefect,
)
_UNDECODABLE = (
    mail_errors.InvalidBase64CharactersDefect,
    mail_errors.InvalidBase64PaddingDefect,
    mail_errors.InvalidBase64LengthDefect,
)
MAX_ATTACHMENTS = 200
_UNSAFE_NAME = re.compile(r"[^\w.\- ]+")


@dataclass
class _Mail:
    headers: list[tuple[str, str]]  # (name, value) in the order shown
    body: str
    files: list[tuple[str, bytes | None, str]] = field(default_factory=list)  # (name, bytes, why not read)


def read_email(
    path: Path,
    document: Document,
    *,
    outlook: bool,
    limits: Limits,
    load_attachment: Callable[[Path], Document],
) -> None:
    mail = _read_msg(path) if outlook else _read_eml(path, limits.max_mime_depth)
    if len(mail.files) > MAX_ATTACHMENTS:
        raise CorruptFile(f"{path.name}: {len(mail.files)} attachments is over the limit of {MAX_ATTACHMENTS}")
    with tempfile.TemporaryDirectory(prefix="folio-mail-") as tmp:
        for index, (name, data, why) in enumerate(mail.files, start=1):
            document.attachments.append(_attachment(Path(tmp), index, name, data, why, path, load_attachment))
    lines = [f"{name}: {value}" for name, value in mail.headers if value]
    if document.attachments:
        listed = "; ".join(
            f"{i}. {a.name}" + (f" (not read: {a.skipped})" if a.skipped else "")
            for i, a in enumerate(document.attachments, start=1)
        )
        lines.append(f"Attachments: {listed}")
    parts = [("email_headers", "\n".join(lines))] + [(role, text) for role, text in split_paragraphs(mail.body)]
    for number, (role, text) in enumerate((p for p in parts if p[1].strip()), start=1):
        document.pages.append(Page(number=number, label="", width=0.0, height=0.0))
        document.segments.append(
            Segment(kind="text", anchor=Anchor(page=number, unit="paragraph"), text=text, role=role)
        )
    subject = next((value for name, value in mail.headers if name == "Subject" and value), "")
    document.title = subject or path.stem


def _attachment(
    folder: Path,
    index: int,
    name: str,
    data: bytes | None,
    why: str,
    email_path: Path,
    load_attachment: Callable[[Path], Document],
) -> Attachment:
    if data is None:
        return Attachment(name, b"", None, why)
    if not data:
        return Attachment(name, data, None, "the attachment is empty")
    safe = _UNSAFE_NAME.sub("_", Path(name).name).strip(" .") or f"attachment-{index}"
    target = folder / f"{index:03d}-{safe}"
    target.write_bytes(data)
    try:
        part = load_attachment(target)
    except IngestError as exc:
        # The reason without the temporary file's name, which means nothing to the user.
        reason = str(exc).split(": ", 1)[1] if str(exc).startswith(target.name) else str(exc)
        return Attachment(name, data, None, reason)
    part.source_path = f"{email_path} (attachment {index}: {name})"
    if part.title in (target.stem, target.name):
        part.title = Path(name).stem or name
    return Attachment(name, data, part)


def _too_deep(path: Path, limit: int) -> CorruptFile:
    return CorruptFile(
        f"{path.name}: the e-mail's parts are nested more than {limit} levels deep (the shape of a mail bomb); "
        "it is not read"
    )


def _read_eml(path: Path, max_depth: int) -> _Mail:
    from email import policy
    from email.parser import BytesParser

    try:
        with path.open("rb") as handle:
            message = BytesParser(policy=policy.default).parse(handle)
        if not isinstance(message, EmailMessage):  # the default policy always makes EmailMessage
            raise CorruptFile(f"{path.name}: the e-mail cannot be read")
        if mime_depth(message, max_depth) > max_depth:
            raise _too_deep(path, max_depth)
    except RecursionError as exc:  # deeper than the parser itself can go: far over the limit
        raise _too_deep(path, max_depth) from exc
    _check_structure(path, message)
    headers = [
        ("From", _header(message, "From")),
        ("To", _header(message, "To")),
        ("Cc", _header(message, "Cc")),
        ("Date", _header(message, "Date")),
        ("Subject", _header(message, "Subject")),
    ]
    body_part = message.get_body(preferencelist=("plain", "html"))
    body = ""
    if body_part is not None:
        if any(isinstance(d, _UNDECODABLE) for d in body_part.defects):
            raise CorruptFile(f"{path.name}: the e-mail's text does not decode (its base64 is damaged)")
        body = _part_text(body_part)
    files: list[tuple[str, bytes | None, str]] = []
    for part in message.iter_attachments():
        name = part.get_filename() or _default_name(part, len(files) + 1)
        if part.get_content_maintype() == "message":
            inner = part.get_payload()
            attached = inner[0] if isinstance(inner, list) and inner else inner
            data = attached.as_bytes() if isinstance(attached, EmailMessage) else None
            files.append((name if name.lower().endswith(".eml") else f"{name}.eml", data, "" if data else "empty"))
            continue
        if part.get("Content-ID") and part.get_content_disposition() != "attachment" and _is_picture(part):
            files.append((name, None, "a picture shown inside the message text"))
            continue
        if any(isinstance(d, _UNDECODABLE) for d in part.defects):
            files.append((name, None, "the attachment's encoding is damaged"))
            continue
        payload = part.get_payload(decode=True)
        files.append((name, payload if isinstance(payload, bytes) else b"", ""))
    return _Mail(headers, body, files)


def mime_depth(message: Any, limit: int) -> int:
    """How deep the parts nest (1: a single part), walked without recursion, stopping past `limit`."""
    deepest = 0
    stack = [(message, 1)]
    while stack:
        part, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        payload = part.get_payload() if part.is_multipart() else None
        if isinstance(payload, list):
            stack.extend((child, depth + 1) for child in payload)
    return deepest


def _check_structure(path: Path, message: EmailMessage) -> None:
    for part in message.walk():
        broken = [d for d in part.defects if isinstance(d, _BROKEN_STRUCTURE)]
        if broken:
            reason = type(broken[0]).__name__.removesuffix("Defect")
            words = re.sub(r"(?<!^)(?=[A-Z])", " ", reason).lower()
            raise CorruptFile(f"{path.name}: the e-mail's MIME structure is broken ({words}); it cannot be read")


def _header(message: EmailMessage, name: str) -> str:
    try:
        value = message.get(name)
    except (ValueError, IndexError, TypeError):  # a header the policy cannot parse
        value = ""
    return " ".join(str(value or "").split())


def _part_text(part: Any) -> str:
    try:
        content = part.get_content()
    except (LookupError, ValueError):  # an unknown charset: read the bytes as best we can
        raw = part.get_payload(decode=True) or b""
        content = decode_text(raw) or raw.decode("utf-8", "replace")
    text = content if isinstance(content, str) else (decode_text(content) or "")
    return html_to_text(text) if part.get_content_subtype() == "html" else text


_BLOCKS = frozenset({"p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "table", "blockquote", "pre"})
_HIDDEN = frozenset({"script", "style", "head", "title"})


def html_to_text(html: str) -> str:
    """The readable text of an HTML message body (scripts and styles dropped, blocks on their own lines).

    The tree is walked with a stack of its own, not by recursion and not by inserting line breaks
    into it (each insertion walks the tree: 20,000 nested <div>s took minutes)."""
    from bs4 import BeautifulSoup, CData, NavigableString, Tag

    soup = BeautifulSoup(html, "html.parser")
    out: list[str] = []
    stack: list[tuple[Any, bool]] = [(soup, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            out.append("\n\n")
        elif isinstance(node, Tag):
            if node.name in _HIDDEN:
                continue
            if node.name == "br":
                out.append("\n")
                continue
            if node.name in _BLOCKS:
                out.append("\n\n")
                stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.contents))
        elif type(node) in (NavigableString, CData):  # not comments, doctypes, processing instructions
            out.append(str(node))
    text = re.sub(r"[ \t\xa0]+", " ", "".join(out))
    return re.sub(r"\n\s*\n(\s*\n)+", "\n\n", text).strip()


def _is_picture(part: Any) -> bool:
    return bool(part.get_content_maintype() == "image")


def _default_name(part: Any, index: int) -> str:
    subtype = part.get_content_subtype() or "bin"
    return f"attachment-{index}.{subtype}"


def _read_msg(path: Path) -> _Mail:
    import extract_msg

    try:
        message = extract_msg.openMsg(str(path))
    except Exception as exc:  # extract-msg raises its own and olefile's errors for damaged files
        raise CorruptFile(f"{path.name}: the Outlook message is damaged and cannot be read ({_short(exc)})") from exc
    try:
        headers = [
            ("From", _plain(getattr(message, "sender", ""))),
            ("To", _plain(getattr(message, "to", ""))),
            ("Cc", _plain(getattr(message, "cc", ""))),
            ("Date", _plain(getattr(message, "date", ""))),
            ("Subject", _plain(getattr(message, "subject", ""))),
        ]
        body = (getattr(message, "body", "") or "").replace("\r\n", "\n")
        if not body.strip():
            html = getattr(message, "htmlBody", None)
            if html:
                body = html_to_text(html.decode("utf-8", "replace") if isinstance(html, bytes) else str(html))
        files: list[tuple[str, bytes | None, str]] = []
        for attachment in getattr(message, "attachments", []):
            name = attachment.longFilename or attachment.shortFilename or f"attachment-{len(files) + 1}"
            data = attachment.data
            if isinstance(data, bytes):
                if attachment.hidden and attachment.contentId:
                    files.append((name, None, "a picture shown inside the message text"))
                else:
                    files.append((name, data, ""))
            elif hasattr(data, "exportBytes"):  # an attached Outlook message
                files.append((name if name.lower().endswith(".msg") else f"{name}.msg", data.exportBytes(), ""))
            else:
                files.append((name, None, "an attachment type Folio does not read"))
    except IngestError:
        raise
    except Exception as exc:
        raise CorruptFile(f"{path.name}: the Outlook message is damaged and cannot be read ({_short(exc)})") from exc
    finally:
        message.close()
    return _Mail(headers, body, files)


def _plain(value: object) -> str:
    return " ".join(str(value or "").split())


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:120]
