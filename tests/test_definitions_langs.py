"""C#, PHP, Ruby and Kotlin definitions for the code index: classes, methods and properties with their owners."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.search.definitions import scan_definitions
from brain.search.definitions_langs import without_generics


def _defs(text: str, lang: str) -> set[tuple[str, str]]:
    return {(qual, kind) for _, kind, qual, _ in scan_definitions(text, lang).symbols}


CSHARP = """using System;
using Polly.Core.Retry;
using Alias = Polly.Utils.Thing;

namespace Polly.Core
{
    /// <summary>Doc</summary>
    public sealed partial class ResilienceContext : IDisposable, IFoo<int>
    {
        public string? OperationKey { get; internal set; }
        public int Count => _count;
        public ResilienceContext(int x) : base(x) { }
        public async Task<Outcome<TResult>> ExecuteAsync<TResult>(Func<TState, ValueTask<TResult>> callback)
        {
            var x = Foo(callback);
            await DoAsync(x);
            foreach (var y in list) { Bar(y); }
            return x;
        }
        internal void Reset() { }
    }

    public interface IResilienceStrategy
    {
        ValueTask<T> RunAsync<T>(ResilienceContext context);
    }
    public record Person(string Name);
}
"""


def test_csharp_types_methods_properties_and_bases():
    defs = _defs(CSHARP, "csharp")
    assert {("ResilienceContext", "class"), ("ResilienceContext.OperationKey", "attr"),
            ("ResilienceContext.Count", "attr"), ("ResilienceContext.ExecuteAsync", "method"),
            ("ResilienceContext.Reset", "method"), ("IResilienceStrategy", "class"),
            ("IResilienceStrategy.RunAsync", "method"), ("Person", "class")} <= defs
    # calls and locals inside a method are not definitions (the old fallback recorded `var x`)
    assert not {q for q, _ in defs} & {"x", "ResilienceContext.Foo", "ResilienceContext.DoAsync",
                                       "ResilienceContext.Bar", "ResilienceContext.foreach"}
    assert scan_definitions(CSHARP, "csharp").imports == []  # no import links in these languages (decision 0044)


def test_php_classes_methods_functions_uses_and_bases():
    text = ("<?php\nnamespace Composer\\Util;\n\nuse Composer\\IO\\IOInterface;\n"
            "use React\\Promise\\PromiseInterface as Promise;\n\n/**\n * Doc\n */\n"
            "abstract class HttpDownloader extends BaseDownloader implements \\Countable, DownloaderInterface\n{\n"
            "    use SomeTrait;\n    private $io;\n\n    public function __construct(IOInterface $io)\n    {\n"
            "        $this->io = $io;\n    }\n\n    public static function &get($url)\n    {\n"
            "        return function () use ($url) { return 1; };\n    }\n}\n\nfunction helper($x) {}\n")
    defs = _defs(text, "php")
    assert {("HttpDownloader", "class"), ("HttpDownloader.__construct", "method"), ("HttpDownloader.get", "method"),
            ("helper", "function")} <= defs
    assert scan_definitions(text, "php").imports == []


def test_ruby_classes_modules_methods_owned_until_their_end():
    text = ('require "liquid/block"\nrequire_relative "../tags/if"\nautoload :Foo, "liquid/foo"\n\n'
            "module Liquid\n  class Error < StandardError; end\n  class ParseContext < Base::Context\n"
            "    include Liquid::ParserSwitching\n    attr_reader :line_number\n\n"
            "    def initialize(options = {})\n      [1].each do |x|\n        puts x\n      end\n    end\n\n"
            "    def self.parse_expression(markup)\n      Expression.parse(markup)\n    end\n\n"
            "    class << self\n      def helper?; end\n    end\n  end\n\n  def top_level; end\nend\n")
    defs = _defs(text, "ruby")
    assert {("Liquid", "class"), ("Liquid.Error", "class"), ("Liquid.ParseContext", "class"),
            ("ParseContext.initialize", "method"), ("ParseContext.parse_expression", "method"),
            ("ParseContext.helper", "method"), ("Liquid.top_level", "method")} <= defs
    assert scan_definitions(text, "ruby").imports == []


# shapes of okhttp's Protocol.kt and Cache.kt
KOTLIN = """package okhttp3

enum class Protocol(private val protocol: String) {
  HTTP_1_0("http/1.0"),
  HTTP_2("h2");

  override fun toString(): String = protocol

  companion object {
    const val MAX_SIZE = 16
    private const val MIN_SIZE = 0
  }
}

class Cache {
  private inner class RealCacheRequest {
    private lateinit var editor: Editor
    fun abort() {}
  }
  annotation class Marker
  suspend fun flush() {}
}
"""


def test_kotlin_modifiers_of_classes_and_properties():
    defs = _defs(KOTLIN, "kotlin")
    assert {("Protocol", "class"), ("Protocol.toString", "method"), ("Protocol.MAX_SIZE", "attr"),
            ("Protocol.MIN_SIZE", "attr"), ("Cache", "class"), ("Cache.RealCacheRequest", "class"),
            ("RealCacheRequest.editor", "attr"), ("RealCacheRequest.abort", "method"), ("Cache.Marker", "class"),
            ("Cache.flush", "method")} <= defs
    # `enum class` once read as a class named `class`, and `inner class` opened no owner
    assert not any(q == "class" or q.endswith(".class") for q, _ in defs)
    assert ("abort", "function") not in defs


def test_generic_arguments_leave_a_csharp_line_before_its_signature_is_read():
    assert without_generics("public async Task<Outcome<T>> RunAsync<T>(Func<T> f)") == "public async Task RunAsync(Func f)"
    assert without_generics("if (a < b && c > d) Run(x);") == "if (a  d) Run(x);"
    assert without_generics("plain(line)") == "plain(line)"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(list("afn{}()<>:;*& \t\n=.#/\"'$_-[]!@\\") + [
    "class ", "module ", "def ", "end", "function ", "public ", "use ", "require ", " : ", " < ", "{ get; }",
    "=> ", "namespace ", "interface "]), max_size=200).map("".join), st.sampled_from(["csharp", "php", "ruby", "kotlin"]))
def test_definitions_of_these_languages_never_fail_on_any_text(text, lang):
    scan = scan_definitions(text, lang)
    assert all(isinstance(name, str) and name for name, _, _, _ in scan.symbols)
    assert all(isinstance(target, str) and target for target in scan.imports)


@pytest.mark.parametrize("lang", ["csharp", "php", "ruby"])
def test_pathological_files_of_these_languages_keep_their_scan_bounded(lang):
    line = ("public class A : " * 8 + "public " * 10 + "x<" * 40 + "def (" * 10 + "{ get; } => ")[:399]
    text = (line + "\n") * 500 + ("  " * 50 + "end\n") * 500  # lines under the scanner's length limit
    scan = scan_definitions(text, lang)
    assert len(scan.symbols) <= 500 and scan.imports == []  # one definition a line at most
