"""The snapshot folder: verified before use, written atomically, capped by size (file logic only)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from inference.state_cache import StateStore, prefix_keys, state_key


def _writer(payload: bytes):  # type: ignore[no-untyped-def]
    def write(path: Path) -> int:
        path.write_bytes(payload)
        return len(payload)

    return write


def test_key_covers_model_settings_and_tokens() -> None:
    base = state_key({"model": "a", "kv": "f16"}, [1, 2, 3])
    assert base == state_key({"kv": "f16", "model": "a"}, [1, 2, 3])
    assert base != state_key({"model": "b", "kv": "f16"}, [1, 2, 3])
    assert base != state_key({"model": "a", "kv": "q8_0"}, [1, 2, 3])
    assert base != state_key({"model": "a", "kv": "f16"}, [1, 2, 4])


def test_saved_snapshot_is_found_and_damage_is_detected(tmp_path: Path) -> None:
    store = StateStore(tmp_path, 10_000)
    snap = store.save("k1", 7, _writer(b"x" * 1000))
    assert snap is not None and snap.n_tokens == 7 and snap.size == 1000
    assert store.lookup("k1") == snap
    assert (os.stat(snap.path).st_mode & 0o777) == 0o600
    data = bytearray(snap.path.read_bytes())
    data[500] ^= 0xFF  # same size, one flipped byte
    snap.path.write_bytes(bytes(data))
    assert store.lookup("k1") is None
    assert not list(tmp_path.iterdir())  # both files gone: the next read rebuilds it


def test_missing_or_garbled_record_means_no_snapshot(tmp_path: Path) -> None:
    store = StateStore(tmp_path, 10_000)
    store.save("k1", 3, _writer(b"abc"))
    (tmp_path / "k1.json").write_text("{not json")
    assert store.lookup("k1") is None
    store.save("k2", 3, _writer(b"abc"))
    (tmp_path / "k2.json").unlink()
    assert not store.has("k2") and store.lookup("k2") is None


def test_failed_write_leaves_nothing(tmp_path: Path) -> None:
    store = StateStore(tmp_path, 10_000)

    def half(path: Path) -> int:
        path.write_bytes(b"abc")
        return 0  # llama.cpp reports failure

    assert store.save("k", 3, half) is None
    assert not [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert not list(tmp_path.iterdir())


def test_least_recently_used_snapshots_are_evicted(tmp_path: Path) -> None:
    store = StateStore(tmp_path, 2500)
    for key in ("a", "b"):
        store.save(key, 1, _writer(b"x" * 1000))
        time.sleep(0.02)
    assert store.lookup("a") is not None  # 'a' is now the most recently used
    time.sleep(0.02)
    store.save("c", 1, _writer(b"x" * 1000))
    assert store.has("a") and store.has("c") and not store.has("b")
    assert store.save("huge", 1, _writer(b"x" * 3000)) is None  # bigger than the whole cap: not kept
    assert store.has("a") and store.has("c")


def test_prefix_keys_are_the_keys_of_each_prefix_and_checkpoints_are_marked(tmp_path: Path) -> None:
    fingerprint = {"model": "a", "kv": "f16"}
    tokens = list(range(100, 200))
    found = prefix_keys(fingerprint, tokens, [10, 64, 100])
    assert found == [(cut, state_key(fingerprint, tokens[:cut])) for cut in (10, 64, 100)]

    store = StateStore(tmp_path, 10_000)
    store.save(found[0][1], 10, _writer(b"c" * 100), ("doc",), checkpoint=True)
    store.save(found[2][1], 100, _writer(b"s" * 100), ("doc",))
    assert store.keys() == {found[0][1], found[2][1]}
    assert store.is_checkpoint(found[0][1]) and not store.is_checkpoint(found[2][1])
    assert not store.is_checkpoint("missing")
    assert store.discard_tagged("doc") == 2 and store.keys() == set()  # a purge takes checkpoints too
