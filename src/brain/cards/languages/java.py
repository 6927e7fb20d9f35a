"""Java: packages within Maven/Gradle modules, ``public`` types and members exposed.

From one ``.java`` file: its package; public classes, interfaces, enums, records and
annotation types (nested public ones too) with their public constructors, methods and
fields (interface members are public unless marked private), each with its signature
and the first Javadoc line; imports; ``public static void main(String[])`` as an entry
point; Spring (``@RequestMapping`` on the class + ``@GetMapping``… on methods) and JAX-RS
(``@Path`` + ``@GET``…) routes. ``pom.xml`` and ``build.gradle(.kts)`` give the module's
coordinates, dependencies, sub-modules and main class.
"""

from __future__ import annotations

import re

from . import _treesitter as ts
from .base import Language, Symbol

__all__ = ["describe_folder", "LANGUAGE", "MANIFEST_PARSERS", "extract", "parse_pom", "parse_gradle", "resolve_import", "external",
           "jvm_resolve", "jvm_external"]

LANGUAGE = Language(
    name="java", label="Java", extensions=(".java",), extra="java", grammar="tree_sitter_java",
    manifests=("pom.xml", "build.gradle", "build.gradle.kts"),
    test_patterns=(r"(^|/)src/test/", r"(^|/)src/[\w-]*[tT]est[\w-]*/", r"Tests?\.java$", r"(^|/)test/"),
    source_roots=("src/main/java", "src/main/kotlin", "src"),
)

_TYPES = {"class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
          "record_declaration": "record", "annotation_type_declaration": "@interface"}
_SYMBOL_KIND = {"class": "class", "interface": "interface", "enum": "enum", "record": "class", "@interface": "interface"}
_MAPPING = re.compile(r"@(Get|Post|Put|Delete|Patch|Request)Mapping\b(?:\s*\((.*)\))?", re.S)
_JAXRS = re.compile(r"@(GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS)\b")
_PATH_ANN = re.compile(r'@Path\s*\(\s*(?:value\s*=\s*)?"([^"]*)"')
_FIRST_STRING = re.compile(r'(?:^|\b(?:value|path)\s*=\s*)\{?\s*"([^"]*)"')
_REQ_METHOD = re.compile(r"RequestMethod\.(\w+)")
_STDLIB = ("java.", "javax.", "jdk.", "sun.", "com.sun.", "org.w3c.", "org.xml.", "kotlin.", "kotlinx.")


def _modifiers(src: bytes, node) -> str:
    mods = next((c for c in node.named_children if c.type == "modifiers"), None)
    return ts.text(src, mods) if mods is not None else ""


def _words(mods: str) -> set[str]:
    return set(re.sub(r"@\w+(\([^)]*\))?", " ", mods).split())


def _doc(src: bytes, node) -> str:
    return ts.doc_before(src, node, ("block_comment", "line_comment"), doc_only="/**")


def _method_sig(src: bytes, node, kind: str) -> str:
    name = ts.text(src, node.child_by_field_name("name"))
    tparams = node.child_by_field_name("type_parameters")
    params = node.child_by_field_name("parameters")
    ret = node.child_by_field_name("type")
    params_text = re.sub(r"@\w+(\([^)]*\))?\s*", "", ts.text(src, params)) if params is not None else "()"
    sig = (ts.text(src, tparams) + " " if tparams is not None else "") + \
        (ts.text(src, ret) + " " if ret is not None and kind != "constructor" else "") + name + params_text
    throws = next((c for c in node.named_children if c.type == "throws"), None)
    if throws is not None:
        sig += " " + ts.text(src, throws)
    return ts.squash(sig)


def _route_of(mods: str) -> tuple[str, str] | None:
    m = _MAPPING.search(mods)
    if m:
        args = m.group(2) or ""
        path = _FIRST_STRING.search(args.strip())
        method = m.group(1).upper()
        if method == "REQUEST":
            rm = _REQ_METHOD.search(args)
            method = rm.group(1).upper() if rm else "ANY"
        return method, path.group(1) if path else ""
    j = _JAXRS.search(mods)
    if j:
        p = _PATH_ANN.search(mods)
        return j.group(1), p.group(1) if p else ""
    return None


