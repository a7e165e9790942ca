"""Find GGUF models other tools already keep on this machine, so Folio can use them without a copy.

Three stores, laid out the way those tools write them:
- Ollama: `<models>/manifests/<registry>/<namespace>/<model>/<tag>` is a JSON manifest whose layers
  name blobs by digest; the GGUF is `<models>/blobs/sha256-<hex>` (mediaType
  application/vnd.ollama.image.model) and a vision projector is a .projector layer.
  `<models>` is $OLLAMA_MODELS, else ~/.ollama/models (the Linux service keeps its own under
  /usr/share/ollama).
- LM Studio: `<models>/<publisher>/<repo>/*.gguf`, where `<models>` is the app's downloadsFolder
  setting, else `<home>/models` with `<home>` from ~/.lmstudio-home-pointer or ~/.lmstudio;
  older versions used ~/.cache/lm-studio/models.
- Hugging Face hub cache: `<hub>/models--<org>--<name>/snapshots/<revision>/<file>.gguf`, symlinks
  into `../../blobs/` (real files where symlinks are not allowed). `<hub>` is $HF_HUB_CACHE, else
  $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.

Each file's GGUF header is read by llama.cpp's own reader (inference.gguf_native): milliseconds per
model, and the same parser that will load it, so what is offered here llama.cpp can open. The full
facts (inference.gguf_facts, the slower `gguf` package) are read when the user picks one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app.caches import human_size
from inference.errors import ModelFileError
from inference.gguf_native import GGUFHeader, read_header
from inference.planner import QWEN35_TIERS, qwen35_tier

OLLAMA = "Ollama"
LM_STUDIO = "LM Studio"
HUGGING_FACE = "Hugging Face cache"

OLLAMA_MODEL = "application/vnd.ollama.image.model"
OLLAMA_PROJECTOR = "application/vnd.ollama.image.projector"
_DIGEST = re.compile(r"^sha256[:-]([0-9a-fA-F]{64})$")
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)
# Vision projectors beside a model: the lighter float types first (F16 is what llama.cpp suggests).
_PROJECTOR_PREFERENCE = ("f16", "bf16", "q8_0", "f32")
# Tensors of a vision tower inside the model file: llama.cpp loads vision only from a separate mmproj.
_VISION_TENSOR_PREFIXES = ("v.", "mm.")


@dataclass(frozen=True)
class FoundModel:
    source: str  # OLLAMA | LM_STUDIO | HUGGING_FACE
    label: str  # how that tool names it, e.g. "qwen3.5:9b" or "unsloth/Qwen3.5-9B-GGUF"
    path: Path  # the GGUF itself (a blob for Ollama and the Hugging Face cache)
    header: GGUFHeader
    mmproj: Path | None = None
    problem: str = ""  # why Folio cannot use it; "" = usable
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def usable(self) -> bool:
        return not self.problem

    @property
    def is_qwen35(self) -> bool:
        return self.header.architecture == "qwen35"

    @property
    def tier(self) -> str | None:
        return qwen35_tier(self.header.n_layer, self.header.embedding_length) if self.is_qwen35 else None

    @property
    def size_bytes(self) -> int:
        return self.header.size_bytes

    def describe(self) -> str:
        """One plain line: what it is, where it came from, whether Folio can use it."""
        kind = self.tier or ("Qwen3.5" if self.is_qwen35 else self.header.architecture)
        vision = ", with vision file" if self.mmproj else ""
        mtp = ", with MTP layers" if self.header.nextn_layers else ""
        size = human_size(self.size_bytes)
        text = f"{self.label} — {kind} {self.header.quantization}, {size}{vision}{mtp} ({self.source})"
        if self.problem:
            return f"{text}: {self.problem}"
        if not self.is_qwen35:
            return f"{text}: works, but Folio is tuned for Qwen3.5"
        return text


# -- where the stores are -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stores:
    ollama: tuple[Path, ...]
    lm_studio: tuple[Path, ...]
    hugging_face: tuple[Path, ...]


def default_stores(home: Path | None = None, environ: Mapping[str, str] | None = None) -> Stores:
    """Where the stores are for this user. With home given (tests), only stores under it are listed."""
    env = os.environ if environ is None else environ
    system_wide = home is None
    home = Path(home) if home is not None else Path.home()

    def from_env(name: str) -> Path | None:
        value = env.get(name, "").strip().strip("\"'")
        return Path(value).expanduser() if value else None

    ollama = [from_env("OLLAMA_MODELS") or home / ".ollama" / "models"]
    if system_wide and os.name == "posix":
        ollama.append(Path("/usr/share/ollama/.ollama/models"))  # the Linux install script's service user

    lm_home = home / ".lmstudio"
    pointer = home / ".lmstudio-home-pointer"
    try:
        pointed = pointer.read_text(encoding="utf-8").strip()
        if pointed:
            lm_home = Path(pointed).expanduser()
    except OSError:
        pass
    lm_studio = [lm_home / "models"]
    try:
        folder = json.loads((lm_home / "settings.json").read_text(encoding="utf-8")).get("downloadsFolder")
        if isinstance(folder, str) and folder.strip():
            lm_studio.insert(0, Path(folder).expanduser())
    except (OSError, ValueError, AttributeError):
        pass
    lm_studio.append(home / ".cache" / "lm-studio" / "models")

    hub = from_env("HF_HUB_CACHE") or from_env("HUGGINGFACE_HUB_CACHE")
    if hub is None:
        hf_home = from_env("HF_HOME")
        if hf_home is None:
            hf_home = (from_env("XDG_CACHE_HOME") or home / ".cache") / "huggingface"
        hub = hf_home / "hub"
    return Stores(tuple(_unique(ollama)), tuple(_unique(lm_studio)), (hub,))


def _unique(paths: list[Path]) -> list[Path]:
    seen: set[str] = set()
    out = []
    for p in paths:
        key = os.path.normcase(os.path.abspath(p))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


# -- scanning -----------------------------------------------------------------------------------------
def discover(stores: Stores | None = None) -> list[FoundModel]:
    """Every GGUF chat model in the known stores, usable Qwen3.5 first, each file once."""
    stores = stores or default_stores()
    found: list[FoundModel] = []
    for root in stores.ollama:
        found += scan_ollama(root)
    for root in stores.lm_studio:
        found += scan_folder(root, LM_STUDIO)
    for root in stores.hugging_face:
        found += scan_hf_cache(root)
    unique: dict[str, FoundModel] = {}
    for model in found:
        key = os.path.normcase(str(model.path))
        kept = unique.get(key)
        if kept is None:
            unique[key] = model
        elif kept.mmproj is None and model.mmproj is not None:
            # The same file seen twice (two hub revisions): keep the sighting that has a vision file.
            unique[key] = dataclasses.replace(kept, mmproj=model.mmproj, notes=model.notes)
    return sorted(unique.values(), key=_rank)


def _rank(m: FoundModel) -> tuple[int, int, int, str]:
    order = 0 if m.usable and m.is_qwen35 else 1 if m.usable else 2
    tiers = [t.name for t in QWEN35_TIERS]
    bigger_tier = -tiers.index(m.tier) if m.tier in tiers else 1
    return order, bigger_tier, -m.size_bytes, m.label.lower()


def scan_ollama(models_dir: Path) -> list[FoundModel]:
    manifests = models_dir / "manifests"
    blobs = models_dir / "blobs"
    out: list[FoundModel] = []
    for manifest in _files_at_depth(manifests, 4):
        try:
            layers = json.loads(manifest.read_text(encoding="utf-8")).get("layers", [])
        except (OSError, ValueError, AttributeError):
            continue
        model = projector = None
        for layer in layers if isinstance(layers, list) else []:
            if not isinstance(layer, dict):
                continue
            blob = _blob(blobs, layer.get("digest"))
            if layer.get("mediaType") == OLLAMA_MODEL and model is None:
                model = blob
            elif layer.get("mediaType") == OLLAMA_PROJECTOR and projector is None:
                projector = blob
        if model is None:
            continue  # not a GGUF model (an embedding-only or safetensors-layer manifest)
        registry, namespace, name, tag = manifest.relative_to(manifests).parts
        short = f"{name}:{tag}" if (registry, namespace) == ("registry.ollama.ai", "library") else ""
        label = short or f"{registry}/{namespace}/{name}:{tag}"
        item = _examine(OLLAMA, label, model, projector if projector and projector.is_file() else None)
        if item is not None:
            out.append(item)
    return out


def _blob(blobs: Path, digest: object) -> Path | None:
    match = _DIGEST.match(digest) if isinstance(digest, str) else None
    return blobs / f"sha256-{match.group(1).lower()}" if match else None


def scan_folder(models_dir: Path, source: str) -> list[FoundModel]:
    """LM Studio's layout: <publisher>/<repo>/<file>.gguf (a few levels at most)."""
    out: list[FoundModel] = []
    for folder, files in _gguf_folders(models_dir, max_depth=4).items():
        label = "/".join(folder.relative_to(models_dir).parts) or models_dir.name
        out += _folder_models(source, label, files)
    return out


