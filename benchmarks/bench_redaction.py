"""Redaction: how many planted personal data items the candidate finder offers (recall, per kind), how
many of those accepted can be read back out of the redacted copy (must be 0), whether anything not
accepted was lost, and the time per page.

Test set, all made by code (tests/fixtures/redaction.py) from real files of ../shared/corpus:
- contracts (contracts_pdf and contracts_tune: the sets patterns were chosen on; contracts_check:
  out of sample, reported beside them, never used to choose anything): on every second page a block of
  generated personal data (e-mail, phone, IBAN, account, card, SSN, national ID, date of birth, amount)
  and a person's name given as the user's term, printed in capitals and broken over a line end, plus on
  page 1 a control address the reviewer does not accept;
- scans: corpus scans with such a block printed onto the page and the page turned into a picture,
  alone and under an invisible OCR text layer;
- odd PDFs from the corpus (turned pages, encrypted, damaged, bad fonts, a page-tree loop);
- one PDF hiding addresses in tricky layers (text under a picture, white text, annotations, a form
  field, invisible text, a hidden layer, ActualText, metadata, XMP, an attached file, JavaScript, a
  bookmark, an incremental update holding old text).

Recall counts every planted item, hidden ones too: the finder must list each on its page (the file,
for properties, attachments, JavaScript and bookmarks) and say where it hides ('white text', 'in an
annotation', 'in an earlier revision', ...); the table of hidden places gives them one by one. A
contract whose pages have no room for a planted block on every second page is planted on any page
with room; one with no room at all is named in the report, never counted silently as nothing.

The reviewer accepts every candidate holding a planted item (and the terms). Each copy is then read by
tests/fixtures/redaction.py's attacker: the raw bytes and every stream inflated by zlib, every revision
(each %%EOF), text by PyMuPDF and pypdf, metadata and XMP, annotations and form fields, attached files,
and OCR of one page per contract (every page of a scan and of the tricky PDF). Timings include the
child process's work (reading every page, OCR of pictures, redacting, and the proof); the machine is
shared, so the load average is printed beside them.

Run: .venv/bin/python benchmarks/bench_redaction.py [--docs N] [--names N]
  --names N: also ask the quality benchmarks' model (benchmarks/eval_model.py; FOLIO_EVAL_GGUF for one
  of your own) for the names in N contracts per set, and report how many planted people it offers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.results import write_section  # noqa: E402
from tests.fixtures.redaction import (  # noqa: E402
    Planted,
    PlantedPdf,
    found_items,
    matching,
    plant_contract,
    planted_scan,
    recoverable,
    squash,
    tricky_pdf,
    words_outside,
)

HEADING = "## Redaction (benchmarks/bench_redaction.py)"
CORPUS = REPO.parent / "shared" / "corpus"
SETS = {"pdf": CORPUS / "contracts_pdf", "tune": CORPUS / "contracts_tune", "check": CORPUS / "contracts_check"}
SCANS = ["epson.pdf", "ccitt.pdf", "pdf-with-ocr-text.pdf"]
ODD = [
    "test-2812.pdf",
    "copy-protected.pdf",
    "has-bad-fonts.pdf",
    "test2238.pdf",
    "test_4942.pdf",
    "hello_world_rotated.pdf",
]
PATTERN_ORDER = ["email", "phone", "iban", "account", "card", "ssn", "national_id", "birth_date", "amount", "term"]


@dataclass
class Tally:
    hits: Counter[str] = field(default_factory=Counter)
    totals: Counter[str] = field(default_factory=Counter)
    accepted: int = 0
    survivors: list[str] = field(default_factory=list)  # "file: item kind (reader)"
    controls: int = 0
    controls_kept: int = 0
    lost_words: int = 0
    pages: int = 0
    find_s: float = 0.0
    export_s: float = 0.0
    files: int = 0
    failed: list[str] = field(default_factory=list)
    other: Counter[str] = field(default_factory=Counter)  # candidates that hold no planted item
    places: Counter[str] = field(default_factory=Counter)  # hidden planted items found, by where they hide
    place_totals: Counter[str] = field(default_factory=Counter)
    unplanted: list[str] = field(default_factory=list)  # files the fixture found no room to plant in

    def add_recall(self, candidates: list, planted: PlantedPdf) -> None:  # type: ignore[type-arg]
        hit, missed = found_items(candidates, planted)
        for item in hit:
            self.hits[item.kind] += 1
        for item in hit + missed:
            self.totals[item.kind] += 1
            if item.hidden:
                self.place_totals[item.hidden] += 1
                self.places[item.hidden] += item in hit
        planted_words = {(i.page, squash(i.text)) for i in planted.items}
        for c in candidates:
            if not any(p == c.page and w in squash(c.text) for p, w in planted_words):
                self.other[f"{c.kind} (hidden)" if c.hidden else c.kind] += 1


def redact_one(redactor, planted: PlantedPdf, tally: Tally, *, ocr: str, password: str | None = None) -> None:  # type: ignore[no-untyped-def]
    from app.redaction.candidates import Search

    name = planted.path.name
    try:
        source = redactor.source(str(planted.path), password=password)
        t = time.perf_counter()
        found = redactor.find(source, Search(terms=tuple(planted.terms)))
        tally.find_s += time.perf_counter() - t
    except Exception as exc:  # a file Folio refuses is reported, not hidden
        tally.failed.append(f"{name}: {exc}")
        return
    tally.pages += len(found.pages)
    tally.files += 1
    tally.add_recall(found.candidates, planted)
    accepted = matching(found.candidates, planted)
    tally.accepted += len(accepted)
    out = planted.path.with_name(planted.path.stem + "-redacted.pdf")
    try:
        t = time.perf_counter()
        redactor.export(source, found, accepted, out)
        tally.export_s += time.perf_counter() - t
    except Exception as exc:
        tally.failed.append(f"{name}: {exc}")
        return
    wanted = [i for i in planted.items if i.accept]
    pages_to_read = None if ocr == "all" else {min((i.page for i in wanted if i.page), default=1)}
    for how, items in recoverable(out, wanted, ocr=ocr != "none", ocr_pages=pages_to_read).items():
        tally.survivors += [f"{name}: {i.kind} ({how})" for i in items]
    controls = [i for i in planted.items if not i.accept]
    tally.controls += len(controls)
    readable = recoverable(out, controls, ocr=False).get("pypdf text (every revision)", [])
    tally.controls_kept += len(readable)
    boxes: dict[int, list[tuple[float, float, float, float]]] = {}
    for c in accepted:
        boxes.setdefault(c.page, []).extend(c.boxes)
    tally.lost_words += len(words_outside(planted.path, out, boxes))


def run_set(redactor, folder: Path, limit: int | None, work: Path) -> Tally:  # type: ignore[no-untyped-def]
    tally = Tally()
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".pdf")[:limit]
    for n, path in enumerate(files):
        print(f"  {folder.name} {n + 1}/{len(files)}: {path.name[:60]}", file=sys.stderr)
        planted = plant_contract(path, work / f"{folder.name}-{n}.pdf", seed=1000 + n, every=2)
        if not planted.items:  # no room on every second page: any page with room will do
            planted = plant_contract(path, work / f"{folder.name}-{n}.pdf", seed=1000 + n, every=1)
        if not planted.items:
            tally.unplanted.append(f"{path.name} (no empty band or column on any upright page)")
        redact_one(redactor, planted, tally, ocr="one")
    return tally


def run_others(redactor, work: Path) -> dict[str, Tally]:  # type: ignore[no-untyped-def]
    out: dict[str, Tally] = {}
    scans = Tally()
    for n, name in enumerate(SCANS):
        for layer in (False, True):
            print(f"  scan {name} (OCR layer {layer})", file=sys.stderr)
            planted = planted_scan(
                CORPUS / "scans" / name, work / f"scan-{n}-{int(layer)}.pdf", seed=50 + n, ocr_layer=layer
            )
            redact_one(redactor, planted, scans, ocr="all")
    out["scans (image, and under an OCR layer)"] = scans
    odd = Tally()
    for n, name in enumerate(ODD):
        print(f"  odd {name}", file=sys.stderr)
        path = CORPUS / "odd_pdfs" / name
        planted = plant_contract(path, work / f"odd-{n}.pdf", seed=80 + n, every=1)
        if not planted.items:  # turned pages take no planted block: the words already there are terms
            planted = _existing_words(path, work / f"odd-{n}.pdf")
        redact_one(redactor, planted, odd, ocr="none")
    out["odd PDFs"] = odd
    tricky = Tally()
    print("  tricky layers", file=sys.stderr)
    redact_one(redactor, tricky_pdf(work / "tricky.pdf"), tricky, ocr="all")
    out["tricky layers"] = tricky
    return out


def _existing_words(path: Path, copy: Path) -> PlantedPdf:
    """A PDF whose pages cannot take a planted block (turned): its first long word on each page is
    the user's term."""
    import pymupdf

    copy.write_bytes(path.read_bytes())
    items, terms = [], []
    with pymupdf.open(path) as doc:
        for page in doc:
            words = [w[4] for w in page.get_text("words") if len(w[4]) >= 5 and w[4].isalnum()]
            if words:
                terms.append(words[0])
                items.append(Planted("term", words[0], page.number + 1))
    return PlantedPdf(copy, items, list(dict.fromkeys(terms)), pages=0)


