"""Finding GGUFs that Ollama, LM Studio and the Hugging Face cache keep, in their real layouts."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from app.models.discovery import (
    HUGGING_FACE,
    LM_STUDIO,
    OLLAMA,
    Stores,
    default_stores,
    discover,
    projector_beside,
    scan_folder,
    scan_hf_cache,
    scan_ollama,
)
from inference.errors import ModelFileError
from inference.gguf_native import read_header
from inference.planner import qwen35_tier
from tests.fixtures.model_stores import (
    hf_cached_model,
    lmstudio_model,
    ollama_model,
    write_meta_gguf,
    write_projector,
)


def _stores(home: Path) -> Stores:
    return default_stores(home=home, environ={})


# -- Ollama ------------------------------------------------------------------------------------------------
def test_ollama_pull_is_found_by_its_manifest_with_the_projector(tmp_path: Path) -> None:
    store = tmp_path / "home" / ".ollama" / "models"
    blob = ollama_model(
        store,
        "qwen3.5",
        "9b",
        write_meta_gguf(tmp_path / "q.gguf"),
        write_projector(tmp_path / "p.gguf"),
    )
    # Another tool's manifest in the same store that has no GGUF model layer is ignored.
    other = store / "manifests" / "registry.ollama.ai" / "library" / "embed-only" / "latest"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({"schemaVersion": 2, "layers": [{"mediaType": "application/vnd.ollama.image.tensor"}]}))

    [found] = discover(_stores(tmp_path / "home"))
    assert found.source == OLLAMA and found.label == "qwen3.5:9b"
    assert found.path == blob.resolve() and blob.name.startswith("sha256-") and len(blob.name) == 7 + 64
    assert found.mmproj is not None and found.mmproj.name.startswith("sha256-")
    assert found.usable and found.is_qwen35 and found.tier == "Qwen3.5-9B"
    assert "qwen3.5:9b — Qwen3.5-9B Q4_K_M" in found.describe() and "with vision file" in found.describe()


def test_ollama_engine_models_with_vision_inside_are_listed_as_unusable(tmp_path: Path) -> None:
    store = tmp_path / "ollama"
    ollama_model(store, "qwen3.5", "9b", write_meta_gguf(tmp_path / "q.gguf", vision_tensors=True))
    ollama_model(
        store,
        "Qwen3.5-4B-GGUF",
        "Q4_K_M",
        write_meta_gguf(tmp_path / "h.gguf", tier="4B"),
        registry="hf.co",
        namespace="unsloth",
    )
    found = scan_ollama(store)
    by_label = {m.label: m for m in found}
    assert set(by_label) == {"qwen3.5:9b", "hf.co/unsloth/Qwen3.5-4B-GGUF:Q4_K_M"}
    assert "Ollama's own engine" in by_label["qwen3.5:9b"].problem
    assert by_label["hf.co/unsloth/Qwen3.5-4B-GGUF:Q4_K_M"].usable


def test_ollama_manifests_cannot_point_outside_the_blob_folder(tmp_path: Path) -> None:
    store = tmp_path / "ollama"
    secret = write_meta_gguf(tmp_path / "elsewhere.gguf")
    manifest = store / "manifests" / "registry.ollama.ai" / "library" / "evil" / "latest"
    manifest.parent.mkdir(parents=True)
    layer = {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:../../{secret.name}"}
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [layer]}))
    (store / "blobs").mkdir()
    assert scan_ollama(store) == []


def test_ollama_models_env_moves_the_store(tmp_path: Path) -> None:
    stores = default_stores(home=tmp_path, environ={"OLLAMA_MODELS": str(tmp_path / "big-disk" / "ollama")})
    assert stores.ollama == (tmp_path / "big-disk" / "ollama",)
    assert default_stores(home=tmp_path, environ={}).ollama == (tmp_path / ".ollama" / "models",)


# -- LM Studio ---------------------------------------------------------------------------------------------
def test_lm_studio_folders_pair_the_model_with_its_vision_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    models = home / ".lmstudio" / "models"
    lmstudio_model(
        models,
        "lmstudio-community",
        "Qwen3.5-9B-GGUF",
        {
            "Qwen3.5-9B-Q4_K_M.gguf": write_meta_gguf(tmp_path / "a.gguf"),
            "mmproj-Qwen3.5-9B-F32.gguf": write_projector(tmp_path / "b.gguf"),
            "mmproj-Qwen3.5-9B-F16.gguf": write_projector(tmp_path / "c.gguf"),
        },
    )
    lmstudio_model(
        home / ".cache" / "lm-studio" / "models",  # where LM Studio 0.2 kept them
        "bartowski",
        "Llama-3.2-3B-Instruct-GGUF",
        {"Llama-3.2-3B-Instruct-Q4_K_M.gguf": write_meta_gguf(tmp_path / "d.gguf", architecture="llama")},
    )
    found = discover(_stores(home))
    assert [m.label for m in found] == [
        "lmstudio-community/Qwen3.5-9B-GGUF/Qwen3.5-9B-Q4_K_M.gguf",
        "bartowski/Llama-3.2-3B-Instruct-GGUF/Llama-3.2-3B-Instruct-Q4_K_M.gguf",
    ]
    qwen, llama = found
    assert qwen.source == LM_STUDIO and qwen.mmproj is not None and qwen.mmproj.name == "mmproj-Qwen3.5-9B-F16.gguf"
    assert llama.usable and not llama.is_qwen35 and "tuned for Qwen3.5" in llama.describe()
    assert not [n for n in qwen.notes if "vision" in n]


def test_lm_studio_home_pointer_and_custom_models_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    moved = tmp_path / "D" / "lmstudio"
    (home / ".lmstudio-home-pointer").write_text(str(moved) + "\n")
    assert default_stores(home=home, environ={}).lm_studio[0] == moved / "models"
    moved.mkdir(parents=True)
    (moved / "settings.json").write_text(json.dumps({"downloadsFolder": str(tmp_path / "E" / "models")}))
    stores = default_stores(home=home, environ={})
    assert stores.lm_studio[:2] == (tmp_path / "E" / "models", moved / "models")


def test_split_models_and_adapters_are_not_offered_as_usable(tmp_path: Path) -> None:
    folder = tmp_path / "models" / "pub" / "big"
    write_meta_gguf(folder / "Qwen3.5-9B-BF16-00001-of-00002.gguf")
    write_meta_gguf(folder / "Qwen3.5-9B-BF16-00002-of-00002.gguf")
    write_meta_gguf(folder / "lora.gguf", general_type="adapter")
    found = scan_folder(tmp_path / "models", LM_STUDIO)
    assert [m.path.name for m in found] == ["Qwen3.5-9B-BF16-00001-of-00002.gguf", "lora.gguf"]
    assert "split into 2 files" in found[0].problem and "adapter" in found[1].problem


def test_damaged_and_half_downloaded_files_are_left_out(tmp_path: Path) -> None:
    folder = tmp_path / "models" / "pub" / "Qwen3.5-9B-GGUF"
    write_meta_gguf(folder / "Qwen3.5-9B-Q4_K_M.gguf")
    whole = write_meta_gguf(tmp_path / "q8.gguf").read_bytes()
    (folder / "Qwen3.5-9B-Q8_0.gguf").write_bytes(whole[:-16])  # the download stopped in the weights
    (folder / "notes.gguf").write_text("not a model")
    (folder / "mmproj-F16.gguf").write_bytes(write_projector(tmp_path / "p.gguf").read_bytes()[:100])
    found = scan_folder(tmp_path / "models", LM_STUDIO)
    assert [m.path.name for m in found] == ["Qwen3.5-9B-Q4_K_M.gguf"] and found[0].mmproj is None
    with pytest.raises(ModelFileError, match="incomplete"):
        read_header(folder / "Qwen3.5-9B-Q8_0.gguf")


# -- Hugging Face hub cache -----------------------------------------------------------------------------------
def test_hf_cache_snapshots_resolve_to_blobs_and_revisions_count_once(tmp_path: Path) -> None:
    hub = tmp_path / "home" / ".cache" / "huggingface" / "hub"
    model = write_meta_gguf(tmp_path / "m.gguf")
    twin = tmp_path / "twin.gguf"
    shutil.copy(model, twin)
    snapshot = hf_cached_model(
        hub,
        "unsloth/Qwen3.5-9B-GGUF",
        {"Qwen3.5-9B-Q4_K_M.gguf": model, "mmproj-F16.gguf": write_projector(tmp_path / "p.gguf")},
    )
    # A second revision holding the same file: the hub cache links it to the same blob.
    hf_cached_model(hub, "unsloth/Qwen3.5-9B-GGUF", {"Qwen3.5-9B-Q4_K_M.gguf": twin}, commit="b" * 40)
    # An interrupted download leaves a blob.incomplete and no usable link.
    repo = hub / "models--unsloth--Qwen3.5-4B-GGUF"
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / ("c" * 64 + ".incomplete")).write_bytes(b"GGUF partial")
    (repo / "snapshots" / ("d" * 40)).mkdir(parents=True)
    (repo / "snapshots" / ("d" * 40) / "Qwen3.5-4B-Q4_K_M.gguf").symlink_to("../../blobs/" + "c" * 64)

    link = snapshot / "Qwen3.5-9B-Q4_K_M.gguf"
    assert link.is_symlink() and not os.path.isabs(os.readlink(link))
    found = discover(_stores(tmp_path / "home"))
    assert len(found) == 1
    [model_found] = found
    assert model_found.source == HUGGING_FACE and model_found.label == "unsloth/Qwen3.5-9B-GGUF"
    assert model_found.path.parent.name == "blobs" and model_found.path == link.resolve()
    assert model_found.mmproj is not None and model_found.mmproj.parent.name == "blobs"
    assert scan_hf_cache(tmp_path / "nowhere") == []


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"HF_HUB_CACHE": "/x/hub-cache"}, "/x/hub-cache"),
        ({"HUGGINGFACE_HUB_CACHE": "/x/legacy"}, "/x/legacy"),
        ({"HF_HOME": "/x/hf", "XDG_CACHE_HOME": "/x/xdg"}, "/x/hf/hub"),
        ({"XDG_CACHE_HOME": "/x/xdg"}, "/x/xdg/huggingface/hub"),
        ({}, "HOME/.cache/huggingface/hub"),
    ],
)
def test_hf_cache_location_follows_huggingface_hub(tmp_path: Path, environ: dict[str, str], expected: str) -> None:
    stores = default_stores(home=tmp_path, environ=environ)
    assert stores.hugging_face == (Path(expected.replace("HOME", str(tmp_path))),)


# -- ordering, tiers and single files ----------------------------------------------------------------------------
def test_usable_qwen35_first_then_others_then_unusable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    models = home / ".lmstudio" / "models"
    lmstudio_model(models, "a", "llama", {"llama.gguf": write_meta_gguf(tmp_path / "1.gguf", architecture="llama")})
    lmstudio_model(models, "b", "small", {"q2.gguf": write_meta_gguf(tmp_path / "2.gguf", tier="2B")})
    lmstudio_model(models, "c", "bad", {"x.gguf": write_meta_gguf(tmp_path / "3.gguf", vision_tensors=True)})
    lmstudio_model(models, "d", "big", {"q9.gguf": write_meta_gguf(tmp_path / "4.gguf", tier="9B")})
    labels = [m.label for m in discover(_stores(home))]
    assert labels == ["d/big/q9.gguf", "b/small/q2.gguf", "a/llama/llama.gguf", "c/bad/x.gguf"]


def test_tiers_are_recognised_by_geometry() -> None:
    assert qwen35_tier(32, 4096) == "Qwen3.5-9B" and qwen35_tier(24, 1024) == "Qwen3.5-0.8B"
    assert qwen35_tier(28, 3584) is None


def test_projector_beside_a_model_picked_from_a_usb_stick(tmp_path: Path) -> None:
    stick = tmp_path / "USB"
    model = write_meta_gguf(stick / "Qwen3.5-9B-Q4_K_M.gguf")
    assert projector_beside(model) is None
    write_projector(stick / "mmproj-Qwen3.5-9B-BF16.gguf")
    write_projector(stick / "mmproj-Qwen3.5-9B-F16.gguf")
    (stick / "readme.gguf").write_text("not a gguf")
    assert projector_beside(model) == stick / "mmproj-Qwen3.5-9B-F16.gguf"


def test_a_found_model_registers_where_it_is_without_a_copy(tmp_path: Path, ctx, tiny_qwen35: Path) -> None:  # type: ignore[no-untyped-def]
    hub = tmp_path / "home" / ".cache" / "huggingface" / "hub"
    source = tmp_path / "tiny.gguf"
    shutil.copy(tiny_qwen35, source)
    hf_cached_model(hub, "folio-tests/tiny-qwen35-GGUF", {"tiny-qwen35-F32.gguf": source})
    [found] = discover(_stores(tmp_path / "home"))
    record, created = ctx.models.add(found.path, mmproj=found.mmproj)
    assert created and Path(record.path) == found.path and record.architecture == "qwen35"
    assert not list(ctx.paths.models_dir.rglob("*.gguf"))  # nothing copied into Folio's folders
