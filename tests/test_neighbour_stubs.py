"""A header and its inline definitions, a Python module and its stub: each reachable as the other's neighbour
(evidence.neighbours: ``inline_twins``, the `.pyi` declaration twin, ``package_stubs``), read from a real index."""

from __future__ import annotations

from brain.search.evidence.neighbours import inline_twins, package_stubs
from brain.search.ranking import combine, gather
from brain.search.weights import shipped_weights
from card_helpers import commit_files

NOW = "# Now\n\nFix the bugs.\n"

CPP = {
    "include/cli/App.hpp": "#pragma once\nnamespace cli {\nclass App {\n  public:\n  void parse_flags(int argc);\n};\n}\n#include \"impl/App_inl.hpp\"\n",
    "include/cli/impl/App_inl.hpp": "#pragma once\nnamespace cli {\ninline void App::parse_flags(int argc) { (void)argc; }\n}\n",
    "include/cli/array.h": "#pragma once\nclass array {\n  public:\n  int size() const;\n};\n#include \"array.inl\"\n",
    "include/cli/array.inl": "inline int array::size() const { return 0; }\n",
    "include/cli/logger.h": "#pragma once\nclass logger { public: void flush_sink(); };\n",
    "include/cli/logger-inl.h": "#pragma once\ninline void logger::flush_sink() {}\n",
    "src/other.cpp": "int other() { return 1; }\n",
}
PY = {
    "src/kit/__init__.py": "from .converters import optional_value\n",
    "src/kit/__init__.pyi": "def optional_value(converter): ...\ndef define_record(cls): ...\n",
    "src/kit/converters.py": "def optional_value(converter):\n    return converter\n",
    "src/kit/converters.pyi": "def optional_value(converter): ...\n",
    "src/kit/_make.py": "def define_record(cls):\n    return cls\n\ndef _private_helper():\n    return 1\n",
    "src/kit/_funcs.py": "def _only_private():\n    return 1\n",
}


def test_a_header_and_its_inline_definitions_are_twins(brain):
    commit_files(brain, CPP, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    assert inline_twins(view, "include/cli/App.hpp") == ["include/cli/impl/App_inl.hpp"]
    assert inline_twins(view, "include/cli/impl/App_inl.hpp") == ["include/cli/App.hpp"]
    assert inline_twins(view, "include/cli/array.h") == ["include/cli/array.inl"]
    assert inline_twins(view, "include/cli/array.inl") == ["include/cli/array.h"]
    assert inline_twins(view, "include/cli/logger.h") == ["include/cli/logger-inl.h"]
    assert inline_twins(view, "src/other.cpp") == []


def test_a_python_module_lends_to_its_stub_and_its_package_stub(brain):
    commit_files(brain, PY, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    assert package_stubs(view, "src/kit/_make.py") == ["src/kit/__init__.pyi"]
    assert package_stubs(view, "src/kit/_funcs.py") == []  # declares nothing public the stub re-declares
    assert package_stubs(view, "src/kit/converters.pyi") == []
    weights = shipped_weights()
    evidence = gather(view, "optional_value converter drops None", weights=weights, links="all")
    links = evidence.files["src/kit/converters.py"].links
    assert links.declarations == ["src/kit/converters.pyi"]
    ranked = combine(evidence, weights).paths
    assert ranked[0] == "src/kit/converters.py"
    assert "src/kit/converters.pyi" in ranked[1:3]  # lent the twin share