def _join(base: str, path: str) -> str:
    joined = "/" + "/".join(p for p in (base.strip("/"), path.strip("/")) if p)
    return joined


def _type(src: bytes, node, prefix: str, in_public_api: bool, facts: dict, exports: list, symbols: list,
          parent_interface: bool = False) -> None:
    kind = _TYPES[node.type]
    name = ts.text(src, node.child_by_field_name("name"))
    mods = _modifiers(src, node)
    words = _words(mods)
    public = in_public_api and ("public" in words or (parent_interface and "private" not in words))
    qual = prefix + name
    tparams = node.child_by_field_name("type_parameters")
    head = f"{kind} {name}" + (ts.text(src, tparams) if tparams is not None else "")
    if node.type == "record_declaration":
        params = node.child_by_field_name("parameters")
        head += ts.text(src, params) if params is not None else "()"
    for field_name in ("superclass", "interfaces"):
        part = node.child_by_field_name(field_name)
        if part is not None:
            head += " " + ts.text(src, part)
    ext = next((c for c in node.named_children if c.type == "extends_interfaces"), None)
    if ext is not None:
        head += " " + ts.text(src, ext)
    sig = ts.squash(head, 140)
    start, end = ts.lines(node)
    symbols.append(Symbol(qual, _SYMBOL_KIND[kind], start, end, public, sig))
    members: list[dict] = []
    position = len(exports)  # the type comes before its nested types
    base_route = ""
    class_route = _route_of(mods)
    if class_route is not None:
        base_route = class_route[1]
    is_interface = kind in ("interface", "@interface")
    body = node.child_by_field_name("body")
    items = list(body.named_children) if body is not None else []
    for extra in [c for c in items if c.type == "enum_body_declarations"]:
        items.extend(extra.named_children)
    for item in items:
        itype = item.type
        if itype in _TYPES:
            _type(src, item, qual + ".", public, facts, exports, symbols, parent_interface=is_interface)
            continue
        imods = _modifiers(src, item)
        iwords = _words(imods)
        member_public = public and ("public" in iwords or (is_interface and "private" not in iwords))
        i_start, i_end = ts.lines(item)
        if itype in ("method_declaration", "constructor_declaration", "annotation_type_element_declaration"):
            mkind = "constructor" if itype == "constructor_declaration" else "method"
            mname = ts.text(src, item.child_by_field_name("name"))
            msig = _method_sig(src, item, mkind)
            ts.add_definition(symbols, members, (i_start, i_end), f"{qual}.{mname}", "method", member_public, msig, mkind, mname,
                              lambda: _doc(src, item))
            route = _route_of(imods)
            if route is not None and (class_route is not None or route[1] or "Mapping" in imods or _JAXRS.search(imods)):
                facts["routes"].append([route[0], _join(base_route, route[1]), f"{name}.{mname}"])
            if mname == "main" and {"public", "static"} <= iwords and "String" in msig:
                facts["main"] = f"java {facts['unit'] + '.' if facts['unit'] else ''}{qual}"
        elif itype in ("field_declaration", "constant_declaration"):
            ftype = ts.text(src, item.child_by_field_name("type"))
            for decl in item.children_by_field_name("declarator"):
                fname = ts.text(src, decl.child_by_field_name("name"))
                fsig = ts.squash(f"{ftype} {fname}", 100)
                static_final = {"static", "final"} <= iwords or itype == "constant_declaration" or is_interface
                ts.add_definition(symbols, members, (i_start, i_end), f"{qual}.{fname}", "const" if static_final else "var",
                                  member_public, fsig, "field", fname, lambda: _doc(src, item))
        elif itype == "enum_constant":
            cname = ts.text(src, item.child_by_field_name("name"))
            ts.add_definition(symbols, members, (i_start, i_end), f"{qual}.{cname}", "const", public, cname, "constant", cname,
                              lambda: _doc(src, item))
    ts.add_type(exports, position, public, kind, qual, sig, lambda: _doc(src, node), members)


