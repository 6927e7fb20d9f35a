"""Type-per-file languages: C#, PHP and Ruby files record their own definitions and no import links, and the
types evidence (evidence.types) finds a best file's kin, family and users."""

from __future__ import annotations

from brain.search.evidence import types
from brain.search.evidence.neighbours import names_type
from brain.search.ranking import Evidence, Links, combine, gather
from brain.search.weights import shipped_weights
from card_helpers import commit_files

NOW = "# Now\n\nFix the bugs.\n"

CS = {
    "src/Core/IStrategy.cs": "namespace Core\n{\n    public interface IStrategy\n    {\n        void Execute(Context context);\n    }\n}\n",
    "src/Core/RetryStrategy.cs": ("namespace Core\n{\n    public sealed class RetryStrategy : IStrategy\n    {\n"
                                  "        public void Execute(Context context) { }\n    }\n}\n"),
    "src/Core/RetryStrategyOptions.cs": "namespace Core\n{\n    public class RetryStrategyOptions\n    {\n        public int Count { get; set; }\n    }\n}\n",
    "src/Core/Context.cs": "namespace Core\n{\n    public class Context\n    {\n        public string Key { get; set; }\n    }\n}\n",
}
PHP = {
    "src/Http/Client.php": ("<?php\nnamespace App\\Http;\n\nuse App\\Util\\Clock;\n\nclass Client extends BaseClient implements ClientInterface\n{\n"
                            "    public function send($request)\n    {\n        return Clock::now();\n    }\n}\n"),
    "src/Http/BaseClient.php": "<?php\nnamespace App\\Http;\n\nabstract class BaseClient\n{\n}\n",
    "src/Http/ClientInterface.php": "<?php\nnamespace App\\Http;\n\ninterface ClientInterface\n{\n    public function send($request);\n}\n",
    "src/Util/Clock.php": "<?php\nnamespace App\\Util;\n\nclass Clock\n{\n    public static function now()\n    {\n    }\n}\n",
}
RUBY = {
    "lib/shop/block.rb": 'require "shop/node"\n\nmodule Shop\n  class Block < Node\n    def parse_body(tokens)\n    end\n  end\nend\n',
    "lib/shop/node.rb": "module Shop\n  class Node\n    def render(context)\n    end\n  end\nend\n",
    "lib/shop/tags/if.rb": 'require_relative "../block"\n\nmodule Shop\n  class If < Block\n  end\nend\n',
}


JAVA = {
    "src/main/java/com/acme/Visitor.java": "package com.acme;\n\npublic interface Visitor {\n    void visit(Node node);\n}\n",
    "src/main/java/com/acme/Printer.java": ("package com.acme;\n\npublic class Printer implements Visitor {\n"
                                             "    public void visit(Node node) {}\n}\n"),
    "src/main/java/com/acme/Counter.java": ("package com.acme;\n\npublic class Counter implements Visitor {\n"
                                             "    public void visit(Node node) {}\n}\n"),
}


