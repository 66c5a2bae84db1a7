"""What a handler sees of one request: parameters, the caller, a lazily opened database session."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import re
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from ..db.models import Namespace, Project
from ..db.readers import SessionReader
from ..entities.common import View
from ..errors import NotFound, RecordNotFound
from .params import parse_query

_API_TEMPLATE = re.compile(r"/api/(v\d+)(/.*)")

if TYPE_CHECKING:
    from ..runtime import Runtime
    from .routing import Route


class Ctx:
    """One request. Handlers read `args` (validated parameters), `actor` (the caller, a user row or
    None), `project_row`, `project_id` and `project` (when a guard found it) and use `session`; they
    never see ASGI details.

    The session's transaction is open from its first use to the end of the handler. An async
    handler must therefore finish its awaits (password hashing, git) before it first touches
    `session`: holding a SQLite write lock across an await would stall every other writer.
    """

    def __init__(self, rt: Runtime, scope: dict, route: Route, path_params: dict[str, str]):
        self.rt = rt
        self.scope = scope
        self.route = route
        self.method: str = scope["method"]
        self.path_params = path_params
        self.body: dict[str, Any] = {}
        self.args: dict[str, Any] = {}
        self.actor = None
        self.private_token: str | None = None  # the private token that authenticated the caller
        self.token_id: int | None = None  # the personal or impersonation token that did
        self.scopes: frozenset[str] | None = None  # that token's scopes; None: the caller may do all
        self.project_row = None  # a project a guard found and checked (a `project_reads` row; `project` loads the model)
        self.access = None  # the caller's access to that project, set by the same guard
        self._project = None
        self.group_row = None  # a group a guard found (the group entity's columns; `group` loads the model)
        self._group = None
        self.group_abilities: frozenset[str] = frozenset()  # the caller's on that group, set by the same guard
        self.runner = None  # the runner a runner-protocol request authenticated as (api/ci.py)
        self._session: Session | None = None
        self._closers: list = []
        self._headers: dict[str, str] | None = None
        self._query: dict[str, Any] | None = None
        self._view: View | None = None

    # --- request data -------------------------------------------------------------------------

    @property
    def headers(self) -> dict[str, str]:
        if self._headers is None:
            self._headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in self.scope["headers"]}
        return self._headers

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    @functools.cached_property
    def cookies(self) -> dict[str, str]:
        """The request's cookies by name (the first of a repeated name)."""
        found: dict[str, str] = {}
        for part in (self.header("cookie") or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name and name not in found:
                found[name] = value
        return found

    @property
    def client_address(self) -> str:
        """The peer's address (a trusted proxy's X-Forwarded-For is applied by uvicorn beforehand)."""
        client = self.scope.get("client")
        return client[0] if client else "unknown"

    @property
    def query_string(self) -> str:
        return self.scope.get("query_string", b"").decode("latin-1")

    @property
    def query(self) -> dict[str, Any]:
        if self._query is None:
            self._query = parse_query(self.query_string) if self.scope.get("query_string") else {}
        return self._query

    def raw_params(self) -> dict[str, Any]:
        """Query < body < path captures, as Grape merges them."""
        return {**self.query, **self.body, **self.path_params}

    def param(self, name: str) -> Any:
        """A raw parameter from the path, body or query (in that order of precedence)."""
        for source in (self.path_params, self.body, self.query):
            if name in source:
                return source[name]
        return None

    @property
    def by_admin(self) -> bool:
        """Whether the caller is an instance admin (False for an anonymous caller)."""
        return self.actor is not None and bool(self.actor.is_admin)

    @functools.cached_property
    def api_route(self) -> tuple[str, str] | None:
        """(version, template below it) of an API route, e.g. ("v4", "/user"); None for any other."""
        found = _API_TEMPLATE.fullmatch(self.route.template)
        return (found.group(1), found.group(2)) if found else None

    @property
    def raw_path(self) -> str:
        raw = self.scope.get("raw_path")
        return raw.decode("latin-1").split("?", 1)[0] if raw else self.scope["path"]

    @property
    def base_url(self) -> str:
        return self.rt.config.base_url

    def absolute_url(self, path: str) -> str:
        return self.rt.config.base_url + path

    @property
    def view(self) -> View:
        if self._view is None:
            self._view = self.rt.view()
        return self._view

    def path_int(self, name: str, not_found: type[Exception] = RecordNotFound) -> int:
        """An integer path capture; anything else names nothing, so it is a 404."""
        value = self.path_params.get(name, "")
        if not (value.isascii() and value.isdigit()) or len(value) > 18:
            raise not_found()
        return int(value)  # may exceed any id: lookups ask `is_id` first, so it names nothing

    @property
    def project(self) -> Project | None:
        """The row of the project a guard found, loaded in this request's session when first asked
        for (a handler that needs only `project_id` never loads it); 404 if it went meanwhile."""
        if self._project is None and self.project_id is not None:
            self._project = self.session.get(Project, self.project_id)
            if self._project is None:
                raise NotFound("Project")
        return self._project

    @property
    def project_id(self) -> int | None:
        return None if self.project_row is None else self.project_row.id

    @property
    def group_id(self) -> int | None:
        return None if self.group_row is None else self.group_row.id

    @property
    def group(self) -> Namespace | None:
        """The row of the group a guard found, loaded in this request's session when first asked for;
        404 if it went meanwhile."""
        if self._group is None and self.group_id is not None:
            self._group = self.session.get(Namespace, self.group_id)
            if self._group is None:
                raise NotFound("Group")
        return self._group

    # --- the unit of work ---------------------------------------------------------------------

    @property
    def session(self) -> Session:
        """This request's session; a write transaction for every verb but GET and HEAD."""
        if self._session is None:
            self._session = self.rt.db.session(write=self.method not in ("GET", "HEAD"))
        return self._session

    @property
    def reader(self) -> SessionReader:
        """A reader (`db/readers.py`) inside this request's transaction: it sees what the request wrote."""
        return SessionReader(self.session)

    def commit(self) -> None:
        if self._session is not None:
            self._session.commit()

    async def off_loop(self, work, *args):
        """WORK(*ARGS) in the thread pool, so slow git never holds up other requests; this request's
        transaction is committed first (git needs no database, and no lock is held meanwhile)."""
        self.commit()
        return await run_in_threadpool(work, *args)

    async def off_loop_reads(self, work, *args):
        """WORK(*ARGS), reads on the database's fast path, in its reader threads (`Database.readers`)
        rather than git's pool; committed first, like `off_loop`."""
        self.commit()
        return await asyncio.get_running_loop().run_in_executor(self.rt.db.readers, functools.partial(work, *args))

    async def off_loop_while(self, work, here):
        """(HERE(), WORK()): WORK in a thread, started before HERE does this request's database work
        on the loop (WORK must need no database and no ORM object); the transaction is committed
        before waiting for WORK, so none is open meanwhile. WORK goes to asyncio's executor, which
        takes it at once (the thread pool of `off_loop` would take it only at the first await)."""
        context = contextvars.copy_context()
        started = asyncio.get_running_loop().run_in_executor(None, context.run, work)
        try:
            near = here()
            self.commit()
        except BaseException:
            started.add_done_callback(_settled)
            raise
        return near, await started

    def rollback(self) -> None:
        if self._session is not None:
            self._session.rollback()

    def on_close(self, closer) -> None:
        self._closers.append(closer)

    async def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
        for closer in self._closers:
            result = closer()
            if hasattr(result, "__await__"):
                await result
        self._closers.clear()


def _settled(work: asyncio.Future) -> None:
    """Work left running when the request failed beside it: its outcome is nobody's (nor logged)."""
    if not work.cancelled():
        work.exception()