def extract(raw: bytes, path: str, *, dotted: str | None = None) -> dict:
    """Facts of one Java file (see the module docstring)."""
    root, err = ts.read_tree(LANGUAGE.grammar, raw)
    if err:
        return err
    src = raw
    facts, exports, symbols = ts.start_facts(unit="", imports=[], routes=[])
    for node in root.named_children:
        if node.type == "package_declaration":
            ident = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
            facts["unit"] = ts.text(src, ident)
        elif node.type == "import_declaration":
            ident = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
            spec = ts.text(src, ident)
            if any(c.type == "asterisk" for c in node.named_children):
                spec += ".*"
            facts["imports"].append(spec)
        elif node.type in _TYPES:
            _type(src, node, "", True, facts, exports, symbols)
    return ts.finish_facts(facts, exports, symbols, root, path, LANGUAGE)


# -- manifests --------------------------------------------------------------------------------


def _strip_ns(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse_pom(raw: bytes, path: str) -> dict:
    """Manifest facts of a Maven pom.xml: coordinates, dependencies, sub-modules, main class."""
    import xml.etree.ElementTree as ET

    if b"<!DOCTYPE" in raw[:4096] or b"<!ENTITY" in raw[:65536]:
        return {"status": "unread", "reason": "pom.xml with a DTD is not read"}
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        return {"status": "unread", "reason": f"not valid XML ({exc})"[:120]}

    def child(node, name):
        if node is None:
            return None
        return next((c for c in node if _strip_ns(c.tag) == name), None)

    def value(node, name) -> str:
        found = child(node, name)
        return (found.text or "").strip() if found is not None and found.text else ""

    parent = child(root, "parent")
    group = value(root, "groupId") or value(parent, "groupId")
    artifact = value(root, "artifactId")
    version = value(root, "version") or value(parent, "version")
    declared: dict[str, str] = {}
    for section in (child(root, "dependencies"), child(child(root, "dependencyManagement"), "dependencies")):
        for dep in (section if section is not None else []):
            if _strip_ns(dep.tag) != "dependency":
                continue
            g, a, v, scope = value(dep, "groupId"), value(dep, "artifactId"), value(dep, "version"), value(dep, "scope")
            if g and a:
                declared.setdefault(f"{g}:{a}", f"{g}:{a}" + (f" {v}" if v else "") + (f" ({scope})" if scope else ""))
    modules = [((m.text or "").strip()) for m in (child(root, "modules") or []) if _strip_ns(m.tag) == "module"]
    entry_points = []
    for elem in root.iter():
        if _strip_ns(elem.tag) in ("mainClass", "Main-Class") and elem.text and elem.text.strip():
            entry_points.append([elem.text.strip(), "", "main class (pom.xml)"])
    title = f"Maven module `{group}:{artifact}`" + (f" {version}" if version else "") if artifact else "Maven module"
    return {"status": "ok", "manifest": {"language": "java", "title": title, "name": f"{group}:{artifact}", "group": group,
                                         "declared": declared, "entry_points": entry_points[:5], "members": modules}}


_GRADLE_DEP = re.compile(
    r"\b(implementation|api|compileOnly|runtimeOnly|testImplementation|testRuntimeOnly|kapt|ksp|annotationProcessor)"
    r"\s*\(?\s*['\"]([^'\"\s]+)['\"]")
_GRADLE_PROJECT = re.compile(r"\b(?:implementation|api|compileOnly|runtimeOnly|testImplementation)\s*\(?\s*project\s*\(\s*(?:path\s*[:=]\s*)?['\"]([^'\"]+)['\"]")
_GRADLE_MAIN = re.compile(r"\bmainClass(?:Name)?\s*(?:\.set\s*\(|=)\s*['\"]([\w.$]+)['\"]")
_GRADLE_GROUP = re.compile(r"^\s*group\s*=\s*['\"]([^'\"]+)['\"]", re.M)


def parse_gradle(raw: bytes, path: str) -> dict:
    """Manifest facts of a build.gradle(.kts), read with line patterns (the script is never run)."""
    text = raw.decode("utf-8", errors="replace")
    declared: dict[str, str] = {}
    for config, coordinate in _GRADLE_DEP.findall(text):
        parts = coordinate.split(":")
        if len(parts) >= 2:
            key = f"{parts[0]}:{parts[1]}"
            declared.setdefault(key, coordinate + (" (test)" if config.startswith("test") else ""))
    internal = [f"project `{p}`" for p in dict.fromkeys(_GRADLE_PROJECT.findall(text))]
    entry_points = [[m, "", "main class (Gradle)"] for m in dict.fromkeys(_GRADLE_MAIN.findall(text))]
    folder = path.rpartition("/")[0]
    name = folder.rpartition("/")[2] if folder else ""
    group = _GRADLE_GROUP.search(text)
    title = "Gradle project" + (f" `{name}`" if name else "")
    return {"status": "ok", "manifest": {"language": "java", "title": title, "name": name,
                                         "group": group.group(1) if group else "", "declared": declared,
                                         "entry_points": entry_points, "members": [], "internal": internal}}


MANIFEST_PARSERS = {"pom.xml": parse_pom, "build.gradle": parse_gradle, "build.gradle.kts": parse_gradle}


def jvm_resolve(spec: str, ctx, extensions: tuple[str, ...]) -> str | None:
    """The repository file or folder a JVM import names (``a.b.C`` -> ``…/a/b/C.java``, ``a.b.*`` -> ``…/a/b``)."""
    parts = [p for p in spec.split(".") if p and p != "*"]
    while len(parts) >= 2:
        rel = "/".join(parts)
        for ext in extensions:
            found = ctx.find_suffix(rel + ext)
            if found:
                return found
        if spec.endswith(".*"):
            found = ctx.find_suffix(rel)
            if found:
                return found
        parts = parts[:-1]
    return None


def jvm_external(spec: str, from_path: str, ctx, file_name: str) -> tuple[str, str | None, str] | None:
    if spec.startswith(_STDLIB):
        return None
    manifest = ctx.nearest_manifest(from_path, "java")
    declared = (manifest or {}).get("declared") or {}
    best = None
    best_score: tuple = (1,)
    parts = spec.split(".")
    words = set(parts[2:])
    for key, requirement in declared.items():
        group_id, _, artifact = key.partition(":")
        group = group_id.split(".")
        shared = 0
        while shared < min(len(group), len(parts)) and group[shared] == parts[shared]:
            shared += 1
        if shared < 2:
            continue  # a package and its artifact's groupId share at least two segments (org.springframework.web / .boot)
        # artifacts of one group (jackson-core, jackson-databind) are told apart by the words of the artifactId
        # found in the package (com.fasterxml.jackson.databind -> jackson-databind); a test dependency loses a tie
        hits = sum(1 for word in re.split(r"[-_.]", artifact) if word and word in words)
        score = (shared, hits, "(test)" not in requirement)
        if score > best_score:
            best, best_score = (key, requirement), score
    if best:
        return best[0], best[1], file_name
    name = ".".join(parts[:3] if parts[0] in ("org", "com", "io", "net", "dev") and len(parts) > 3 else parts[:2])
    return name, None, (manifest or {}).get("file") or file_name


def resolve_import(spec: str, from_path: str, ctx) -> str | None:
    return jvm_resolve(spec, ctx, (".java", ".kt"))


def external(spec: str, from_path: str, ctx) -> tuple[str, str | None, str] | None:
    return jvm_external(spec, from_path, ctx, "pom.xml")


def describe_folder(folder: str, manifest_folder: str, manifest: dict) -> str:
    """How a Java developer names a folder: its package (``src/main/java/a/b`` is ``a.b``)."""
    rest = folder[len(manifest_folder):].strip("/") if manifest_folder else folder
    for root in ("src/main/java/", "src/main/kotlin/", "src/java/", "src/", "java/"):
        if rest.startswith(root):
            rest = rest[len(root):]
            break
    package = rest.replace("/", ".")
    title = manifest.get("title", "")
    return f"package `{package}` of {title}" if package else title
