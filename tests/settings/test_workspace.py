"""The workspace on disk: init, find, add and remove documents, never escaping documents/."""

from __future__ import annotations

import os

import pytest

from compendium.errors import InputError, WorkspaceError
from compendium.settings import load_settings
from compendium.workspace import (
    CONFIG_FILE,
    DOCUMENTS_DIR,
    STATE_DIR,
    add_documents,
    document_path,
    find_workspace,
    init_workspace,
    remove_document_file,
)


@pytest.fixture
def workspace(tmp_path):
    return init_workspace(tmp_path / "ws")


def tree(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_init_creates_layout_and_offline_config(tmp_path):
    root = init_workspace(tmp_path / "new")
    for folder in (DOCUMENTS_DIR, "templates", STATE_DIR):
        assert (root / folder).is_dir()
    text = (root / CONFIG_FILE).read_text(encoding="utf-8")
    assert text.startswith("#") and "api_key_env" in text
    assert load_settings(root, env={}).offline


def test_init_is_idempotent_and_never_clobbers(workspace):
    (workspace / CONFIG_FILE).write_text("knowledge_base: mine\n", encoding="utf-8")
    (workspace / "templates").rmdir()
    assert init_workspace(workspace) == workspace
    assert (workspace / CONFIG_FILE).read_text(encoding="utf-8") == "knowledge_base: mine\n"
    assert (workspace / "templates").is_dir()  # a missing folder is restored


def test_init_on_a_file_is_an_error(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(WorkspaceError, match="not a folder"):
        init_workspace(tmp_path / "f")


def test_find_walks_up_from_a_subfolder(workspace):
    deep = workspace / DOCUMENTS_DIR / "a" / "b"
    deep.mkdir(parents=True)
    assert find_workspace(deep) == workspace


def test_find_without_workspace_explains_what_to_do(tmp_path):
    with pytest.raises(WorkspaceError) as info:
        find_workspace(tmp_path)
    assert info.value.message.startswith(f"no Compendium workspace in {tmp_path}")
    assert "compendium init DIR" in info.value.hint and "--workspace" in info.value.hint


def test_find_names_a_folder_that_does_not_exist(tmp_path):
    with pytest.raises(WorkspaceError) as info:
        find_workspace(tmp_path / "missing")
    assert str(tmp_path / "missing") in info.value.message and "no such folder" in info.value.message


def make_source(tmp_path):
    src = tmp_path / "handbook"
    (src / "guides" / ".hidden").mkdir(parents=True)
    (src / ".git").mkdir()
    (src / "intro.md").write_text("# Intro\n")
    (src / "guides" / "setup.txt").write_text("Setup.\n")
    (src / "guides" / "spec.PDF").write_bytes(b"%PDF-1.4\n")
    (src / "guides" / "image.png").write_bytes(b"\x89PNG")
    (src / "guides" / ".draft.md").write_text("hidden\n")
    (src / "guides" / ".hidden" / "x.md").write_text("hidden\n")
    (src / ".git" / "config.md").write_text("hidden\n")
    return src


def test_add_folder_keeps_structure_under_its_name(workspace, tmp_path):
    src = make_source(tmp_path)
    copied = add_documents(workspace, [src])
    docs = workspace / DOCUMENTS_DIR
    assert [p.relative_to(docs).as_posix() for p in copied] == [
        "handbook/intro.md",
        "handbook/guides/setup.txt",
        "handbook/guides/spec.PDF",
    ]
    assert tree(docs) == sorted(p.relative_to(docs).as_posix() for p in copied)
    assert (docs / "handbook" / "intro.md").read_text() == "# Intro\n"


def test_add_file_and_re_add_overwrites(workspace, tmp_path):
    f = tmp_path / "notes.md"
    f.write_text("v1")
    assert add_documents(workspace, [f]) == [workspace / DOCUMENTS_DIR / "notes.md"]
    f.write_text("v2")
    add_documents(workspace, [f])
    assert (workspace / DOCUMENTS_DIR / "notes.md").read_text() == "v2"
    assert tree(workspace / DOCUMENTS_DIR) == ["notes.md"]  # no temp files left behind


def test_add_refuses_missing_and_unsupported_files(workspace, tmp_path):
    with pytest.raises(InputError, match="no such file"):
        add_documents(workspace, [tmp_path / "absent.md"])
    exe = tmp_path / "tool.exe"
    exe.write_bytes(b"MZ")
    with pytest.raises(InputError, match=r"unsupported file type '\.exe'") as info:
        add_documents(workspace, [exe])
    assert ".md" in str(info.value)


def test_add_the_workspace_itself_does_not_copy_documents_into_themselves(workspace):
    (workspace / DOCUMENTS_DIR / "a.md").write_text("a")
    (workspace / "readme.md").write_text("r")
    copied = add_documents(workspace, [workspace])
    assert [p.relative_to(workspace / DOCUMENTS_DIR).as_posix() for p in copied] == ["ws/readme.md"]
    assert add_documents(workspace, [workspace / DOCUMENTS_DIR / "a.md"]) == []


def test_symlinks_inside_an_added_folder_are_not_followed(workspace, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "passwords.txt").write_text("hunter2")
    src = tmp_path / "kb"
    src.mkdir()
    (src / "ok.md").write_text("ok")
    os.symlink(secret / "passwords.txt", src / "link.txt")
    os.symlink(secret, src / "linked-dir")
    copied = add_documents(workspace, [src])
    assert [p.name for p in copied] == ["ok.md"]
    assert "hunter2" not in "".join(p.read_text() for p in (workspace / DOCUMENTS_DIR).rglob("*.*"))


def test_add_never_writes_through_a_symlink_in_documents(workspace, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, workspace / DOCUMENTS_DIR / "kb")
    src = tmp_path / "kb"
    src.mkdir()
    (src / "a.md").write_text("a")
    with pytest.raises(InputError, match="outside documents/"):
        add_documents(workspace, [src])
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    "name",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "a/../../x.md",
        "..",
        "",
        "C:/x.md",
        "a//../b",
        "a/\\..\\..\\x",
    ],
)
def test_document_paths_cannot_escape(workspace, name):
    with pytest.raises(InputError):
        document_path(workspace, name)


def test_document_path_inside(workspace):
    assert (
        document_path(workspace, "a/b.md") == (workspace / DOCUMENTS_DIR / "a" / "b.md").resolve()
    )


def test_remove_document_and_empty_folders(workspace, tmp_path):
    add_documents(workspace, [make_source(tmp_path)])
    docs = workspace / DOCUMENTS_DIR
    removed = remove_document_file(workspace, "handbook/guides/setup.txt")
    assert removed == (docs / "handbook" / "guides" / "setup.txt").resolve()
    remove_document_file(workspace, docs / "handbook" / "guides" / "spec.PDF")
    assert not (docs / "handbook" / "guides").exists()  # left empty, so removed
    remove_document_file(workspace, "documents/handbook/intro.md")
    assert docs.is_dir() and tree(docs) == []


def test_remove_refuses_escapes_and_missing(workspace, tmp_path):
    victim = tmp_path / "victim.md"
    victim.write_text("keep me")
    for name in ("../../victim.md", str(victim), "../victim.md"):
        with pytest.raises(InputError):
            remove_document_file(workspace, name)
    assert victim.read_text() == "keep me"
    with pytest.raises(InputError, match=r"no document 'nothing\.md'"):
        remove_document_file(workspace, "nothing.md")
