"""The app icon: drawn from one SVG at every size, and the installers' .ico and .icns made from it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.gui


def _make_icons() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_icons", REPO / "tools" / "make_icons.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sizes(path: Path) -> list[int]:
    from PySide6.QtGui import QImageReader

    reader = QImageReader(str(path))
    sizes = []
    for i in range(reader.imageCount()):
        assert reader.jumpToImage(i)
        image = reader.read()
        assert not image.isNull() and image.width() == image.height()
        sizes.append(image.width())
    return sizes


def test_the_icon_is_drawn_from_the_svg_at_every_size(qapp) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QColor

    from ui.app_icon import ICON_SIZES, app_icon, render_icon

    icon = app_icon()
    assert not icon.isNull()
    assert set(ICON_SIZES) <= {s.width() for s in icon.availableSizes()}
    image = render_icon(64)
    assert QColor.fromRgba(image.pixel(0, 0)).alpha() == 0  # transparent corner: a rounded tile
    assert QColor.fromRgba(image.pixel(32, 4)).alpha() == 255  # the tile itself
    assert QColor.fromRgba(image.pixel(20, 50)).lightness() > 200  # the white page below the text


def test_installer_icons_are_committed_and_read_back_by_qt(qapp) -> None:  # type: ignore[no-untyped-def]
    make_icons = _make_icons()
    ico = REPO / "packaging" / "windows" / "folio.ico"
    icns = REPO / "packaging" / "macos" / "folio.icns"
    assert _sizes(ico) == list(make_icons.ICO_SIZES)
    assert _sizes(icns) == [size for _, size in make_icons.ICNS_TYPES]
    spec = (REPO / "packaging" / "folio.spec").read_text()
    assert '"packaging" / "windows" / "folio.ico"' in spec and '"packaging" / "macos" / "folio.icns"' in spec


def test_the_containers_round_trip(qapp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    make_icons = _make_icons()
    images = {size: make_icons.png_bytes(size) for size in (16, 32, 256)}
    ico = tmp_path / "x.ico"
    ico.write_bytes(make_icons.ico(images))
    assert _sizes(ico) == [16, 32, 256]
    assert ico.read_bytes()[6 + 2 * 16] == 0  # the 256-pixel entry records its width as 0, per the format
