"""The export entry point: format dispatch and its errors."""

from pathlib import Path

import pytest

from compendium.errors import InputError
from compendium.export import FORMATS, ExportResult, export
from compendium.storage.records import Page


async def test_unknown_format_names_the_valid_ones(store, tmp_path: Path):
    with pytest.raises(InputError) as caught:
        await export(store, "pdf", tmp_path / "out")
    message = str(caught.value)
    assert "pdf" in message
    assert all(fmt in message for fmt in FORMATS)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("fmt", FORMATS)
async def test_every_format_counts_active_pages_only(store, tmp_path: Path, fmt: str):
    result = await export(store, fmt, tmp_path / f"out-{fmt}")
    assert isinstance(result, ExportResult)
    assert result.format == fmt
    assert result.pages == 5  # six pages stored, one of them deleted
    assert result.path.exists()
    assert result.files >= 1


async def test_slug_that_escapes_the_folder_is_refused(store, tmp_path: Path):
    await store.upsert([Page(id="evil", slug="../evil", title="Evil", markdown="x")])
    with pytest.raises(InputError, match=r"\.\./evil"):
        await export(store, "vault", tmp_path / "vault")
    assert not (tmp_path / "evil.md").exists()


async def test_an_empty_knowledge_base_exports_cleanly(store, tmp_path: Path):
    empty = store.for_kb("empty")
    for fmt in FORMATS:
        result = await export(empty, fmt, tmp_path / f"empty-{fmt}")
        assert result.pages == 0


def test_public_surface_is_exactly_what_all_names():
    import compendium.export as package

    assert sorted(package.__all__) == ["ExportResult", "FORMATS", "export"]
    assert all(hasattr(package, name) for name in package.__all__)


async def test_the_site_title_comes_from_the_workspace_settings(tmp_path: Path):
    from bs4 import BeautifulSoup

    from compendium.operations import export_workspace
    from compendium.settings import load_settings
    from compendium.workspace import init_workspace

    root = init_workspace(tmp_path / "lumen-docs")
    settings = load_settings(root, env={})
    assert settings.site_title == "Lumen docs"  # not the knowledge base's name "default"
    config = root / "compendium.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "title: Lumen DB handbook\n", encoding="utf-8")
    result = await export_workspace(load_settings(root, env={}), "site", tmp_path / "site")
    index = BeautifulSoup((result.path / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert index.h1.get_text() == "Lumen DB handbook"
    assert index.title.get_text() == "Lumen DB handbook"


def test_the_manual_title_is_its_front_pages_without_a_repeated_node_name():
    from compendium.export import manual_title
    from compendium.export.snapshot import WikiSnapshot
    from compendium.storage.records import Document

    def wiki(*titles: tuple[str, str]) -> WikiSnapshot:
        return WikiSnapshot(pages=[], entities=[], relations=[], topics=[],
                            documents=[Document(id=path, path=path, title=title) for path, title in titles])

    # texinfo's Top node repeats the manual's name: "GNU gettext utilities: GNU gettext utilities"
    assert manual_title(wiki(("index.html", "Depot utilities: Depot utilities"), ("a.html", "Depot: Crates"))) \
        == "Depot utilities"
    assert manual_title(wiki(("index.html", "Depot Handbook: Introduction"))) == "Depot Handbook"
    assert manual_title(wiki(("index.html", "Depot: crates and shipping"))) == "Depot: crates and shipping"
