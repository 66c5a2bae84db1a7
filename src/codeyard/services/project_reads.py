"""The read path of the project entity: one statement for one project or for a page of them.

Every row carries what the entity and the caller's access need: the project, its namespace, the
namespace's owner, its fork source (with that one's namespace and owner), the star and fork counts
and the caller's direct and group memberships. Statements are Core SELECTs built once per shape
(scope, which filters are present, order) with bound parameters for every value, so the fast path
(`Database.fast_all`) compiles each once; the rows are named tuples, never ORM objects.

Reads of GET requests run on the fast path: no session, no transaction, a fixed number of
statements whatever the page size (one for a page, its rows carrying the total, and a count only
past the last page; one for a single project).
Responses to writes run the same statements through the request's session, so they see its
uncommitted changes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy import (
    BigInteger,
    Boolean,
    Integer,
    Select,
    and_,
    any_,
    bindparam,
    func,
    literal_column,
    or_,
    select,
    union_all,
)
from sqlalchemy.orm import Session, aliased

from ..db.models import ForkLink, GroupMember, Namespace, Project, ProjectMember, Star, User, parse_id
from ..db.models.projects import INITIAL_BRANCH
from ..db.queries import OFFSET, api_text, like_pattern, matches_pattern
from ..policies import projects as policy
from . import access as access_service
from . import projects as project_service
from . import visibility

ORDERABLE = project_service.ORDERABLE
SEARCH_ORDERABLE = ("id", "name", "created_at", "last_activity_at")

_source = aliased(Project, name="source")
_source_ns = aliased(Namespace, name="source_ns")
_source_owner = aliased(User, name="source_owner")
_owner = aliased(User, name="owner")
_member = aliased(ProjectMember, name="member")
_group_member = aliased(GroupMember, name="group_member")
_fork = aliased(ForkLink, name="fork")

USER_ID = visibility.USER_ID


def _columns(project, forks_count):
    """The entity's columns, PROJECT being `Project` or an alias of a page of its rows."""
    return (
        project.id, project.namespace_id, project.name, project.path, project.description,
        func.coalesce(project.default_branch, INITIAL_BRANCH).label("head_branch"), project.default_branch,
        project.visibility_level, project.issues_enabled, project.merge_requests_enabled, project.builds_enabled,
        project.wiki_enabled, project.snippets_enabled, project.shared_runners_enabled, project.public_builds,
        project.archived, project.tag_list, project.creator_id, project.runners_token_nonce,
        api_text(project.created_at, "created_at"), api_text(project.last_activity_at, "last_activity_at"),
        api_text(project.updated_at, "updated_at"),
        Namespace.name.label("ns_name"), Namespace.path.label("ns_path"), Namespace.kind.label("ns_kind"),
        Namespace.owner_id.label("ns_owner_id"), Namespace.description.label("ns_description"),
        Namespace.visibility_level.label("ns_visibility_level"), api_text(Namespace.created_at, "ns_created_at"),
        api_text(Namespace.updated_at, "ns_updated_at"),
        _owner.id.label("owner_id"), _owner.name.label("owner_name"), _owner.username.label("owner_username"),
        _owner.state.label("owner_state"), _owner.email.label("owner_email"), api_text(_owner.created_at, "owner_created_at"),
        _count(Star.project_id == project.id).label("star_count"),
        forks_count.label("forks_count"),
        _source.id.label("source_id"), _source.name.label("source_name"), _source.path.label("source_path"),
        _source_ns.name.label("source_ns_name"), _source_ns.path.label("source_ns_path"),
        _source_ns.kind.label("source_ns_kind"), _source_owner.name.label("source_owner_name"),
        _member.access_level.label("member_level"), _member.notification_level.label("member_notification"),
        _group_member.access_level.label("group_level"), _group_member.notification_level.label("group_notification"),
        access_service.shared_level(project.id, USER_ID).label("shared_level"),
    )  # fmt: skip


def _count(condition):
    return select(func.count()).where(condition).scalar_subquery()


