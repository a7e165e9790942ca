"""The documents of a request, read from the library once and turned into prompt blocks: each opens
with its marker ([p. 12], [t 00:01:23], [§ 12.3], [attachment 1, p. 2]); scanned pages and keyframes
become images when the model has a vision projector; an e-mail brings its attachments along. And the
order a new selection's documents are put in, so that what the engine kept can be reused."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.caches import Readings
from inference.chat_format import Message
from inference.prompt import PromptDocument, SourceBlock
from ingest.document import Anchor, unit_of

if TYPE_CHECKING:
    from app.context import AppContext
    from app.store.library import DocumentRow


@dataclass(frozen=True)
class ReadDocument:
    """One selected document and the attachments read along with it (an e-mail's)."""

    row: DocumentRow
    attachments: tuple[DocumentRow, ...] = ()

    @property
    def tags(self) -> tuple[str, ...]:
        return (self.row.sha256, *(a.sha256 for a in self.attachments))


@dataclass(frozen=True)
class Documents:
    """The documents of one request, read from the library once, in prompt order."""

    read: list[ReadDocument]
    prompt: list[PromptDocument]
    images_left_out: int  # scanned pages and keyframes the model will not see

    @property
    def rows(self) -> list[DocumentRow]:
        return [d.row for d in self.read]

    @property
    def attachments(self) -> list[DocumentRow]:
        return [a for d in self.read for a in d.attachments]

    @property
    def ids(self) -> list[int]:
        return [d.row.id for d in self.read]

    @property
    def tags(self) -> tuple[str, ...]:
        """The sha256s of every document read (an e-mail's attachments too): stored with a snapshot
        so a purge finds it."""
        return tuple(dict.fromkeys(t for d in self.read for t in d.tags))

    @property
    def document_tags(self) -> tuple[tuple[str, ...], ...]:
        """The same, per document in prompt order (an e-mail with its attachments)."""
        return tuple(d.tags for d in self.read)


def read_documents(
    ctx: AppContext,
    document_ids: list[int],
    *,
    images: bool = False,
    pages: Mapping[int, Collection[int]] | None = None,
) -> Documents:
    """Documents as marked blocks; with images=True a scanned page or keyframe opens its own block.
    `pages` keeps only those pages of a document (its caller says so to the model and the user).
    An e-mail brings its attachments along, each part marked with its attachment number."""
    library = ctx.library
    read: list[ReadDocument] = []
    documents: list[PromptDocument] = []
    left_out = 0
    for index, doc_id in enumerate(document_ids, start=1):
        doc = library.get(doc_id)
        keep = pages.get(doc.id) if pages is not None else None
        blocks, missed = _source_blocks(ctx, doc, images=images, keep=keep)
        left_out += missed
        parts: list[DocumentRow] = []
        for attachment in library.attachments(doc.id):
            if attachment.document_id is None or (pages is not None and attachment.document_id not in pages):
                continue
            part = library.get(attachment.document_id)
            parts.append(part)
            part_keep = pages.get(part.id) if pages is not None else None
            part_blocks, missed = _source_blocks(
                ctx, part, images=images, attachment=attachment.position, keep=part_keep
            )
            blocks += part_blocks
            left_out += missed
        read.append(ReadDocument(doc, tuple(parts)))
        documents.append(PromptDocument(index=index, title=doc.title, blocks=blocks))
    return Documents(read, documents, left_out)


def _source_blocks(
    ctx: AppContext,
    doc: DocumentRow,
    *,
    images: bool,
    attachment: int | None = None,
    keep: Collection[int] | None = None,
) -> tuple[list[SourceBlock], int]:
    """One document's blocks, and how many of its page images were left out."""
    blocks: list[SourceBlock] = []
    current_marker: str | None = None
    current_image: str | None = None
    lines: list[str] = []
    left_out = 0
    unit = unit_of(doc.kind)
    for seg in ctx.library.segments(doc.id):
        if keep is not None and seg.page not in keep:
            continue
        if seg.image_blob and not images:
            left_out += 1
        image = str(ctx.paths.blobs_dir / seg.image_blob) if images and seg.image_blob else None
        if not seg.text and image is None:
            continue
        anchor = Anchor(page=seg.page, label=seg.label, t_seconds=seg.t_seconds, unit=unit, attachment=attachment)
        marker = anchor.marker()
        if (marker != current_marker or image is not None) and (lines or current_image):
            blocks.append(SourceBlock(current_marker or "", "\n".join(lines), image=current_image))
            lines = []
            current_image = None
        current_marker = marker
        current_image = image or current_image
        if seg.text:
            lines.append(seg.text)
    if lines or current_image:
        blocks.append(SourceBlock(current_marker or "", "\n".join(lines), image=current_image))
    return blocks, left_out


def prompt_documents(
    ctx: AppContext,
    document_ids: list[int],
    *,
    images: bool = False,
    pages: Mapping[int, Collection[int]] | None = None,
) -> list[PromptDocument]:
    return read_documents(ctx, document_ids, images=images, pages=pages).prompt


def reading_order(ctx: AppContext, model_sha: str, document_ids: list[int]) -> list[int]:
    """The order to put a new selection's documents in: those whose state was kept before first (the
    longest state on disk that holds some of them, in its order), then the rest in the order they were
    added to the library. Each document's text does not depend on the documents after it
    (inference.prompt), so the engine starts from that state and reads only the rest; and a set of
    documents always comes in the same order, whatever order it was selected in, so one reading of it
    serves every later selection of the same documents."""
    ids = list(dict.fromkeys(document_ids))
    rows = {doc_id: ctx.library.get(doc_id) for doc_id in ids}
    by_sha = {row.sha256: doc_id for doc_id, row in rows.items()}
    first = [by_sha[sha] for sha in Readings(ctx.paths).read_first(model_sha, list(by_sha)) if sha in by_sha]
    return first + sorted(doc_id for doc_id in ids if doc_id not in first)


BuildMessages = Callable[[list[PromptDocument]], list[Message]]
