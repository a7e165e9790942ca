"""The library list at scale, in the real window offscreen on a real library of a few hundred small
documents: the list is a model that fetches a page at a time (it holds fewer rows than the matter until
scrolled), selection by id fetches what it needs, multi-select and matter scoping still work, and the
search box answers on its own thread."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.store.library import LISTING_PAGE
from tests.gui import library_rows as rows

pytestmark = pytest.mark.gui

UNFILED_DOCS = 260  # more than two pages


def _add_texts(ctx, folder: Path, count: int, stem: str) -> list[int]:  # type: ignore[no-untyped-def]
    folder.mkdir(parents=True, exist_ok=True)
    ids = []
    for i in range(count):
        path = folder / f"{stem}-{i:03d}.txt"
        path.write_text(f"{stem.title()} note {i}\n\nThe parties agree on clause {i} of the {stem} matter.\n")
        ids.append(ctx.library.add(path).document.id)
    return ids


@pytest.fixture
def big_window(window, tmp_path: Path):  # type: ignore[no-untyped-def]
    from app.store.matters import Matters

    ctx = window.ctx
    unfiled = _add_texts(ctx, tmp_path / "unfiled", UNFILED_DOCS, "unfiled")
    beta = Matters(ctx.db).create("Beta")
    ctx.chosen_matter = beta.id
    beta_ids = _add_texts(ctx, tmp_path / "beta", 3, "beta")
    Matters(ctx.db).link(beta.id, unfiled[-1])  # one document in both matters
    ctx.chosen_matter = None
    window.resize(1200, 800)
    window.refresh_library()
    window.big = (unfiled, [*beta_ids, unfiled[-1]], beta.id)  # type: ignore[attr-defined]
    return window


def test_the_list_fetches_a_page_at_a_time_as_it_scrolls(qtbot, big_window) -> None:  # type: ignore[no-untyped-def]
    window = big_window
    unfiled, _, _ = window.big
    model = window.library.model
    assert rows.count(window) == LISTING_PAGE < len(unfiled) and model.canFetchMore()
    assert rows.ids(window) == unfiled[:LISTING_PAGE]

    # Scrolling to the end fetches the next pages, in order, until the matter is all listed.
    def scrolled_to_end() -> bool:
        window.library.list.scrollToBottom()
        return rows.count(window) == len(unfiled)

    qtbot.waitUntil(scrolled_to_end, timeout=10000)
    assert rows.ids(window) == unfiled and not model.canFetchMore()

    # A refresh (a file added, a read finished) keeps the rows fetched and the selection.
    window.library.select(unfiled[-2])
    window.refresh_library()
    assert rows.count(window) == len(unfiled) and window.library.selected_ids() == [unfiled[-2]]


def test_selection_by_id_fetches_its_row_and_multi_select_works(qtbot, big_window) -> None:  # type: ignore[no-untyped-def]
    window = big_window
    unfiled, _, _ = window.big
    last = unfiled[-1]
    window.library.select(last)  # far past the first page: File > Recent documents, a citation
    assert window.library.selected_ids() == [last] and window.library.current_id() == last
    assert rows.count(window) >= len(unfiled) - 1 and rows.count(window) <= len(unfiled)
    qtbot.waitUntil(lambda: window.viewer.doc is not None and window.viewer.doc.id == last, timeout=10000)

    # Shift+Up from the last row selects two, as in any list.
    window.library.list.setFocus()
    QTest.keyClick(window.library.list, Qt.Key.Key_Up, Qt.KeyboardModifier.ShiftModifier)
    assert sorted(window.library.selected_ids()) == sorted([unfiled[-2], last])
    window.library.select_more(unfiled[0])
    assert sorted(window.library.selected_ids()) == sorted([unfiled[0], unfiled[-2], last])

    # The reading state of a listed document is rewritten in its row.
    window.library.show_reading({unfiled[0]: "ready — questions start at once"})
    assert rows.texts(window)[0].endswith("ready — questions start at once")


def test_switching_matters_lists_that_matter_alone(qtbot, big_window) -> None:  # type: ignore[no-untyped-def]
    window = big_window
    unfiled, beta_ids, beta = window.big
    window.use_matter(beta)
    assert sorted(rows.ids(window)) == sorted(beta_ids) and not window.library.model.canFetchMore()
    window.library.select(unfiled[0])  # not in this matter: nothing fetched, nothing selected
    assert window.library.selected_ids() == [] and rows.count(window) == len(beta_ids)

    # The search box looks in this matter only, on the search thread.
    window.library.search_box.setText("clause")
    window.library.run_search()
    assert window.library.searching
    qtbot.waitUntil(lambda: not window.library.searching, timeout=10000)
    assert {hit.document_id for hit in window.library.found} == set(beta_ids)

    unfiled_id = window.library.matters.combo.itemData(window.library.matters.labels().index("Unfiled"))
    window.use_matter(unfiled_id)
    assert rows.ids(window) == unfiled[:LISTING_PAGE]


def test_a_newer_search_replaces_an_older_one(qtbot, big_window) -> None:  # type: ignore[no-untyped-def]
    window = big_window
    panel = window.library
    panel.search_box.setText("parties")
    panel.run_search()
    panel.search_box.setText('"clause 7 "')
    panel.run_search()  # before the first came back: only the second's hits are shown
    qtbot.waitUntil(lambda: not panel.searching, timeout=10000)
    qtbot.wait(200)  # an answer to the first search, late, must not replace these
    assert [hit.title for hit in panel.found] == ["unfiled-007"]
    assert panel.search_status.text() == "1 passage found"