def _entity_select(page=None, whole_rows: bool = False):
    """Every entity column, FROM projects and the joins they need (the caller is `:user_id`).

    With PAGE, a subquery of the ids of one page, FROM it joined to projects: SQLite then looks
    each id up by rowid. With WHOLE_ROWS, PAGE is a CTE of whole project rows (filtered, ordered
    and cut) and the joins start from it: joining ids back to projects made PostgreSQL hash-join
    a scan of every project, and its correlated fork count scanned all of a small fork_links
    table per row, so the page's fork counts are grouped once."""
    project = aliased(Project, page) if whole_rows else Project
    forks = _fork_counts(page) if whole_rows else None
    if forks is None:
        forks_count = _count(ForkLink.forked_from_project_id == Project.id)
    else:
        forks_count = func.coalesce(forks.c.count, 0)
    first = project if page is None or whole_rows else page.join(Project, Project.id == page.c.id)
    query = (
        select(*_columns(project, forks_count)).select_from(first)
        .join(Namespace, Namespace.id == project.namespace_id)
        .outerjoin(_owner, and_(_owner.id == Namespace.owner_id, Namespace.kind == "user"))
        .outerjoin(_fork, _fork.forked_to_project_id == project.id)
        .outerjoin(_source, _source.id == _fork.forked_from_project_id)
        .outerjoin(_source_ns, _source_ns.id == _source.namespace_id)
        .outerjoin(_source_owner, and_(_source_owner.id == _source_ns.owner_id, _source_ns.kind == "user"))
        .outerjoin(_member, and_(_member.project_id == project.id, _member.user_id == USER_ID))
        .outerjoin(
            _group_member,
            and_(_group_member.namespace_id == project.namespace_id, _group_member.user_id == USER_ID, Namespace.kind == "group"),
        )
    )  # fmt: skip
    return query if forks is None else query.outerjoin(forks, forks.c.id == project.id)


def _fork_counts(page):
    """(id, count) of the projects of PAGE that have forks. Grouped once for the page: as a
    correlated subquery per row, PostgreSQL scans all of a small fork_links table for each."""
    source = ForkLink.forked_from_project_id
    return (
        select(source.label("id"), func.count().label("count"))
        .where(source.in_(select(page.c.id)))
        .group_by(source)
        .subquery("forks")
    )


BY_ID = _entity_select().where(Project.id == bindparam("id", type_=Integer))
BY_PATH = _entity_select().where(
    func.lower(Namespace.path) == bindparam("namespace_path"), func.lower(Project.path) == bindparam("project_path")
)
BY_IDS = _entity_select().where(Project.id.in_(bindparam("ids", expanding=True))).order_by(Project.id)


# --- one project ----------------------------------------------------------------------------------


def one_params(ident: str, user) -> dict | None:
    """The parameters of BY_ID or BY_PATH for a project named by id or `namespace/path`, or None
    when IDENT can name nothing (the rules of `services.projects.find`)."""
    user_id = user.id if user is not None else None
    if "/" in ident:
        namespace_path, _, rest = ident.partition("/")
        return {"namespace_path": namespace_path.lower(), "project_path": rest.split("/", 1)[0].lower(), "user_id": user_id}
    if ident.isascii() and ident.isdigit() and (number := parse_id(ident)) is not None:
        return {"id": number, "user_id": user_id}
    return None


def _one(ident: str, user):
    """(BY_ID or BY_PATH, its parameters) for IDENT, or (None, None) when IDENT can name nothing."""
    params = one_params(ident, user)
    if params is None:
        return None, None
    return BY_PATH if "namespace_path" in params else BY_ID, params


async def find(reader, ident: str, user):
    """The entity row of the project named by IDENT (id or `namespace/path`), or None, through READER
    (`db/readers.py`: the loop's, the fast path's, or a session's, which sees its transaction's changes)."""
    statement, params = _one(ident, user)
    return await reader.first(statement, params) if statement is not None else None


def rows_for(session: Session, user, ids: list[int]) -> list:
    """Entity rows of the projects with IDS (in id order) in SESSION's transaction."""
    if not ids:
        return []
    return list(session.execute(BY_IDS, {"ids": list(ids), "user_id": user.id if user is not None else None}))