def names_recall(limit: int, work: Path) -> list[str]:
    """The eval model's names for `limit` contracts per set: the planted people it offers."""
    from app.engine.session import Session
    from app.redaction.names import suggest_names
    from benchmarks.eval_model import eval_label, open_eval_app

    ctx, _sha = open_eval_app(work / "names-home", "max_answer_tokens = 800\nthreads = 1\nread_ahead = false\n")
    lines = [f"Names by the model ({eval_label()}), {limit} contract(s) per set:", ""]
    lines += [
        "| set | planted people | offered (grounded) | other names offered | names dropped (not printed as "
        "written) | s per contract |"
    ]
    lines += ["| --- | ---: | ---: | ---: | ---: | ---: |"]
    session = Session.for_context(ctx)
    try:
        for set_name in ("check", "tune"):  # RESULTS leads with check
            planted_people = offered = other = dropped = 0
            seconds = 0.0
            files = sorted(p for p in SETS[set_name].iterdir() if p.suffix.lower() == ".pdf")[:limit]
            for n, path in enumerate(files):
                planted = plant_contract(path, work / f"names-{set_name}-{n}.pdf", seed=2000 + n, every=2, terms=False)
                doc = ctx.library.add(planted.path).document
                names_here = {line.split("Notices to ")[1].split(",")[0] for line in _notice_lines(planted.path)}
                t = time.perf_counter()
                found = suggest_names(ctx, session, doc.id)
                seconds += time.perf_counter() - t
                offered_names = {n.text for n in found.names}
                planted_people += len(names_here)
                offered += len(names_here & offered_names)
                other += len(offered_names - names_here)
                dropped += found.dropped
            each = seconds / max(1, len(files))
            lines.append(f"| {set_name} | {planted_people} | {offered} | {other} | {dropped} | {each:.0f} |")
    finally:
        session.close()
        ctx.close()
    return lines


