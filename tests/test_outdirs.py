"""`build` and `env` folders: skipped when they are output or a virtual environment, indexed when they are source.

Real trees in temp dirs and a real git repository: the walk (``code.scan_files``), the refresh answered from
git's stat data (``gitstamp``) and a brain's index must agree on each folder.
"""

from __future__ import annotations

from pathlib import Path

import brain as brainlib
from brain.search.code import scan_files
from brain.search.gitstamp import _stamp
from brain.search.outdirs import FolderFilter
from conftest import git


def write(root: Path, rel: str, text: str = "x = 1\n") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_source_folders_named_build_or_env_are_walked(tmp_path):
    write(tmp_path, "src/build/arg.rs", "pub fn arg() {}\n")
    write(tmp_path, "env/src/lib.rs", "pub fn from_env() {}\n")
    write(tmp_path, "pkg/integrations/env/jsdom.ts", "export const jsdom = 1\n")
    found = scan_files(tmp_path)
    assert {"src/build/arg.rs", "env/src/lib.rs", "pkg/integrations/env/jsdom.ts"} <= set(found)


def test_output_and_virtualenv_folders_are_skipped_by_their_content(tmp_path):
    write(tmp_path, "app/main.py")
    write(tmp_path, "build/CMakeCache.txt", "CMAKE_BUILD_TYPE:STRING=Release\n")
    write(tmp_path, "build/gen/config.h", "#define X 1\n")
    write(tmp_path, "env/pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path, "env/lib/python3.12/site.py")
    write(tmp_path, "sub/env/bin/activate", "# activate\n")
    write(tmp_path, "sub/env/lib/thing.py")
    write(tmp_path, "py/build/lib.linux-x86_64-3.12/pkg/mod.py")
    write(tmp_path, "c/build/main.o", "")
    write(tmp_path, "c/build/main.c", "int main(void) { return 0; }\n")
    write(tmp_path, "venv/lib/x.py")
    assert set(scan_files(tmp_path)) == {"app/main.py"}


def test_a_folder_the_ignore_file_names_is_skipped(tmp_path):
    write(tmp_path, ".gitignore", "# output\n/build/\n**/env\n!keep.txt\n")
    write(tmp_path, "build/out.js", "module.exports = 1\n")
    write(tmp_path, "deep/env/x.py")
    write(tmp_path, "deep/build/y.py")  # `/build/` is anchored at the root: this one is source
    write(tmp_path, "lib/a.py")
    assert set(scan_files(tmp_path)) == {"deep/build/y.py", "lib/a.py"}
    write(tmp_path, "pkg/.gitignore", "build\n")
    write(tmp_path, "pkg/build/z.py")
    write(tmp_path, "other/build/w.py")
    keep = FolderFilter(str(tmp_path)).keep
    assert not keep(str(tmp_path / "pkg"), "build")
    assert keep(str(tmp_path / "other"), "build")


def test_the_git_stamp_and_the_index_agree_with_the_walk(repo: Path):
    write(repo, "src/build/arg.py", "def parse_argument_spec():\n    return 1\n")
    write(repo, "build/CMakeCache.txt", "X=1\n")
    write(repo, "build/tool.py", "def generated_output_tool():\n    return 2\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")
    assert _stamp(repo, "src/build/arg.py") is not None
    assert _stamp(repo, "build/tool.py") is None
    b = brainlib.init(repo)
    b.reindex()
    paths = {p for (p,) in b.index.db.execute("SELECT path FROM code_files")}
    assert "src/build/arg.py" in paths and "build/tool.py" not in paths