# --- access from a row ----------------------------------------------------------------------------


class NamespaceFacts(NamedTuple):
    kind: str
    owner_id: int | None


def access(user, row) -> policy.Access:
    """What USER (a user row or None) may do on the project of ROW (`services.access.access`)."""
    if user is None:
        return policy.anonymous_access(row)
    if user.state != "active":
        return policy.NO_ACCESS
    return policy.project_access(user, row, *_standing(row))


def administers(user, row) -> bool:
    """Whether USER (a user row or None) may administer the project of ROW: `access(...)`'s
    ADMIN_PROJECT, for every row of a list."""
    return user is not None and policy.administers(user, *_standing(row))


def administered(user) -> Callable[[object], bool]:
    """`administers(user, row)` for the rows of one list: nothing to work out per row for an admin,
    else once per standing (namespace kind and owner, the two levels), which a page repeats."""
    if policy.administers_every(user):
        return _always
    known: dict[tuple, bool] = {}

    def administers_row(row) -> bool:
        standing = (row.ns_kind, row.ns_owner_id, row.member_level, row.group_level, row.shared_level)
        found = known.get(standing)
        if found is None:
            found = known[standing] = administers(user, row)
        return found

    return administers_row


def _always(_row) -> bool:
    return True


def _standing(row) -> tuple[NamespaceFacts, int | None, int | None]:
    """(namespace, project level, group level) of the caller on ROW's project, as the policies take
    them: the project level is the higher of the direct membership and what the groups the project
    is shared with give (`access_service.shared_level`)."""
    group_level = row.group_level if row.ns_kind == "group" else None
    return NamespaceFacts(row.ns_kind, row.ns_owner_id), access_service.project_level(row.member_level, row.shared_level), group_level


# --- pages ----------------------------------------------------------------------------------------

ALL, MEMBER, OWNED, STARRED, GROUP, SEARCH = "all", "member", "owned", "starred", "group", "search"
VISIBLE = "visible"  # every project the caller may read (API v4's /projects)
FORKS = "forks"  # the forks of project `:source_id` the caller may read


@dataclass(frozen=True)
class Query:
    """One list request: the scope, the caller and the filters (`services.projects.Filters`)."""

    scope: str
    user: object
    filters: project_service.Filters
    group_id: int | None = None
    name: str | None = None  # the text of /projects/search/:query
    source_id: int | None = None  # the project whose forks are listed (FORKS)


_IN_GROUP = Project.namespace_id == bindparam("group_id", type_=Integer)
GROUP_ROWS = {  # by the caller's shape of `visibility.readable` (signed in: the API's groups need a user)
    visibility.ADMIN: _entity_select().where(_IN_GROUP).order_by(Project.id),
    visibility.SIGNED_IN: _entity_select().where(_IN_GROUP, visibility.readable(visibility.SIGNED_IN)).order_by(Project.id),
}


def group_rows(db, user, group_id: int) -> list:
    """Entity rows of the projects of group GROUP_ID that USER may read, in id order: one statement on
    the fast path, for a thread beside the event loop as a page's (`Database.fast_all_at_once`)."""
    params = {"group_id": group_id, **visibility.params(user)}
    return db.fast_all_at_once(GROUP_ROWS[visibility.viewer(user)], params)


MIN_ACCESS_LEVEL = bindparam("min_access_level", type_=Integer)
_FURTHER = {  # v4's further filters (`Filters.given`), by name
    "id_after": lambda: Project.id > bindparam("id_after", type_=BigInteger),
    "id_before": lambda: Project.id < bindparam("id_before", type_=BigInteger),
    "min_access_level": lambda: Project.id.in_(project_service.reached(USER_ID, MIN_ACCESS_LEVEL)),
    "last_activity_after": lambda: Project.last_activity_at > bindparam("last_activity_after", type_=Project.last_activity_at.type),
    "last_activity_before": lambda: Project.last_activity_at < bindparam("last_activity_before", type_=Project.last_activity_at.type),
}