def scan_hf_cache(hub_dir: Path) -> list[FoundModel]:
    out: list[FoundModel] = []
    try:
        repos = sorted(p for p in hub_dir.iterdir() if p.name.startswith("models--") and p.is_dir())
    except OSError:
        return out
    for repo in repos:
        org_name = repo.name.removeprefix("models--").split("--")
        label = "/".join(org_name)
        snapshots = repo / "snapshots"
        try:
            revisions = sorted(snapshots.iterdir(), key=_mtime, reverse=True)  # newest revision first
        except OSError:
            continue
        for revision in revisions:
            for _folder, files in _gguf_folders(revision, max_depth=3).items():
                out += _folder_models(HUGGING_FACE, label, files)
    return out


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def _folder_models(source: str, label: str, files: list[Path]) -> list[FoundModel]:
    """Models in one folder; a vision projector in the same folder goes with them."""
    models: list[tuple[Path, GGUFHeader]] = []
    projectors: list[Path] = []
    for path in files:
        if not path.is_file():  # a dangling symlink: a download that never finished
            continue
        try:
            header = read_header(path)
        except ModelFileError:
            continue
        if header.is_projector:
            projectors.append(path)
        else:
            models.append((path, header))
    projector = _preferred_projector(projectors)
    out = []
    for path, header in models:
        shown = f"{label}/{path.name}" if source != HUGGING_FACE or len(models) > 1 else label
        item = _examine(source, shown, path, projector, header)
        if item is not None:
            out.append(item)
    return out


