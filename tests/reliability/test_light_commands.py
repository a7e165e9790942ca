"""Nothing heavy on a light command: on a fresh home, `folio add`, `list`, `show` and `search` write no
model file (the 240 MB starter model is assembled only by a command that needs a model), and `list`,
`show`, `search`, `matter list|show` and `conversations` import none of the modules only adding a file,
asking a question or redacting needs (Python's start and imports were 0.3 of `folio list`'s 0.35 s)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, run_folio


def test_list_show_search_and_add_on_a_fresh_home_write_no_model_file(tmp_path: Path, folio_home: Path) -> None:
    from app.models.registry import starter_sha256

    note = tmp_path / "note.txt"
    note.write_text("The Supplier shall deliver the goods within thirty days.\n")
    for args in (["add", str(note)], ["list"], ["list", "--json"], ["show", "1"], ["search", "Supplier"]):
        code, _out, err = run_folio(*args)
        assert code == 0, err
        assert "starter model" not in err
    # Each listed document's reading state names the starter model by its checked sha256 all the same.
    listed = json.loads(run_folio("list", "--json")[1])
    assert [d["title"] for d in listed] == ["note"]
    assert "(not read yet)" in run_folio("list")[1]
    written = [p for p in folio_home.rglob("*") if p.is_file()]
    assert not [p for p in written if p.suffix == ".gguf" or "models" in p.relative_to(folio_home).parts], written
    assert starter_sha256()  # known without the file: what the reading states are keyed by


# The command run as `python -m app.cli` runs it, then the names of every module it imported written to a file.
MODULES_AFTER = """
import json, sys
from app.cli.commands import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(sorted(n for n, m in sys.modules.items() if m is not None), out)  # None: an import refused
raise SystemExit(code)
"""

# What none of the light commands needs, each with what it costs or why it stays out.
NOT_FOR_LIGHT_COMMANDS = (
    "fitz",  # PyMuPDF (and below, every other reader of files or runtime of a model)
    "pymupdf",
    "numpy",
    "cv2",
    "onnxruntime",
    "llama_cpp",
    "PySide6",
    "openpyxl",
    "rapidfuzz",
    "ingest.load",  # the file readers: sniffing, the OCR engines, the page memo (40 ms)
    "ingest.sniff",
    "app.redaction.patterns",  # 20 compiled patterns (16 ms); `folio redact --help` names app.redaction.kinds
    "app.chat",  # the question's path: the engine, the prompt, grounding (0.1 s, through app.reading)
    "app.engine.session",
    "app.citations.grounding",
    "inference.engine_process",
    "inference.planner",
    "importlib.metadata",  # sqlite-utils' plugin search over every installed package (open_db turns it off)
)


def test_light_commands_import_nothing_heavy(tmp_path: Path) -> None:
    """`folio list` and the other commands that only read the library import no file reader, model engine,
    redaction pattern or plugin search: checked in the child process each command ran in, on a library
    with a document (a document's reading state is listed too)."""
    note = tmp_path / "note.txt"
    note.write_text("The Supplier shall deliver the goods within thirty days.\n")
    code, _out, err = run_folio("add", str(note))
    assert code == 0, err
    commands = (
        ["list"],
        ["list", "--json"],
        ["show", "1"],
        ["show", "1", "--segments"],
        ["search", "Supplier"],
        ["matter", "list"],
        ["matter", "show", "Unfiled"],
        ["conversations"],
    )
    for args in commands:
        names = tmp_path / "modules.json"
        proc = subprocess.run(
            [sys.executable, "-c", MODULES_AFTER, str(names), *args], capture_output=True, text=True, cwd=REPO
        )
        assert proc.returncode == 0, proc.stderr
        imported = set(json.loads(names.read_text(encoding="utf-8")))
        assert "app.store.library" in imported  # the command did run
        heavy = [name for name in NOT_FOR_LIGHT_COMMANDS if name in imported]
        assert not heavy, f"folio {' '.join(args)} imported {heavy}"


def test_adding_a_pdf_loads_no_layout_model(tmp_path: Path) -> None:
    """PyMuPDF 2.0 would import its layout model and LLM helpers (two ONNX networks, numpy, onnxruntime:
    1.2 s and 90 MB per process) when installed; Folio uses neither and the installers leave them out, so
    `folio add` of a PDF must not load them (ingest refuses their import), nor print PyMuPDF's line
    recommending them."""
    from tests.fixtures.media import make_report_pdf

    pdf = make_report_pdf(tmp_path / "report.pdf")  # a ruled table: its page's tables are looked for
    names = tmp_path / "modules.json"
    proc = subprocess.run(
        [sys.executable, "-c", MODULES_AFTER, str(names), "add", str(pdf)], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    imported = set(json.loads(names.read_text(encoding="utf-8")))
    assert "pymupdf" in imported  # the PDF was read with PyMuPDF
    assert proc.stdout.startswith("added: #1 ") and "pymupdf_layout" not in proc.stdout + proc.stderr
    assert not {"pymupdf.layout", "pymupdf4llm", "onnxruntime", "numpy"} & imported