def _scope_conditions(scope: str, reader: str, archived: bool, search: bool, visibility_given: bool, further: tuple = ()) -> list:
    """The WHERE conditions on projects (and their namespace when SEARCH) of one shape of list, read
    by READER (a shape of `visibility.readable`); FURTHER names v4's further filters given."""
    conditions = []
    if scope == OWNED:
        conditions.append(Project.id.in_(project_service.owned(USER_ID)))
    elif scope == STARRED:
        conditions.append(Project.id.in_(project_service.starred(USER_ID)))
    elif scope == GROUP:
        conditions.append(_IN_GROUP)
    elif scope == FORKS:
        forks = select(ForkLink.forked_to_project_id).where(ForkLink.forked_from_project_id == bindparam("source_id", type_=Integer))
        conditions.append(Project.id.in_(forks))
    elif scope == SEARCH:
        conditions.append(matches_pattern("name_pattern", Project.name))
    if reader != visibility.ADMIN:
        conditions.append(visibility.readable(reader))
    if archived:
        conditions.append(Project.archived == bindparam("archived", type_=Boolean))
    if search:
        conditions.append(matches_pattern("pattern", Project.path, Project.name, Project.description, Namespace.name))
    if visibility_given:
        conditions.append(Project.visibility_level == bindparam("visibility", type_=Integer))
    conditions.extend(_FURTHER[name]() for name in further)
    return conditions


WINDOW = bindparam("window", type_=BigInteger)  # offset + limit
# A walk of PostgreSQL's member pages (`_walked`): the orders its index keeps, and how many
# projects it may read per row of the window (`:walk_budget`).
WALKED_ORDERS = ("id", "created_at", "last_activity_at")
WALK_ROWS = 10
WALK_BUDGET = bindparam("walk_budget", type_=BigInteger)
# SQLite's member pages ending this far into the list are cut from each branch's first rows
# (`_member_statements_sqlite`): of 1,500 projects, cheaper up to 300, dearer from 400 on.
FIRST_ROWS = 300


@functools.cache
def _page_statements(
    scope: str, reader: str, archived: bool, search: bool, visibility_given: bool, order: tuple, limit: int,
    sqlite: bool = False, first_rows: bool = False, counted: bool = True, further: tuple = (),
):
    """(count, page) statements of one shape of list for SQLite or PostgreSQL; built once per shape.

    The page size LIMIT is written into the statement, not bound: PostgreSQL then plans the prepared
    statement once (a generic plan). With the limit a parameter, a generic plan had to assume a
    tenth of the rows, so PostgreSQL planned every page again (a millisecond of its two or three).

    Every row of the page carries the list's total (`total`, a subquery run once per statement), so
    a page is one statement; COUNT is needed only for a page past the end. The caller's own projects
    (MEMBER) are read from their memberships: on PostgreSQL walked to or gathered
    (`_member_statements_postgresql`), on SQLite from two disjoint branches
    (`_member_statements_sqlite`; FIRST_ROWS chooses how)."""
    conditions = _scope_conditions(scope, reader, archived, search, visibility_given, further)
    if scope == MEMBER:  # driven from the caller's memberships: see `project_service.authorized`
        if sqlite:
            return _member_statements_sqlite(conditions, search, order, limit, first_rows)
        return _member_statements_postgresql(conditions, search, order, limit)
    source = Project.__table__
    if search:  # the namespace's name is searched too
        source = source.join(Namespace, Namespace.id == Project.namespace_id)
    count = select(func.count()).select_from(source).where(*conditions)
    # Without COUNTED the page carries no total (every project: their number is kept, `page`).
    total = (count.correlate(None).scalar_subquery().label("total"),) if counted else ()
    ordering = _ordering(Project, order)
    chosen = select(*(Project.id,) if sqlite else Project.__table__.columns).select_from(source).where(*conditions)
    page = chosen.order_by(*ordering).limit(_literal(limit)).offset(OFFSET)
    if sqlite:  # whole rows through its sorter cost SQLite more than looking 100 ids up
        return count, _entity_select(page.subquery("page")).add_columns(*total).order_by(*ordering)
    page = page.cte("page")
    return count, _entity_select(page, whole_rows=True).add_columns(*total).order_by(*_ordering(page.c, order))