def _preferred_projector(paths: list[Path]) -> Path | None:
    def rank(p: Path) -> tuple[int, str]:
        name = p.name.lower()
        hits = [i for i, kind in enumerate(_PROJECTOR_PREFERENCE) if kind in re.split(r"[-_.]", name)]
        return (hits[0] if hits else len(_PROJECTOR_PREFERENCE), name)

    return min(paths, key=rank) if paths else None


def _examine(
    source: str, label: str, path: Path, mmproj: Path | None, header: GGUFHeader | None = None
) -> FoundModel | None:
    try:
        if header is None:
            header = read_header(path)
    except ModelFileError:
        return None  # a missing or non-GGUF blob: nothing to offer
    if header.is_projector:
        return None
    resolved = path.resolve()
    problem = ""
    notes: list[str] = []
    split = _SPLIT.search(path.name)
    if split:
        if split.group(1) != "00001":
            return None  # the first part stands for the whole model
        problem = f"split into {int(split.group(2))} files; join them with llama-gguf-split --merge first"
    elif header.general_type == "adapter":
        problem = "a LoRA adapter, not a model"
    elif header.block_count <= 0:
        problem = "not a chat model"
    elif any(n.startswith(_VISION_TENSOR_PREFIXES) for n in header.tensor_names):
        # Ollama's own engine packs the vision tower into the model file; llama.cpp refuses such files.
        problem = "made for Ollama's own engine (vision inside the model file); llama.cpp cannot load it"
    if mmproj is None and header.architecture == "qwen35":
        notes.append("no vision file beside it: scanned pages and video frames will be read as text only")
    return FoundModel(source, label, resolved, header, mmproj.resolve() if mmproj else None, problem, tuple(notes))


def _files_at_depth(root: Path, depth: int) -> Iterator[Path]:
    if depth == 0:
        if root.is_file():
            yield root
        return
    try:
        children = sorted(root.iterdir())
    except OSError:
        return
    for child in children:
        yield from _files_at_depth(child, depth - 1)


def _gguf_folders(root: Path, max_depth: int) -> dict[Path, list[Path]]:
    """{folder: [*.gguf in it]} below root, without following folder symlinks out of the store."""
    out: dict[Path, list[Path]] = {}
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        files = [e for e in entries if e.name.lower().endswith(".gguf") and not e.name.startswith(".")]
        if files:
            out[folder] = files
        if depth < max_depth:
            stack += [(e, depth + 1) for e in entries if e.is_dir() and not e.is_symlink()]
    return dict(sorted(out.items()))


# -- single files (picked from a disk, or already registered) --------------------------------------------
def projector_beside(model_path: Path) -> Path | None:
    """A vision projector in the model's folder, as a download or a USB stick would carry it."""
    try:
        siblings = sorted(p for p in model_path.parent.iterdir() if p.name.lower().endswith(".gguf"))
    except OSError:
        return None
    projectors = []
    for path in siblings:
        if path == model_path or not path.is_file():
            continue
        try:
            if read_header(path).is_projector:
                projectors.append(path)
        except ModelFileError:
            continue
    return _preferred_projector(projectors)


def examine_file(path: Path, source: str, label: str = "", mmproj: Path | None = None) -> FoundModel | None:
    """One GGUF as the setup page lists it; None when it is not a model (a projector, not a GGUF)."""
    return _examine(source, label or path.name, path, mmproj)
