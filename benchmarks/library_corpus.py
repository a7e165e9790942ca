"""Generated contract PDFs for benchmarks/bench_library.py: N contracts of 5-30 pages of realistic
contract text, spread over 50 matter folders, from a fixed seed (the same files every run).

Written once under the user cache dir (`folio-build/bench-library/<n>-<seed>-v1/`) with a marker file
written last, so a re-run reuses them and an interrupted generation is redone. One document holds a
phrase no other does (RARE_PHRASE); every document holds the common word (COMMON_WORD) on most pages.

Run alone to build the folder: .venv/bin/python benchmarks/library_corpus.py --docs 1000
"""

from __future__ import annotations

import argparse
import random
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

MATTERS = 50
SEED = 30
VERSION = "v1"  # change when the text changes: the cached folder is then built again
RARE_PHRASE = "escrow of the lighthouse keeper's ledger"
COMMON_WORD = "agreement"
LINES_PER_PAGE = 52
CHARS_PER_LINE = 92

PARTIES = [
    "Northwind Analytics LLC",
    "Contoso Legal Partners LLP",
    "Fabrikam Holdings Inc.",
    "Tailspin Logistics GmbH",
    "Adventure Works S.A.",
    "Litware Biomedical Ltd",
    "Proseware Capital LP",
    "Wingtip Energy Corp.",
    "Woodgrove Bank N.A.",
    "Lucerne Publishing plc",
    "Blue Yonder Airlines Inc.",
    "Coho Vineyard & Winery LLC",
    "Alpine Ski House AG",
    "Margie's Travel Pty Ltd",
    "Trey Research B.V.",
    "Humongous Insurance Co.",
]
PLACES = ["Delaware", "New York", "England and Wales", "California", "Ontario", "Singapore", "Ireland", "Texas"]
KINDS = [
    "Master Services Agreement",
    "Supply Agreement",
    "Software License Agreement",
    "Distribution Agreement",
    "Non-Disclosure Agreement",
    "Consulting Agreement",
    "Lease Agreement",
    "Joint Venture Agreement",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]  # fmt: skip
CLAUSES = [
    ("Definitions", "In this Agreement, unless the context otherwise requires, capitalised terms have the meanings "
     "given to them in this clause. \"Affiliate\" means any entity that directly or indirectly controls, is "
     "controlled by or is under common control with a party. \"Business Day\" means a day other than a Saturday, "
     "Sunday or public holiday in {place}. \"Confidential Information\" means all information disclosed by a party "
     "that is marked confidential or would reasonably be understood to be confidential."),
    ("Services", "The {a_role} shall provide the services described in each statement of work with the skill, "
     "care and diligence of a competent provider of such services. Each statement of work shall reference this "
     "Agreement and shall set out the deliverables, milestones and acceptance criteria agreed by the parties."),
    ("Fees and Payment", "The {b_role} shall pay the fees of {amount} US dollars per {period} within {days} days "
     "of the date of a valid invoice. Late payments accrue interest at {rate} percent per month from the due date "
     "until paid in full. All fees are exclusive of value added tax and similar taxes, which the {b_role} shall "
     "pay in addition at the applicable rate."),
    ("Term", "This Agreement commences on the Effective Date and continues for an initial term of {years} years. "
     "Thereafter it renews automatically for successive periods of one year unless either party gives written "
     "notice of non-renewal at least {notice} days before the end of the then current term."),
    ("Termination", "Either party may terminate this Agreement with immediate effect by written notice if the "
     "other party commits a material breach which is irremediable or, if remediable, is not remedied within "
     "{days} days of notice. Either party may terminate for convenience on {notice} days' written notice."),
    ("Confidentiality", "Each party shall keep the other party's Confidential Information secret for {years} "
     "years after termination of this Agreement and shall not use it except to perform its obligations. This "
     "obligation does not apply to information that is or becomes public other than through a breach of it."),
    ("Limitation of Liability", "Neither party's total liability arising under or in connection with this "
     "Agreement shall exceed the fees paid or payable in the {months} months preceding the event giving rise to "
     "the claim. Neither party shall be liable for loss of profits, revenue, goodwill or indirect loss."),
    ("Indemnity", "The {a_role} shall indemnify the {b_role} against all losses, damages, costs and expenses "
     "arising from any claim that the deliverables infringe the intellectual property rights of a third party, "
     "provided that the {b_role} promptly notifies the {a_role} and allows it to conduct the defence."),
    ("Intellectual Property", "All intellectual property rights in the deliverables vest in the {b_role} upon "
     "payment in full. The {a_role} retains all rights in its pre-existing materials and grants the {b_role} a "
     "non-exclusive, perpetual, royalty-free licence to use them as part of the deliverables."),
    ("Insurance", "The {a_role} shall maintain professional indemnity insurance of not less than {amount} US "
     "dollars per claim with reputable insurers and shall on request provide evidence of that cover."),
    ("Data Protection", "Each party shall comply with applicable data protection laws. Where the {a_role} "
     "processes personal data on behalf of the {b_role}, it shall do so only on documented instructions and "
     "shall implement appropriate technical and organisational measures against unauthorised processing."),
    ("Force Majeure", "Neither party is in breach of this Agreement nor liable for delay in performing its "
     "obligations if the delay results from events beyond its reasonable control. If the delay continues for "
     "{days} days, the party not affected may terminate this Agreement on written notice."),
    ("Assignment", "Neither party may assign, transfer or subcontract any of its rights or obligations under "
     "this Agreement without the prior written consent of the other party, not to be unreasonably withheld."),
    ("Notices", "Any notice under this Agreement shall be in writing and delivered by hand, by pre-paid post or "
     "by email to the address of the other party set out on the signature page, and is deemed received on the "
     "next Business Day."),
    ("Governing Law", "This Agreement and any dispute arising out of it shall be governed by the laws of {place}, "
     "and the courts of {place} shall have exclusive jurisdiction to settle any such dispute."),
    ("Entire Agreement", "This Agreement constitutes the entire agreement between the parties and supersedes all "
     "previous agreements, promises and understandings between them relating to its subject matter."),
]  # fmt: skip


