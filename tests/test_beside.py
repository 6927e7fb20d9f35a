"""Files beside the top ones that the ranking leaves out (``brain.search.beside``): named by the boot's files slot
after the ranked list, each with why; real git repositories, real boots."""

from __future__ import annotations

import brain as brainlib
from brain.search.beside import beside_files, render_beside
from test_history import commit

SERVER = "package rest\n\nfunc StartServer(timeout int) error {\n\tif timeout > 0 {\n\t\treturn nil\n\t}\n\treturn nil\n}\n"
TYPES = "package rest\n\ntype RouteOption struct {\n\tName string\n}\n"
OTHER = "package other\n\nfunc Unrelated() int {\n\treturn 1\n}\n"


def _shop(repo):
    brainlib.init(repo)
    commit(repo, "first", {"rest/server.go": SERVER, "rest/types.go": TYPES, "other/other.go": OTHER,
                           "big/a.go": OTHER.replace("Unrelated", "A")})
    commit(repo, "route options", {"rest/server.go": SERVER + "\n// one\n", "other/other.go": OTHER + "\n// one\n"})
    commit(repo, "route options again", {"rest/server.go": SERVER + "\n// two\n", "other/other.go": OTHER + "\n// two\n"})
    b = brainlib.open(repo)
    b.reindex()
    return b


def test_the_files_beside_the_top_file_are_named_after_the_ranked_ones(repo):
    b = _shop(repo)
    text = "StartServer ignores the timeout\nStartServer with a timeout of 0 never returns"
    assert b.locate(text).paths[0] == "rest/server.go"
    view = b.index.code_view()
    # what changed with it in at least two past commits, then its small folder's other files; the listed ones are left out
    beside = beside_files(view, ["rest/server.go"])
    assert beside == [("other/other.go", "3 of its 3 commits", "rest/server.go"), ("rest/types.go", "folder", "rest/server.go")]
    assert beside_files(view, ["rest/server.go", "other/other.go"]) == beside[1:]
    assert beside_files(view, ["rest/server.go"], most=1) == beside[:1]
    assert beside_files(view, ["rest/server.go"], most=0) == []
    assert render_beside(beside) == ("changes together with `rest/server.go`: `other/other.go` (3 of its 3 commits); "
                                     "in the folder of `rest/server.go`: `rest/types.go`")
    # the boot: a files slot listing one ranked file names the others beside it, after it
    (b.dir / "brain.yml").write_text("version: 1\nsearch:\n  boot_files: 1\n")
    result = brainlib.open(repo).boot(text, budget=8000, record=False)
    assert ("Beside the top files (not ranked above; a fix often spans them): changes together with `rest/server.go`: "
            "`other/other.go` (3 of its 3 commits); in the folder of `rest/server.go`: `rest/types.go`") in result.text
    assert result.files[:3] == ["rest/server.go", "other/other.go", "rest/types.go"]


def test_no_files_beside_when_the_setting_is_zero(repo):
    b = _shop(repo)
    (b.dir / "brain.yml").write_text("version: 1\nsearch:\n  boot_files: 1\n  boot_beside: 0\n")
    b = brainlib.open(repo)
    result = b.boot("StartServer ignores the timeout", budget=8000, record=False)
    assert "rest/server.go" in result.files
    assert "Beside the top files" not in result.text and "rest/types.go" not in result.files


def test_a_folder_is_read_from_its_own_rows_and_answers_as_every_row_would(repo):
    from brain.search.evidence.folder import folder_mates

    b = _shop(repo)
    for extra in ("rest/v2/deep.go", "rest/server_test.go", "rest0/near.go", "rest-x/near.go", "rest/docs/guide.go"):
        (repo / extra).parent.mkdir(parents=True, exist_ok=True)
        (repo / extra).write_text("package x\n")
    b.reindex()
    lazy = b.index.code_view()
    seeds = ["rest/server.go", "rest/types.go", "other/other.go", "big/a.go", "rest/v2/deep.go"]
    answers = [folder_mates(lazy, seed, 6) for seed in seeds]
    # the boot's question reads those folders' rows only: its view never reads every row of the tree
    assert not lazy.files.loaded
    full = b.index.code_view()
    full.files.every()
    assert answers == [folder_mates(full, seed, 6) for seed in seeds]
    # only the files directly in the folder, never its subfolders' nor a folder whose name merely starts alike
    assert answers[0] == ["rest/types.go"]
    assert answers[4] == []
