"""Build aider's repo map of a tree once, for bench_map.py's comparison.

Runs under the interpreter of the separate aider venv (see bench_map.py), never
under brain's: aider pins its own tree-sitter and numpy versions.

    python aider_map_driver.py ROOT --tokens-module PATH --out RESULT.json [--map-tokens 8192] [--files-from LIST]
        [--coverage]

Uses aider's public RepoMap class the way aider's chat does with no files added:
`get_repo_map(chat_files=[], other_files=<the files>)`, one process per map,
so a run with aider's tag cache (ROOT/.aider.tags.cache.v*) already present is
aider's warm start. The files are those listed in --files-from (paths relative to
ROOT, one a line), or every .py file under ROOT.

The main model is replaced by an object whose only method,
`token_count`, is brain's offline estimator (loaded from the file given by
--tokens-module, so nothing of brain is imported): aider's own Model would count
with litellm/tiktoken and look up model metadata over the network, and counting
both sides with one estimator keeps the map budget and brain's card sizes in the
same unit. Writes a JSON result: seconds in process, files, the map's size, the
versions, where the grammar was loaded from, and whether litellm or tiktoken
were imported (they must not be).

With --coverage no map is timed: the result says, per file extension, which
language aider gives those files, whether it has a tag query for that language in
its installed wheels, and how many of them yielded a definition (bench_map_langs.py
runs it once after the timed runs, on the warm tag cache, to name what aider cannot
parse offline).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

__all__ = ["EstimatorModel", "main"]


class EstimatorModel:
    """The part of aider's Model that RepoMap uses: a token counter, here an offline one."""

    name = "offline-estimator"

    def __init__(self, estimate):
        self._estimate = estimate

    def token_count(self, text) -> int:
        if not isinstance(text, str):
            text = json.dumps(text)
        return self._estimate(text)


def _load_estimator(path: str):
    spec = importlib.util.spec_from_file_location("bench_brain_tokens", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.estimate_tokens


def _refuse_downloading_grammars() -> None:
    """Stop before parsing if the grammars would not come from installed wheels."""
    try:
        pack = importlib.metadata.version("tree-sitter-language-pack")
    except importlib.metadata.PackageNotFoundError:
        return  # grep_ast falls back to tree_sitter_languages, whose wheels ship the grammars
    if int(pack.split(".")[0]) >= 1:
        raise SystemExit(f"tree-sitter-language-pack {pack} downloads its grammars at run time; "
                         "install aider-chat 0.86.2, which pins 0.13.0")


def _python_files(root: Path) -> list[str]:
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files.extend(os.path.join(dirpath, name) for name in sorted(filenames) if name.endswith(".py"))
    return files


def _files(root: Path, args) -> list[str]:
    if args.files_from:
        return [str(root / line) for line in Path(args.files_from).read_text().splitlines() if line.strip()]
    return _python_files(root)


def _coverage(root: Path, args) -> int:
    """Per file extension: files given, aider's language for it, whether aider has a tag query for that
    language, and how many of the files yielded at least one definition (what the map can name)."""
    from aider.io import InputOutput
    from aider.repomap import RepoMap, get_scm_fname
    from grep_ast import filename_to_lang

    estimate = _load_estimator(args.tokens_module)
    io = InputOutput(pretty=False, fancy_input=False, yes=True, root=str(root))
    repo_map = RepoMap(map_tokens=args.map_tokens, root=str(root), main_model=EstimatorModel(estimate), io=io)
    by_ext: dict[str, dict] = {}
    for fname in _files(root, args):
        name = os.path.basename(fname)
        ext = name[name.rfind("."):].lower() if name.rfind(".") > 0 else name
        lang = filename_to_lang(fname)
        query = bool(lang) and get_scm_fname(lang) is not None and get_scm_fname(lang).exists()
        row = by_ext.setdefault(ext, {"files": 0, "aider_language": lang, "tag_query": query,
                                      "files_with_definitions": 0})
        row["files"] += 1
        if query:
            tags = repo_map.get_tags(fname, repo_map.get_rel_fname(fname)) or []
            row["files_with_definitions"] += any(tag.kind == "def" for tag in tags)
    result = {"coverage": dict(sorted(by_ext.items(), key=lambda kv: -kv[1]["files"])),
              "litellm_imported": "litellm" in sys.modules, "tiktoken_imported": "tiktoken" in sys.modules}
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root")
    parser.add_argument("--tokens-module", required=True, help="brain's src/brain/tokens.py")
    parser.add_argument("--out", required=True, help="where to write the JSON result")
    parser.add_argument("--map-tokens", type=int, default=8192)
    parser.add_argument("--files-from", help="a file listing the paths to map, relative to ROOT, one a line")
    parser.add_argument("--map-out", help="also write the map text here")
    parser.add_argument("--coverage", action="store_true",
                        help="instead of timing a map, write per file extension how many files aider parses and "
                             "finds definitions in (an untimed run after the timed ones, from the warm tag cache)")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    estimate = _load_estimator(args.tokens_module)
    _refuse_downloading_grammars()

    if args.coverage:
        return _coverage(root, args)

    started = time.perf_counter()
    from aider.io import InputOutput
    from aider.repomap import RepoMap

    imported = time.perf_counter()
    io = InputOutput(pretty=False, fancy_input=False, yes=True, root=str(root))
    repo_map = RepoMap(map_tokens=args.map_tokens, root=str(root), main_model=EstimatorModel(estimate), io=io)
    files = _files(root, args)
    text = repo_map.get_repo_map(chat_files=[], other_files=files) or ""
    seconds = time.perf_counter() - started

    from grep_ast.tsl import USING_TSL_PACK, get_parser  # noqa: F401 - the module aider parses with

    pack = "tree_sitter_language_pack" if USING_TSL_PACK else "tree_sitter_languages"
    grammar_module = sys.modules[pack]
    if args.map_out:
        Path(args.map_out).write_text(text)
    result = {
        "seconds_in_process": round(seconds, 3),
        "import_seconds": round(imported - started, 3),
        "files": len(files),
        "map_budget_tokens": args.map_tokens,
        "map_tokens": estimate(text),
        "map_files": sum(1 for line in text.splitlines() if line and not line[0].isspace() and line.endswith(":")),
        "map_chars": len(text),
        "token_counter": "brain.tokens.estimate_tokens (offline), not aider's litellm/tiktoken",
        "aider_chat": importlib.metadata.version("aider-chat"),
        "grep_ast": importlib.metadata.version("grep-ast"),
        "tree_sitter": importlib.metadata.version("tree-sitter"),
        "grammar_package": f"{pack.replace('_', '-')} {importlib.metadata.version(pack.replace('_', '-'))}",
        "grammar_in_this_env": Path(grammar_module.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()),
        "grammar_dir": os.path.relpath(Path(grammar_module.__file__).resolve().parent, Path(sys.prefix).resolve()),
        "litellm_imported": "litellm" in sys.modules,
        "tiktoken_imported": "tiktoken" in sys.modules,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