def test_csharp_php_and_ruby_files_define_their_members_and_link_to_nothing(brain):
    commit_files(brain, {**CS, **PHP, **RUBY}, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    defs = view.definitions(["Execute", "Count", "send", "parse_body"])
    assert ("src/Core/RetryStrategy.cs", "method", "RetryStrategy.Execute") in defs["Execute"]
    assert ("src/Core/RetryStrategyOptions.cs", "attr", "RetryStrategyOptions.Count") in defs["Count"]
    assert ("src/Http/Client.php", "method", "Client.send") in defs["send"]
    assert ("lib/shop/block.rb", "method", "Block.parse_body") in defs["parse_body"]
    forward, backward = view.import_graph()  # their `using`, `use` and `require` lines cost ranking: not read
    assert not any(path.endswith((".cs", ".php", ".rb")) for path in (*forward, *backward))


def test_kin_family_and_users_of_a_type(brain):
    commit_files(brain, {**CS, **PHP, **RUBY, **JAVA}, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    forward, backward = view.import_graph()
    visitor, printer, counter = (f"src/main/java/com/acme/{n}.java" for n in ("Visitor", "Printer", "Counter"))
    assert types.kin(view, visitor, forward, backward, names_type, 8) == [counter, printer]  # its implementations
    assert types.kin(view, printer, forward, backward, names_type, 8) == [visitor]  # the interface it implements
    assert types.kin(view, visitor, forward, backward, names_type, 1) == []  # more than `most`
    assert types.family(view, "src/Core/RetryStrategy.cs", 8) == ["src/Core/RetryStrategyOptions.cs"]
    assert types.family(view, "src/Core/RetryStrategyOptions.cs", 8) == ["src/Core/RetryStrategy.cs"]
    assert types.family(view, "src/Core/RetryStrategy.cs", 0) == []  # more than `most`: a common prefix
    assert types.family(view, "src/Core/Context.cs", 8) == []  # no type name goes on from `Context` at a boundary
    assert types.users(view, "src/Core/Context.cs", 8) == ["src/Core/IStrategy.cs", "src/Core/RetryStrategy.cs"]
    assert types.users(view, "src/Core/Context.cs", 1) is None  # written in more files than `most`
    assert types.users(view, "lib/shop/node.rb", 8) == ["lib/shop/block.rb"]  # `Node`, written as Ruby writes it


def test_the_type_shares_follow_the_weights_and_a_boot_reads_no_link_at_zero(brain):
    commit_files(brain, {**JAVA}, now=NOW)
    brain.reindex()
    view = brain.index.code_view()
    zero = shipped_weights().replace({"kin": 0.0, "family": 0.0, "users": 0.0})
    best = gather(view, "Visitor visit is called twice", links="best", weights=zero)
    assert all(not (f.links and (f.links.kin or f.links.family or f.links.users)) for f in best.files.values())
    every = gather(view, "Visitor visit is called twice", links="all")  # a fitter reads every kind
    assert every.files["src/main/java/com/acme/Visitor.java"].links.kin == [
        "src/main/java/com/acme/Counter.java", "src/main/java/com/acme/Printer.java"]
    evidence = Evidence()
    for path, value in (("a/Best.java", 1.0), ("a/BestHelper.java", 0.05), ("b/Other.java", 0.1)):
        evidence.add(path, "bm25", value, "full-text match")
    evidence.file("a/Best.java").links = Links(family=["a/BestHelper.java"])
    for path in ("a/BestHelper.java", "b/Other.java"):
        evidence.file(path).links = Links()
    on = shipped_weights().replace({"family": 0.3})
    assert [h.path for h in combine(evidence, on).files][:2] == ["a/Best.java", "a/BestHelper.java"]
    off = on.replace({"family": 0.0})
    assert [h.path for h in combine(evidence, off).files][:2] == ["a/Best.java", "b/Other.java"]


def test_type_words_lift_the_types_whose_name_the_title_writes_in_prose():
    from brain.search.evidence.typewords import type_words

    candidates = ["src/Polly.RateLimiting/RateLimiterResilienceStrategy.cs", "src/Polly.RateLimiting/RateLimiterConstants.cs",
                  "src/Polly.Core/Retry/RetryHelper.cs", "lib/rack/body_proxy.rb", "src/main/python/rate.py"]
    found = type_words(["add", "support", "partitioned", "rate", "limiter", "proxy"], candidates)
    assert set(found) == {candidates[0], candidates[1], "lib/rack/body_proxy.rb"}  # never a folder, never Python
    assert found[candidates[1]][0] > found[candidates[0]][0]  # more of its name is the title's words
    assert found[candidates[0]][1] == ["limit", "rate"]
    assert type_words(["fix"], candidates) == {}
    evidence = Evidence()
    for path, value in (("a/Parser.java", 1.0), ("a/RateLimiter.java", 0.95)):
        evidence.add(path, "bm25", value, "full-text match")
    evidence.add("a/RateLimiter.java", "type_words", 1.0, "its type's name is the title's words (limit, rate)")
    assert [h.path for h in combine(evidence, shipped_weights()).files][:2] == ["a/RateLimiter.java", "a/Parser.java"]
    off = shipped_weights().replace({"type_words": 0.0})
    assert [h.path for h in combine(evidence, off).files][:2] == ["a/Parser.java", "a/RateLimiter.java"]
