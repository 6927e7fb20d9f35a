"""Evidence of paths: traceback frames, paths the text writes, module paths and links' routes.

The deepest traceback frame inside the repository weighs most (``frame_last``), the others
by depth (``frame``); a file met in many frames counts once plus a little. A written path
names its files outright (``path``); a slashed module name (Go imports, JavaScript requires)
names a module file or a package folder (``module``); a link's path that ends in a module's
words names a file-routed handler (``route``).
"""

from __future__ import annotations

__all__ = ["collect", "resolve_module_path", "resolve_route"]


def collect(task) -> None:
    view, sig, add = task.view, task.sig, task.add
    inside = [(f, fn, view.resolve_path(f)) for f, fn in sig.frames]
    inside = [(f, fn, hits) for f, fn, hits in inside if hits]
    met: set[str] = set()
    for i, (_, fn, hits) in enumerate(inside):
        last = i == len(inside) - 1
        depth = (i + 1) / len(inside)  # later frames are closer to the fault
        feature = "frame_last" if last else "frame"
        value = 1.0 if last else 0.5 + 0.5 * depth
        for path in hits:
            # one file met in many frames counts once (plus a little), not once per frame
            add(path, feature, task.params["frame_repeat"] * value if path in met else value,
                f"traceback frame{f' in {fn}' if fn else ''}")
            met.add(path)
    for written, weight in sig.paths:
        hits = view.resolve_path(written)
        for path in hits:
            add(path, "path", weight / 2 / len(hits), f"path `{written}` in the task", name=True)
    for written in dict.fromkeys(sig.module_paths):
        resolve_module_path(view, written, add)
    for route in sig.routes:
        resolve_route(view, route, add)


def resolve_route(view, route: str, add) -> None:
    """A link's path that ends in the words of one or two modules names them (`api/pin` -> `api/pin.js`,
    `api/user/index.ts`): how file-routed services (serverless functions, page routers) map a URL to code."""
    modules, _ = view.module_keys()
    words = route.lower().split("/")
    for i in range(len(words) - 1):  # at least two words
        files = [p for p in modules.get("/".join(words[i:]), []) if not view.is_test(p)]
        if files and len(files) <= 2:
            for path in files:
                add(path, "route", 1.0 / len(files), f"route `/{route}` of a link in the task")
            return


def resolve_module_path(view, written: str, add) -> None:
    """A slashed module name without extension: Go's ``github.com/org/app/core/logx`` (a package folder),
    JavaScript's ``./lib/router`` (``lib/router.js`` or ``lib/router/index.js``). The longest tail that
    is a module names that file; else the longest tail that is a folder lends its files a share."""
    modules, folders = view.module_keys()
    words = written.lower().split("/")
    for i in range(len(words) - 1):  # at least two words: one word alone is too common to trust
        key = "/".join(words[i:])
        files = modules.get(key)
        if files and len(files) <= 3:
            for path in files:
                add(path, "module", 0.8 / len(files), f"module `{written}` named", name=len(files) == 1)
            return
        folder = folders.get(key)
        if folder and len(folder) <= 40:
            for path in folder:
                add(path, "module", 0.5 / len(folder) ** 0.5, f"package `{written}` named")
            return