def _notice_lines(path: Path) -> list[str]:
    import pymupdf

    with pymupdf.open(path) as doc:
        return [line for page in doc for line in page.get_text().splitlines() if line.startswith("Notices to ")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=None, help="contracts per set (default: all)")
    parser.add_argument("--names", type=int, default=0, help="contracts per set to ask the eval model for names")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"the corpus is not at {CORPUS}", file=sys.stderr)
        return 1
    os.environ.setdefault("FOLIO_HOME", tempfile.mkdtemp(prefix="bench-redaction-"))
    from app.context import open_app
    from app.redaction.service import Redactor

    load_before = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-redaction-") as tmp:
        work = Path(tmp)
        ctx = open_app()
        redactor = Redactor(ctx)
        try:
            tallies = {name: run_set(redactor, folder, args.docs, work) for name, folder in SETS.items()}
            others = run_others(redactor, work)
        finally:
            redactor.close()
            ctx.close()
        names = names_recall(args.names, work) if args.names else []
    load_after = os.getloadavg()
    lines = report(tallies, others, names, load_before, load_after, time.perf_counter() - started, args.docs)
    print("\n".join(lines))
    write_section(HEADING, lines)
    return 0


def _pct(hit: int, total: int) -> str:
    return f"{100 * hit / total:.1f}% ({hit}/{total})" if total else "-"