def _member_statements_postgresql(conditions: list, search: bool, order: tuple, limit: int):
    """(count, page) of the caller's own projects (MEMBER) on PostgreSQL.

    Without filters, in an order an index keeps (WALKED_ORDERS), the page is first looked for by
    walking the projects in that order (`_walked`); otherwise, or when the walk ends too soon, it is
    cut from all of the caller's projects, gathered with their sort keys (`_gathered`)."""
    ways = _MemberWays(conditions, search)
    gathered = [ways.select(_sort_keys(order), where) for where in (ways.in_namespaces, ways.outside)]
    if conditions or order[0][0] not in WALKED_ORDERS:
        return _gathered(gathered, order, limit)
    counts = _member_counts(ways.namespaces)
    counted = select((counts[0] + counts[1]).label("n")).cte("counted").prefix_with("MATERIALIZED")
    total = select(counted.c.n).scalar_subquery()
    walked = _walked(ways, order, total)
    complete = select(func.count()).select_from(walked).scalar_subquery() >= func.least(WINDOW, total)
    # Each branch runs only when its one-time condition holds: the gathering only after a short walk.
    matching = union_all(select(*walked.c).where(complete), *(part.where(~complete) for part in gathered)).subquery("matching")
    return select(counts[0] + counts[1]), _page_of(matching, total, order, limit)


def _walked(ways: _MemberWays, order: tuple, total):
    """The caller's first `:window` projects (id and sort keys), found by reading every project in
    the list's order from its index and keeping the caller's: at most WALK_ROWS per row of the
    window (`:walk_budget`) and twice the caller's TOTAL (a short walk, for a caller with few).

    Gathering looks up each of the caller's projects; a walk reads index entries in order, and
    stops at the page: faster for a caller with many projects, the same for one with few
    (docs/MEASUREMENTS.md, project reads)."""
    keys = _sort_keys(order)
    read = (
        select(Project.namespace_id, *keys).order_by(*_ordering(Project, order))
        .limit(func.least(WALK_BUDGET, 2 * total)).subquery("read")
    )  # fmt: skip
    direct = select(ProjectMember.project_id).where(ProjectMember.user_id == USER_ID)
    mine = or_(read.c.namespace_id.in_(ways.namespaces), read.c.id.in_(direct))
    walked = select(*(read.c[key.key] for key in keys)).where(mine).order_by(*_ordering(read.c, order)).limit(WINDOW)
    return walked.cte("walked").prefix_with("MATERIALIZED")


def _gathered(gathered: list, order: tuple, limit: int):
    """(count, page) cut from the caller's projects GATHERED once with their sort keys (a
    materialized CTE, counted too). Each branch reads its sort keys with its rows: gathering the ids
    first and looking each one up afterwards cost more (docs/MEASUREMENTS.md, project reads)."""
    matching = union_all(*gathered)
    count = select(func.count()).select_from(matching.subquery())
    matching = matching.cte("matching").prefix_with("MATERIALIZED")
    total = select(func.count()).select_from(matching).correlate(None).scalar_subquery()
    return count, _page_of(matching, total, order, limit)


def _page_of(matching, total, order: tuple, limit: int):
    """The entity rows of one page cut from MATCHING (ids and sort keys), each carrying TOTAL. The
    page's projects are looked up by `id = ANY(ARRAY(ids))`, by their primary key: for `id IN
    (ids)` PostgreSQL read every project into a hash join."""
    ids = select(matching.c.id).order_by(*_ordering(matching.c, order)).limit(_literal(limit)).offset(OFFSET)
    in_page = Project.id == any_(func.array(ids.scalar_subquery()))
    page = select(*Project.__table__.columns, total.label("total")).where(in_page).cte("page")
    return _entity_select(page, whole_rows=True).add_columns(page.c.total).order_by(*_ordering(page.c, order))


