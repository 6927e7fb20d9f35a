"""Fields, constants, properties and enum constants of Java, C# and Kotlin classes in the code index's symbols."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.search.definitions import scan_definitions
from brain.search.definitions_fields import CSHARP_FIELDS, JAVA_FIELDS, declared_fields, enum_constants, nesting


def _defs(text: str, lang: str) -> set[tuple[str, str]]:
    return {(qual, kind) for _, kind, qual, _ in scan_definitions(text, lang).symbols}


# shapes of commons-lang's DateUtils and StrBuilder, guice's ErrorId, an interface's constant
JAVA = """package org.apache.commons.lang3.time;

import java.util.Map;

public class DateUtils {
    /** Number of milliseconds in a standard second. */
    public static final long MILLIS_PER_SECOND = 1000;
    public static final long MILLIS_PER_MINUTE = 60 * MILLIS_PER_SECOND;
    private static final long serialVersionUID = 1L;
    @Deprecated
    static final int[][] FIELDS = {
        {Calendar.MILLISECOND},
    };
    private final Map<String, List<Integer>> cache = new HashMap<>();
    protected transient int size, capacity;
    @SuppressWarnings("unused") private volatile boolean closed;
    char buffer[];

    public DateUtils(int size) {
        super();
        this.size = size;
        int count = 0;
        final String label = "x";
        String s = other(size);
        if (count == size) { count = 1; }
    }

    public static boolean isSameDay(final Date date1, final Date date2) {
        return date1 == date2;
    }

    public enum ErrorId {
        AMBIGUOUS_TYPE_CONVERSION,
        @Deprecated AOP_DISABLED,
        PLUS("+") {
            @Override
            int apply(int a, int b) { return a + b; }
        },
        MINUS(
            "-",
            OTHER),
        TIMES;

        private final String symbol;

        ErrorId() { this.symbol = ""; }
    }

    interface Limits {
        int MAX_ITEMS = 100;
        String name();
    }
}
"""


def test_java_fields_constants_and_enum_constants_are_attributes_of_their_class():
    defs = _defs(JAVA, "java")
    assert {("DateUtils.MILLIS_PER_SECOND", "attr"), ("DateUtils.MILLIS_PER_MINUTE", "attr"),
            ("DateUtils.FIELDS", "attr"), ("DateUtils.cache", "attr"), ("DateUtils.size", "attr"),
            ("DateUtils.capacity", "attr"), ("DateUtils.closed", "attr"), ("DateUtils.isSameDay", "method"),
            ("ErrorId.AMBIGUOUS_TYPE_CONVERSION", "attr"), ("ErrorId.AOP_DISABLED", "attr"), ("ErrorId.PLUS", "attr"),
            ("ErrorId.MINUS", "attr"), ("ErrorId.TIMES", "attr"), ("ErrorId.symbol", "attr"),
            ("Limits.MAX_ITEMS", "attr"), ("Limits.name", "method")} <= defs
    names = {q.rsplit(".", 1)[-1] for q, _ in defs}
    # locals, calls, an argument of a constant, the serialization id: none is a field (a constant body's
    # method is the enum's, as before)
    assert not names & {"count", "label", "s", "OTHER", "serialVersionUID", "super", "other"}
    assert ("ErrorId.apply", "method") in defs
    # a package-private field without a modifier only a field may carry reads as a local: left out
    assert "buffer" not in names


CSHARP = """namespace Serilog.Core;

public class LoggingLevelSwitch
{
    volatile LogEventLevel _minimumLevel;
    readonly object _levelUpdateLock = new();
    internal const int DefaultMaxDepth = 64;
    public static readonly Dictionary<string, List<int>> Cache = new();
    const int Local = 1;

    public event EventHandler<LoggingLevelSwitchChangedEventArgs>? MinimumLevelChanged;

    public LogEventLevel MinimumLevel
    {
        get { return _minimumLevel; }
        set
        {
            var old = _minimumLevel;
            int count = 0;
            _minimumLevel = value;
        }
    }

    public string? Name { get; set; }

    public override string ToString()
    {
        return Name;
    }
}

public enum LogEventLevel
{
    Verbose,
    [Obsolete("x")]
    Debug = 1,
    Information
}
"""


def test_csharp_fields_constants_allman_properties_and_enum_members():
    defs = _defs(CSHARP, "csharp")
    assert {("LoggingLevelSwitch._minimumLevel", "attr"), ("LoggingLevelSwitch._levelUpdateLock", "attr"),
            ("LoggingLevelSwitch.DefaultMaxDepth", "attr"), ("LoggingLevelSwitch.Cache", "attr"),
            ("LoggingLevelSwitch.MinimumLevelChanged", "attr"), ("LoggingLevelSwitch.MinimumLevel", "attr"),
            ("LoggingLevelSwitch.Name", "attr"), ("LoggingLevelSwitch.ToString", "method"),
            ("LogEventLevel.Verbose", "attr"), ("LogEventLevel.Debug", "attr"),
            ("LogEventLevel.Information", "attr")} <= defs
    names = {q.rsplit(".", 1)[-1] for q, _ in defs}
    assert not names & {"old", "count", "value", "Obsolete", "Local"}  # locals; a `const` with no access word


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

data class Route(val address: Address, val proxy: Proxy)

class Cache {
  private inner class RealCacheRequest {
    private var done = false
    fun abort() {}
  }
}
"""


