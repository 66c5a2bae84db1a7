"""Routes: declared once with their parameters, matched by a segment tree.

A template is a path of segments: `static`, `:name` (one segment, percent-decoded, so
`group%2Fproject` arrives as `group/project`) and `*name` (one or more segments joined by `/`,
for branch names with slashes). Static segments win over parameters; among greedy matches the
shortest capture is tried first so that `*branch/protect` beats `*branch` for `.../x/protect`.

Matching costs time linear in the path: a greedy capture only tries the few lengths that leave
as many segments as some route below it still needs (`_Node.tails`), never every split.

Starlette's router is not used: it tries every route's regular expression in turn, and with the
API's hundred-odd routes that alone cost more than the whole request (see docs/MEASUREMENTS.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from urllib.parse import unquote

from .params import Param

METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH")
# A route's bound on its request body, read by `bodies.read_body`.
MAX_BODY = 1024 * 1024  # endpoints that take no files
MAX_FILE_BODY = 10 * 1024 * 1024  # the files API: a file's content, base64 or not, inside a JSON or form body


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    handler: Callable
    kind: str = "api"  # "api": JSON API conventions applied by the dispatcher; "raw": the handler answers itself
    # "required", "optional", "none", or "browser": optional, and a web session's cookie counts too
    # (GET of files pages link to, which a browser fetches with its cookie, not a token)
    auth: str = "required"
    admin: bool = False
    guards: tuple[Callable, ...] = ()  # run after authentication, before params: load the project, check access
    params: tuple[Param, ...] = ()
    summary: str = ""
    status: int | None = None  # success status; default 201 for POST, else 200
    paginated: bool = False
    max_body: int | Callable = MAX_BODY  # bytes, or a function of the request
    too_large: Callable | None = None  # error for a body over max_body (default 413)
    tags: tuple[str, ...] = ()

    @property
    def path_params(self) -> list[str]:
        return [seg[1:] for seg in self.template.split("/") if seg[:1] in (":", "*")]

    @property
    def success_status(self) -> int:
        if self.status is not None:
            return self.status
        return 201 if self.method == "POST" else 200


@dataclass
class Routes:
    """The routes one module declares, with templates relative to where `codeyard.routes` mounts
    them (the API's under its version's prefix, the others at the root)."""

    routes: list[Route] = field(default_factory=list)

    def add(self, method: str, template: str, handler: Callable, **options) -> Route:
        route = Route(method=method, template=template, handler=handler, **options)
        self.routes.append(route)
        return route

    def route(self, method: str, template: str, **options) -> Callable:
        def register(handler: Callable) -> Callable:
            self.add(method, template, handler, **options)
            return handler

        return register

    def get(self, template: str, **options) -> Callable:
        return self.route("GET", template, **options)

    def post(self, template: str, **options) -> Callable:
        return self.route("POST", template, **options)

    def put(self, template: str, **options) -> Callable:
        return self.route("PUT", template, **options)

    def delete(self, template: str, **options) -> Callable:
        return self.route("DELETE", template, **options)


def mount(prefix: str, *declared: Routes) -> list[Route]:
    """The routes DECLARED under PREFIX ("" for the root)."""
    return [replace(route, template=prefix + route.template) for routes in declared for route in routes.routes]


MAX_TARGET = 8 * 1024  # bytes of path and query; longer is 414, as nginx's default buffers answer


class _Node:
    __slots__ = ("greedy", "methods", "param", "static", "tails")

    def __init__(self) -> None:
        self.static: dict[str, _Node] = {}
        self.param: tuple[str, _Node] | None = None
        self.greedy: tuple[str, _Node] | None = None
        self.methods: dict[str, Route] = {}
        self.tails: tuple[int, ...] = ()  # segment counts from here to a route, longest first

    def count_tails(self) -> set[int]:
        """Segment counts from here to a route. Used below a greedy parameter only, where no other
        greedy parameter can be (`_insert` refuses two in one template)."""
        counts = {0} if self.methods else set()
        for child in (*self.static.values(), *(pair[1] for pair in (self.param, self.greedy) if pair)):
            counts.update(1 + count for count in child.count_tails())
        self.tails = tuple(sorted(counts, reverse=True))
        return counts


@dataclass(frozen=True)
class Match:
    route: Route | None  # None: the path exists but not for this method
    params: dict[str, str]
    allowed: tuple[str, ...]


class Router:
    def __init__(self, routes: list[Route]):
        self.routes = list(routes)
        self._root = _Node()
        for route in self.routes:
            self._insert(route)
        self._root.count_tails()
        # Routes without parameters are found in a table; a miss walks the tree.
        self._static: dict[tuple[str, str], Match] = {}
        for route in self.routes:
            if not route.path_params:
                node_methods = self._match_segments(route.method, _split(route.template))
                self._static[(route.method, route.template)] = node_methods

    def _insert(self, route: Route) -> None:
        if sum(segment.startswith("*") for segment in _split(route.template)) > 1:
            raise ValueError(f"{route.template}: at most one *parameter per template")
        node = self._root
        for segment in _split(route.template):
            if segment.startswith(":"):
                node.param = node.param or (segment[1:], _Node())
                _check_name(node.param[0], segment[1:], route)
                node = node.param[1]
            elif segment.startswith("*"):
                node.greedy = node.greedy or (segment[1:], _Node())
                _check_name(node.greedy[0], segment[1:], route)
                node = node.greedy[1]
            else:
                node = node.static.setdefault(segment, _Node())
        if route.method in node.methods:
            raise ValueError(f"route declared twice: {route.method} {route.template}")
        node.methods[route.method] = route

    def match(self, method: str, raw_path: str) -> Match | None:
        """The route for METHOD and the raw (percent-encoded) path, or None when no path matches."""
        static = self._static.get(("GET" if method == "HEAD" else method, raw_path))
        if static is not None:
            return static
        segments = [unquote(s) for s in _split(raw_path)]
        if any("\x00" in segment for segment in segments):
            return None  # no name holds a NUL byte; letting one through reaches C code that cuts it
        found = self._match_segments(method, segments)
        if (found is None or found.route is None) and segments and segments[-1].endswith(".json"):
            # GitLab accepted an optional `.json` format suffix on every route: taken when the path
            # as given has no route for this method (`builds/register.json` is not `builds/:id`).
            stripped = self._match_segments(method, [*segments[:-1], segments[-1][: -len(".json")]])
            if stripped is not None and (found is None or stripped.route is not None):
                found = stripped
        return found

    def _match_segments(self, method: str, segments: list[str]) -> Match | None:
        lookup = "GET" if method == "HEAD" else method
        first_path_match: Match | None = None
        allowed: set[str] = set()
        claimed = False  # a route other than a web page has this path
        for node, params in self._walk(self._root, segments, 0, {}):
            route = node.methods.get(lookup)
            if route is not None and route.kind == "page" and claimed:
                route = None  # a web page never answers a path the API or git routes have
            allowed.update(node.methods)
            claimed = claimed or any(other.kind != "page" for other in node.methods.values())
            if route is not None:
                return Match(route, params, tuple(sorted(node.methods)))
            if first_path_match is None:
                first_path_match = Match(None, params, ())
        if first_path_match is None:
            return None
        if "GET" in allowed:
            allowed.add("HEAD")
        return Match(None, first_path_match.params, tuple(sorted(allowed)))

    def _walk(self, node: _Node, segments: list[str], index: int, params: dict) -> Iterator[tuple[_Node, dict]]:
        if index == len(segments):
            if node.methods:
                yield node, params
            return
        segment = segments[index]
        child = node.static.get(segment)
        if child is not None:
            yield from self._walk(child, segments, index + 1, params)
        if node.param is not None and segment != "":
            name, child = node.param
            yield from self._walk(child, segments, index + 1, {**params, name: segment})
        if node.greedy is not None and segment != "":
            name, child = node.greedy
            # The child's tails are the segment counts left after the capture, longest first, so
            # the shortest capture comes first; each end is tried once: linear in the path.
            for tail in child.tails:
                end = len(segments) - tail
                if end <= index:
                    continue
                captured = "/".join(segments[index:end])
                yield from self._walk(child, segments, end, {**params, name: captured})


def _split(path: str) -> list[str]:
    path = path.split("?", 1)[0]
    if path.startswith("/"):
        path = path[1:]
    if path.endswith("/"):
        path = path[:-1]
    return path.split("/") if path else []


def _check_name(existing: str, new: str, route: Route) -> None:
    if existing != new:
        raise ValueError(f"{route.template}: parameter :{new} clashes with :{existing} at the same position")