@dataclass(frozen=True)
class Corpus:
    folder: Path
    files: list[Path]
    matters: list[str]  # folder names, one per matter
    pages: int
    rare_file: Path  # the one file holding RARE_PHRASE


def corpus_dir(n: int, seed: int = SEED) -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("folio-build")) / "bench-library" / f"{n}-{seed}-{VERSION}"


def contract_text(rng: random.Random, pages: int, rare: bool) -> tuple[str, list[str]]:
    """A contract's title and its pages as lines, clause after clause with filled-in figures."""
    a, b = rng.sample(PARTIES, 2)
    kind = rng.choice(KINDS)
    roles = ("Supplier", "Customer") if "Supply" in kind else ("Provider", "Client")
    date = f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2012, 2026)}"
    title = f"{kind} between {a} and {b}"
    lines = [
        kind.upper(),
        "",
        *textwrap.wrap(
            f'This {kind} (the "Agreement") is made on {date} between {a} (the "{roles[0]}") and {b} '
            f'(the "{roles[1]}").',
            CHARS_PER_LINE,
        ),
        "",
    ]
    number = 0
    while len(lines) < pages * LINES_PER_PAGE:
        heading, body = CLAUSES[number % len(CLAUSES)]
        number += 1
        text = body.format(
            a_role=roles[0],
            b_role=roles[1],
            place=rng.choice(PLACES),
            amount=f"{rng.randint(5, 900) * 1000:,}",
            period=rng.choice(["month", "quarter", "year"]),
            days=rng.choice([10, 14, 30, 45, 60, 90]),
            rate=rng.choice(["one", "one and a half", "two"]),
            years=rng.choice(["two", "three", "five", "seven"]),
            notice=rng.choice([30, 60, 90, 180]),
            months=rng.choice([6, 12, 18, 24]),
        )
        if rare and number == 7:
            text += f" The {roles[0]} shall hold in {RARE_PHRASE} every record of the deliverables."
        lines += [f"{number}. {heading}", *textwrap.wrap(text, CHARS_PER_LINE), ""]
    chunks = [lines[i : i + LINES_PER_PAGE] for i in range(0, pages * LINES_PER_PAGE, LINES_PER_PAGE)]
    return title, ["\n".join(chunk) for chunk in chunks]


def write_pdf(path: Path, title: str, pages: list[str]) -> None:
    import pymupdf

    doc = pymupdf.open()
    for number, text in enumerate(pages, start=1):
        page = doc.new_page(width=612, height=792)
        page.insert_text((54, 40), title[:90], fontsize=7)
        page.insert_text((54, 64), text, fontsize=9.5, lineheight=1.3)
        page.insert_text((290, 770), f"Page {number} of {len(pages)}", fontsize=7)
    doc.set_metadata({"title": title})
    doc.save(path, garbage=3, deflate=True)
    doc.close()


def build(n: int, seed: int = SEED, *, say: bool = True) -> Corpus:
    """The corpus, generated once (files and marker written under the cache dir) and reused after."""
    folder = corpus_dir(n, seed)
    marker = folder / "done.txt"
    rng = random.Random(seed)
    plan = [(i, rng.randint(5, 30)) for i in range(n)]
    rare_index = rng.randrange(n)
    matters = [f"matter-{m:02d}" for m in range(MATTERS)]
    files = [folder / matters[i % MATTERS] / f"contract-{i:05d}.pdf" for i, _ in plan]
    if not marker.exists():
        shutil.rmtree(folder, ignore_errors=True)
        for name in matters:
            (folder / name).mkdir(parents=True, exist_ok=True)
        for (i, pages), path in zip(plan, files, strict=True):
            title, texts = contract_text(random.Random(f"{seed}-{i}"), pages, i == rare_index)
            write_pdf(path, title, texts)
            if say and (i + 1) % 100 == 0:
                print(f"generated {i + 1} of {n} contracts", flush=True)
        marker.write_text(f"{n} contracts, {sum(p for _, p in plan)} pages\n")
    return Corpus(folder, files, matters, sum(p for _, p in plan), files[rare_index])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=1000)
    args = parser.parse_args()
    corpus = build(args.docs)
    print(f"{len(corpus.files)} contracts, {corpus.pages:,} pages in {corpus.folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