def test_kotlin_enum_classes_constants_constructor_properties_and_inner_classes():
    defs = _defs(KOTLIN, "kotlin")
    assert {("Protocol", "class"), ("Protocol.protocol", "attr"), ("Protocol.HTTP_1_0", "attr"),
            ("Protocol.HTTP_2", "attr"), ("Protocol.toString", "method"), ("Protocol.MAX_SIZE", "attr"),
            ("Protocol.MIN_SIZE", "attr"), ("Route", "class"), ("Route.address", "attr"), ("Route.proxy", "attr"),
            ("Cache.RealCacheRequest", "class"), ("RealCacheRequest.done", "attr"),
            ("RealCacheRequest.abort", "method")} <= defs
    # `enum class` and `inner class` once read as a class named `class`
    assert not any(q == "class" or q.endswith(".class") for q, _ in defs)


def test_a_field_line_is_read_by_its_own_shape():
    assert declared_fields("public static final String A = \"x\", B = \"y\";", JAVA_FIELDS) == ["A"]
    assert declared_fields("private int a, b;", JAVA_FIELDS) == ["a", "b"]
    assert declared_fields("private static final Map<String, Integer> NAMES =", JAVA_FIELDS) == ["NAMES"]
    assert declared_fields("@Nullable @SerializedName(\"x\") private Foo foo;", JAVA_FIELDS) == ["foo"]
    for local in ("int count = 0;", "final String s = f();", "return x;", "throw e;", "x = 5;", "a == b;",
                  "public void run() {", "private int x() {", "if (a) b = c;", "count += 1;", "String s;",
                  "public Foo bar"):  # (Java has no property shape: the last waits for its `;`)
        assert declared_fields(local, JAVA_FIELDS) == [], local
    assert declared_fields("public Foo Bar", CSHARP_FIELDS) == ["Bar"]
    assert declared_fields("static Foo Bar", CSHARP_FIELDS) == []  # a property needs its access word
    assert declared_fields("get => _x;", CSHARP_FIELDS) == []
    assert declared_fields("private set;", CSHARP_FIELDS) == []
    assert enum_constants("RED, GREEN, BLUE;") == ["RED", "GREEN", "BLUE"]
    assert enum_constants("PLUS(\"+\") {") == ["PLUS"]
    assert enum_constants("private final int x;") == enum_constants("return a;") == []
    assert nesting('FOO("(", \')\', "{"),  // )') == (0, 0)
    assert nesting("MINUS(") == (1, 0)


_MODS = st.lists(st.sampled_from(["public", "private", "protected", "static", "final", "volatile"]), min_size=1,
                 max_size=3, unique=True)
_IDENT = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,10}", fullmatch=True).filter(
    lambda w: w not in {"return", "new", "class", "enum", "final", "static", "public", "private", "protected", "var",
                        "volatile", "if", "for", "while", "do", "in", "of", "case", "else", "this", "super", "null",
                        "true", "false", "default", "void", "const", "let", "import", "package", "interface",
                        "switch", "catch", "using", "namespace", "operator", "goto", "await", "yield", "typeof",
                        "delete", "sizeof", "instanceof", "throw", "assert", "break", "continue", "transient"})


@settings(max_examples=200, deadline=None)
@given(_MODS, _IDENT, st.sampled_from(["", "<String, List<Integer>>", "[]", "<T>[]"]), _IDENT,
       st.sampled_from([";", " = 1;", " = new Foo<>(a, b);", " =", " = \"a;b\";"]))
def test_a_declaration_with_a_field_modifier_gives_its_name(mods, type_name, generics, name, rest):
    mods = [m for m in mods if m != "final"] or ["private"]
    line = " ".join(mods) + f" {type_name}{generics} {name}{rest}"
    assert declared_fields(line, JAVA_FIELDS) == [name]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list("afnAB{}()<>:;,*& \t=.@[]\"'$_-!?") + [
    "public ", "static ", "final ", "int ", "enum ", "class ", "RED", "(", ");", "= ", "=> ", "{ get; }"]),
    max_size=200).map("".join), st.sampled_from(["java", "csharp", "kotlin"]))
def test_field_and_enum_readers_never_fail_and_give_identifiers(text, lang):
    for line in text.split("\n"):
        for shape in (JAVA_FIELDS, CSHARP_FIELDS):
            assert all(n and (n[0].isalpha() or n[0] in "_$") for n in declared_fields(line.strip(), shape))
        assert all(n and n.replace("_", "a").isalnum() for n in enum_constants(line.strip()))
    scan = scan_definitions(text, lang)
    assert all(isinstance(name, str) and name for name, _, _, _ in scan.symbols)


@pytest.mark.parametrize("lang", ["java", "csharp", "kotlin"])
def test_pathological_field_lines_keep_the_scan_linear(lang):
    line = ("public enum A {\n" + ("@A(" * 60 + "[" * 60 + "private static final " * 8 + "Map<" * 40 + " x, " * 20
                                   + "= (" * 10)[:399] + "\n")
    text = line * 3000
    started = time.perf_counter()
    scan = scan_definitions(text, lang)
    assert time.perf_counter() - started < 5.0
    assert len(scan.symbols) <= 6000