class _MemberWays:
    """The ways the caller (`:user_id`) is a member of a project, each a (source, condition): the
    projects of their namespaces (personal and groups), their direct memberships, and those of
    the direct memberships in other namespaces; `select` reads one with a list's CONDITIONS."""

    def __init__(self, conditions: list, search: bool):
        self.conditions, self.search = conditions, search
        self.namespaces = project_service.member_namespaces(USER_ID)
        members = ProjectMember.__table__.join(Project.__table__, Project.id == ProjectMember.project_id)
        self.in_namespaces = (Project.__table__, Project.namespace_id.in_(self.namespaces))
        self.direct = (members, ProjectMember.user_id == USER_ID)
        self.outside = (members, and_(ProjectMember.user_id == USER_ID, Project.namespace_id.not_in(self.namespaces)))

    def select(self, columns, way: tuple):
        source, condition = way
        if self.search:  # the namespace's name is searched too
            source = source.join(Namespace, Namespace.id == Project.namespace_id)
        return select(*columns).select_from(source).where(condition, *self.conditions)


def _member_statements_sqlite(conditions: list, search: bool, order: tuple, limit: int, first_rows: bool):
    """(count, page) of the caller's own projects (MEMBER) on SQLite, from two branches: the
    projects of their namespaces (personal and groups), and their direct memberships. The total is
    the first's count plus the direct memberships of projects in other namespaces.

    With FIRST_ROWS (a page near the start, no text search: `page`), each branch gives only its
    first `:window` (offset + limit) rows in the page's order and the page is cut from those: SQLite
    keeps just the window while it reads the branch, instead of writing out and sorting every
    project of the caller (docs/MEASUREMENTS.md, project reads). Otherwise
    each branch is read once into a materialized CTE that is both counted and sorted: deeper into
    the list, or when each row is matched against the search text, reading the branches twice
    (for the window and for the count) costs more."""
    ways = _MemberWays(conditions, search)
    if first_rows:
        if conditions:
            counts = [ways.select((func.count(),), where).scalar_subquery() for where in (ways.in_namespaces, ways.outside)]
        else:
            counts = _member_counts(ways.namespaces)
        # The direct branch keeps the projects of their namespaces (the UNION drops them again): to
        # test each of its rows against those namespaces cost more than that.
        parts = [
            ways.select(_sort_keys(order), where).order_by(*_ordering(Project, order)).limit(WINDOW).subquery()
            for where in (ways.in_namespaces, ways.direct)
        ]
        both = select(*parts[0].c).union(select(*parts[1].c)).subquery("mine")
    else:
        parts = [
            ways.select(_sort_keys(order), where).cte(f"mine_{number}").prefix_with("MATERIALIZED")
            for number, where in enumerate((ways.in_namespaces, ways.outside))
        ]
        counts = [select(func.count()).select_from(part).scalar_subquery() for part in parts]
        both = select(*parts[0].c).union_all(select(*parts[1].c)).subquery("mine")
    counted = counts[0] + counts[1]
    ids = select(both.c.id).order_by(*_ordering(both.c, order)).limit(_literal(limit)).offset(OFFSET).subquery("ids")
    page = select(ids.c.id, counted.label("total")).subquery("page")
    rows = _entity_select(page).add_columns(page.c.total).order_by(*_ordering(Project, order))
    return select(counted), rows


def _member_counts(namespaces) -> list:
    """[projects of the caller's namespaces less those the caller is also a direct member of, direct
    memberships]: their sum is the number of the caller's projects, without a filter on them.

    The first reads the namespaces' index entries and looks each project up in the memberships'
    (project_id, user_id) index; the second reads the caller's entries of the (user_id, project_id)
    index. On SQLite, counting the direct memberships outside the namespaces instead looked up every one of
    the caller's direct projects in the table, slower than these two (docs/MEASUREMENTS.md,
    project reads)."""
    direct = aliased(ProjectMember, name="direct")
    joined = Project.__table__.outerjoin(direct, and_(direct.project_id == Project.id, direct.user_id == USER_ID))
    in_namespaces = (
        select(func.count() - func.count(direct.project_id)).select_from(joined).where(Project.namespace_id.in_(namespaces))
    )
    memberships = select(func.count()).where(ProjectMember.user_id == USER_ID)
    return [query.correlate(None).scalar_subquery() for query in (in_namespaces, memberships)]


