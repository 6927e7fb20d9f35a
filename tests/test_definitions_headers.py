"""Class headers of the line scanner (`search/definitions.py`): a class without a body, and a constructor
over many lines, in Kotlin, Java and C#. Each shape failed before the header's parentheses were counted:
a bodiless Kotlin class took the next top-level `fun ... {` as its method, a header longer than four lines
lost its owner for every member below it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from brain.search.definitions import scan_definitions


def _quals(text: str, lang: str) -> dict[str, str]:
    return {name: qual for name, _kind, qual, _line in scan_definitions(text, lang).symbols}


def _rows(text: str, lang: str) -> dict[str, tuple[str, str]]:
    return {name: (kind, qual) for name, kind, qual, _line in scan_definitions(text, lang).symbols}


# the shape of a small Kotlin model file (moshi's and koin's tests and samples read like this)
KOTLIN_BODILESS = '''package com.squareup.moshi.kotlin

data class Point(val x: Int, val y: Int)

@JsonClass(generateAdapter = true)
data class Line(
  val start: Point,
  val end: Point,
)

class Marker

fun Point.distanceTo(other: Point): Double {
  return 0.0
}

internal fun parse(json: String): Line {
  val adapter = moshi.adapter(Line::class.java)
  return adapter.fromJson(json)!!
}

sealed class Shape
object Origin : Shape()

fun origin(): Point {
  return Point(0, 0)
}
'''


def test_a_kotlin_class_without_a_body_owns_no_function_below_it():
    quals = _quals(KOTLIN_BODILESS, "kotlin")
    assert quals["distanceTo"] == "distanceTo"
    assert quals["parse"] == "parse"
    assert quals["origin"] == "origin"
    assert quals["Point"] == "Point" and quals["Line"] == "Line" and quals["Origin"] == "Origin"


# okhttp's and Exposed's classes take many constructor parameters, one a line, and a lambda default
KOTLIN_LONG_CONSTRUCTOR = '''package okhttp3.internal.connection

class RealRoutePlanner(
  private val taskRunner: TaskRunner,
  private val connectionPool: RealConnectionPool,
  private val readTimeoutMillis: Int,
  private val writeTimeoutMillis: Int,
  private val socketConnectTimeoutMillis: Int,
  private val onRetry: (Int) -> Unit = {
    println(it)
  },
  val address: Address,
) : RoutePlanner,
  Closeable {
  private var routeSelection: RouteSelector.Selection? = null

  override fun isCanceled(): Boolean = call.isCanceled()

  override fun plan(): Plan {
    return planConnect()
  }
}

fun tail() {
}
'''


def test_a_kotlin_constructor_over_many_lines_keeps_its_owner():
    rows = _rows(KOTLIN_LONG_CONSTRUCTOR, "kotlin")
    assert rows["plan"] == ("method", "RealRoutePlanner.plan")
    assert rows["isCanceled"] == ("method", "RealRoutePlanner.isCanceled")
    assert rows["routeSelection"] == ("attr", "RealRoutePlanner.routeSelection")
    # the constructor's properties are the class's, its parameters alone are nothing
    assert rows["taskRunner"] == ("attr", "RealRoutePlanner.taskRunner")
    assert rows["address"] == ("attr", "RealRoutePlanner.address")
    assert "it" not in rows
    assert rows["tail"] == ("function", "tail")


def test_a_kotlin_header_continued_by_its_bases_or_brace_still_opens():
    text = ("class Repo(val db: Database)\n    : Closeable\n{\n    fun close() {\n    }\n}\n"
            "data class Box<T>(val v: T) where T : Any {\n    fun get(): T = v\n}\n")
    quals = _quals(text, "kotlin")
    assert quals["close"] == "Repo.close"
    assert quals["get"] == "Box.get"


JAVA_RECORDS = '''package com.example;

public record Range(int lower, int upper) {} // inclusive bounds

public final class Ranges {
  public static Range closed(int a, int b) {
    return new Range(a, b);
  }
}

public record Endpoint(
    @JsonProperty("host") String host,
    @JsonProperty("port") int port,
    @JsonProperty("path") String path,
    @JsonProperty("secure") boolean secure,
    @JsonProperty("timeout") Duration timeout) {
  public URI toUri() {
    return URI.create(host);
  }
}
'''


def test_java_records_commented_or_over_many_lines():
    quals = _quals(JAVA_RECORDS, "java")
    assert quals["Ranges"] == "Ranges"  # not nested in the one-line record above it
    assert quals["closed"] == "Ranges.closed"
    assert quals["toUri"] == "Endpoint.toUri"
    assert "JsonProperty" not in quals


CSHARP_RECORDS = '''namespace AutoMapper;

public record TypePair(Type SourceType, Type DestinationType); // a map's key

public sealed class MapperConfiguration(
    IGlobalConfiguration configuration,
    ILoggerFactory loggerFactory,
    IServiceProvider services,
    IObjectMapper[] mappers,
    [NotNull] string name) : IConfigurationProvider
{
    public IMapper CreateMapper()
    {
        return new Mapper(this);
    }
}

public static class Extensions
{
    public static void Run(this IMapper mapper)
    {
    }
}
'''


def test_csharp_records_and_long_primary_constructors():
    quals = _quals(CSHARP_RECORDS, "csharp")
    assert quals["CreateMapper"] == "MapperConfiguration.CreateMapper"
    assert quals["Run"] == "Extensions.Run"
    assert "NotNull" not in quals


@settings(max_examples=60, deadline=None)
@given(params=st.integers(min_value=0, max_value=40), body=st.booleans(), lang=st.sampled_from(["kotlin", "java"]))
def test_any_constructor_length_keeps_the_owner_and_a_bodiless_class_takes_nothing(params, body, lang):
    if lang == "kotlin":
        lines = ["class Holder("] + [f"    val p{i}: Int," for i in range(params)] + [")" + (" {" if body else "")]
        member = ["    fun member() {", "    }", "}"] if body else []
        tail = ["fun after() {", "}"]
    else:
        lines = ["public record Holder("] + [f"    int p{i}," for i in range(params)] + ["    int last) {"]
        member = ["  public void member() {", "  }", "}"]
        body = True
        tail = ["class After {", "  void after() {", "  }", "}"]
    quals = _quals("\n".join(lines + member + tail) + "\n", lang)
    if body:
        assert quals["member"] == "Holder.member"
    assert quals["after"] in ("after", "After.after")


# okhttp's HttpLoggingInterceptor and moshi's EnumJsonAdapter: the primary constructor below the class line
KOTLIN_CONSTRUCTOR_BELOW = '''class HttpLoggingInterceptor
  @JvmOverloads
  constructor(
    private val logger: Logger = Logger.DEFAULT,
  ) : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
      return chain.proceed(chain.request())
    }
  }

public class EnumJsonAdapter<T : Enum<T>>
private constructor(
  private val enumType: Class<T>,
) : JsonAdapter<T>() {
  override fun fromJson(reader: JsonReader): T? {
    return null
  }
}

class Marker
@Composable
fun Screen() {
}
'''


def test_a_kotlin_primary_constructor_below_its_class_line_continues_the_header():
    rows = _rows(KOTLIN_CONSTRUCTOR_BELOW, "kotlin")
    assert rows["intercept"] == ("method", "HttpLoggingInterceptor.intercept")
    assert rows["logger"] == ("attr", "HttpLoggingInterceptor.logger")
    assert rows["fromJson"] == ("method", "EnumJsonAdapter.fromJson")
    assert rows["Screen"][1] == "Screen"  # an annotated function, not the bodiless class's