def report(
    tallies: dict[str, Tally],
    others: dict[str, Tally],
    names: list[str],
    load_before,
    load_after,
    seconds: float,
    docs: int | None,
) -> list[str]:  # type: ignore[no-untyped-def]
    lines = [HEADING, ""]
    lines.append(
        f"One run, {time.strftime('%Y-%m-%d')}, {seconds / 60:.0f} min, on a shared 2-core machine: load average "
        f"{load_before[0]:.1f} / {load_before[1]:.1f} / {load_before[2]:.1f} before and "
        f"{load_after[0]:.1f} / {load_after[1]:.1f} / {load_after[2]:.1f} after (1, 5, 15 min); the times are that "
        f"machine's, not a quiet one's. {'All' if docs is None else docs} contract(s) per set."
    )
    lines += [
        "",
        "Candidate recall on the planted items (pdf and tune: the sets the patterns were chosen on; "
        "check: out of sample):",
        "",
    ]
    groups = {**{f"contracts {k}": v for k, v in tallies.items()}, **others}
    head = ["kind", *groups]
    lines += ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] + ["---:"] * len(groups)) + " |"]
    for kind in PATTERN_ORDER:
        lines.append("| " + " | ".join([kind, *(_pct(t.hits[kind], t.totals[kind]) for t in groups.values())]) + " |")
    lines.append(
        "| **all** | " + " | ".join(_pct(sum(t.hits.values()), sum(t.totals.values())) for t in groups.values()) + " |"
    )
    lines += ["", "The redacted copies:", ""]
    lines += ["| | " + " | ".join(groups) + " |", "| --- | " + " | ".join(["---:"] * len(groups)) + " |"]
    rows = [
        ("files redacted", lambda t: str(t.files)),
        ("pages", lambda t: str(t.pages)),
        ("areas accepted", lambda t: str(t.accepted)),
        ("accepted items read back (any reader)", lambda t: str(len(t.survivors))),
        ("controls kept (not accepted, must stay)", lambda t: f"{t.controls_kept}/{t.controls}"),
        ("words outside the boxes lost", lambda t: str(t.lost_words)),
        ("files refused or failed", lambda t: str(len(t.failed))),
        ("finding, s/page", lambda t: f"{t.find_s / max(1, t.pages):.2f}"),
        ("redacting + proof, s/page", lambda t: f"{t.export_s / max(1, t.pages):.2f}"),
    ]
    for label, value in rows:
        lines.append(f"| {label} | " + " | ".join(value(t) for t in groups.values()) + " |")
    other = Counter[str]()
    for t in tallies.values():
        other += t.other
    pages = sum(t.pages for t in tallies.values())
    lines += [
        "",
        "Other candidates in the contracts (text that is not planted: real amounts, the parties' own phone "
        f"numbers and addresses, and false alarms), per 100 pages of {pages}: "
        + ", ".join(f"{k} {100 * n / max(1, pages):.1f}" for k, n in other.most_common()),
    ]
    hidden = others.get("tricky layers")
    if hidden is not None and hidden.place_totals:
        lines += ["", "Hidden places in the tricky layers: listed on the right page and saying where (removed from the "
                  "copy whatever is decided):", ""]  # fmt: skip
        lines += ["| where | listed |", "| --- | ---: |"]
        for place, total in hidden.place_totals.items():
            lines.append(f"| {place} | {hidden.places[place]}/{total} |")
    unplanted = [f"{name}: {u}" for name, t in groups.items() for u in t.unplanted]
    if unplanted:
        lines += ["", "Planted nothing (counted as no items): " + "; ".join(unplanted)]
    survivors = [s for t in groups.values() for s in t.survivors]
    failed = [f for t in groups.values() for f in t.failed]
    if survivors:
        lines += ["", "Read back: " + "; ".join(survivors[:20])]
    if failed:
        lines += ["", "Refused or failed: " + "; ".join(failed[:20])]
    missed = [f"{k}" for t in groups.values() for k in t.totals if t.hits[k] < t.totals[k]]
    if missed:
        lines += ["", f"Kinds with misses: {', '.join(sorted(set(missed)))}."]
    if names:
        lines += ["", *names]
    return lines


if __name__ == "__main__":
    sys.exit(main())