def _literal(number: int):
    """NUMBER written into the statement (an integer, so nothing a caller sent reaches SQL as text)."""
    return literal_column(str(int(number)), Integer)


def _sort_keys(order: tuple) -> list:
    """The project columns ORDER sorts by, the id first."""
    return [getattr(Project, column) for column in ("id", *sorted({column for column, _ in order} - {"id"}))]


def _ordering(columns, order: tuple) -> list:
    return [getattr(columns, column).asc() if way == "asc" else getattr(columns, column).desc() for column, way in order]


def _order(query: Query) -> tuple:
    """((column, direction), ...): the requested order with the id as the tie-breaker."""
    filters = query.filters
    if query.scope == SEARCH:
        order = [(filters.order_by, filters.sort)] if filters.order_by is not None else []
        return (*order, ("id", filters.sort))
    return ((filters.order_by, filters.sort), ("id", filters.sort))


# The number of every project (`/projects/all` without filters, on PostgreSQL), kept between
# requests like a caller's row (`db.changes`): inserts and deletes of projects notify the feed.
EVERY_PROJECT = ("project_reads", "every project")


def page(db, query: Query, offset: int, limit: int) -> tuple[int, list]:
    """(total, entity rows of one page) for QUERY, on the fast path (for a thread beside the event
    loop: `Database.fast_all_at_once`): one statement, a count only past the last page. On
    PostgreSQL every project's page leaves its count out and takes the number kept (EVERY_PROJECT):
    counting 10,000 projects was a third of PostgreSQL's time on the page."""
    count, rows, params, every = page_plan(db, query, offset, limit)
    if every:
        return db.identity.cached(EVERY_PROJECT, lambda: db.fast_first(count, params)[0]), db.fast_all_at_once(rows, params)
    found = db.fast_all_at_once(rows, params)  # each row carries the total (`_page_statements`)
    if found:
        return found[0].total, found
    return (db.fast_first(count, params)[0] if offset else 0), found


def list_reader(scope: str, user) -> str:
    """Who reads a list of SCOPE, as `visibility.readable` takes it (ADMIN: no condition). The
    caller's own lists (member, owned) and every project (admins) are not filtered; the others are,
    by GitLab's rule: admins see every project except in the name search, which looks through
    memberships and internal/public projects for anyone."""
    if scope in (MEMBER, OWNED, ALL):
        return visibility.ADMIN
    return visibility.viewer(user, admin_reads_every=scope != SEARCH)


def page_plan(db, query: Query, offset: int, limit: int) -> tuple[Select, Select, dict, bool]:
    """(count statement, page statement, their parameters, whether the count is every project's)
    of one page of QUERY: what `page` runs (bench/projects_list_plans.py explains them)."""
    user, filters = query.user, query.filters
    reader = list_reader(query.scope, user)
    first_rows = query.scope == MEMBER and db.is_sqlite and not filters.search and offset + limit <= FIRST_ROWS
    # On SQLite the count stays in the page's statement: it is SQLite's work with the GIL released,
    # and the generation there is per reader thread (the number would be read again by each).
    every = not db.is_sqlite and query.scope == ALL and filters.archived is None and not filters.search
    further = filters.given()
    every = every and filters.visibility is None and not further
    count, rows = _page_statements(
        query.scope, reader, filters.archived is not None, bool(filters.search), filters.visibility is not None,
        _order(query), limit, db.is_sqlite, first_rows, not every, further,
    )  # fmt: skip
    params = {
        **visibility.params(user),
        "group_id": query.group_id,
        "source_id": query.source_id,
        "archived": filters.archived,
        "pattern": like_pattern(filters.search) if filters.search else None,
        "name_pattern": like_pattern(query.name) if query.name is not None else None,
        "visibility": filters.visibility,
        "offset": offset,
        "window": offset + limit,
        "walk_budget": (offset + limit) * WALK_ROWS,
        **{name: getattr(filters, name) for name in further},
    }
    return count, rows, params, every
