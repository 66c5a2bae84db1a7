"""Helpers shared by the tests: an API client wrapper, a user factory, a live server process."""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import jsonschema_rs
from sqlalchemy import event as sqlalchemy_event

from codeyard import config as config_module
from codeyard.db.models import GroupMember, Namespace, Project, ProjectMember, User
from codeyard.runtime import Runtime
from codeyard.services import credentials, groups, projects, pushes
from codeyard.services import users as user_service

DEFAULT_PASSWORD = "correct-horse-battery"


@dataclass(frozen=True)
class TestUser:
    id: int
    username: str
    email: str
    name: str
    password: str
    token: str
    is_admin: bool = False

    __test__ = False  # not a test class


class UserFactory:
    _counter = itertools.count(1)

    def __init__(self, rt: Runtime):
        self.rt = rt

    def create(
        self,
        username: str | None = None,
        *,
        admin: bool = False,
        password: str = DEFAULT_PASSWORD,
        state: str = "active",
        **fields,
    ) -> TestUser:
        number = next(self._counter)
        username = username or f"user{number}"
        email = fields.pop("email", f"{username}@example.com")
        name = fields.pop("name", f"User {username}")
        digest = self.rt.passwords.hash(password)
        with self.rt.db.transaction() as session:
            user = user_service.create(
                session,
                {"username": username, "email": email, "name": name, "is_admin": admin, **fields},
                digest,
            )
            user.state = state
            _token, secret = credentials.issue_token(session, user.id, name="test")
            user_id = user.id
        return TestUser(user_id, username, email, name, password, secret, admin)


@dataclass(frozen=True)
class TestProject:
    id: int
    name: str
    path: str
    path_with_namespace: str
    namespace_id: int

    __test__ = False

    @property
    def ref(self) -> str:
        """The project as `:id` in a URL: namespace%2Fpath."""
        return self.path_with_namespace.replace("/", "%2F")


@dataclass(frozen=True)
class TestGroup:
    id: int
    path: str
    name: str

    __test__ = False


class ProjectFactory:
    """Projects, groups and memberships, made through the services as the API would make them."""

    _counter = itertools.count(1)

    def __init__(self, rt: Runtime):
        self.rt = rt

    def create(self, owner: TestUser, *, group: TestGroup | None = None, name: str | None = None,
               visibility: int = 0, **attrs) -> TestProject:
        name = name or f"project{next(self._counter)}"
        with self.rt.db.transaction() as session:
            actor = session.get(User, owner.id)
            namespace = session.get(Namespace, group.id) if group else user_service.personal_namespace(session, actor)
            project = projects.create(session, self.rt, actor, namespace, {"name": name, "visibility_level": visibility, **attrs})
            result = TestProject(project.id, project.name, project.path, project.path_with_namespace, namespace.id)
        return result

    def group(self, owner: TestUser, path: str | None = None, *, visibility: int = 0, name: str | None = None) -> TestGroup:
        path = path or f"group{next(self._counter)}"
        with self.rt.db.transaction() as session:
            group = groups.create(session, session.get(User, owner.id), {"name": name or path.title(), "path": path, "visibility_level": visibility})
            result = TestGroup(group.id, group.path, group.name)
        return result

    def add_member(self, project: TestProject, user: TestUser, level: int) -> None:
        with self.rt.db.transaction() as session:
            session.add(ProjectMember(project_id=project.id, user_id=user.id, access_level=level))

    def add_group_member(self, group: TestGroup, user: TestUser, level: int) -> None:
        with self.rt.db.transaction() as session:
            session.add(GroupMember(namespace_id=group.id, user_id=user.id, access_level=level))


class ApiClient:
    """Requests to /api/v3 as one caller (or anonymously)."""

    def __init__(self, client, token: str | None = None, prefix: str = "/api/v3"):
        self.client = client
        self.token = token
        self.prefix = prefix

    def as_(self, who) -> ApiClient:
        token = who if isinstance(who, str) or who is None else who.token
        return ApiClient(self.client, token, self.prefix)

    @property
    def anonymous(self) -> ApiClient:
        return ApiClient(self.client, None, self.prefix)

    def request(self, method: str, path: str, headers: dict | None = None, **kwargs) -> httpx.Response:
        headers = dict(headers or {})
        if self.token is not None:
            headers.setdefault("PRIVATE-TOKEN", self.token)
        url = path if path.startswith(("http://", "https://")) else self.prefix + path
        response = self.client.request(method, url, headers=headers, **kwargs)
        response_schemas().check(response)
        return response

    def get(self, path: str, **kwargs) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs) -> httpx.Response:
        return self.request("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)


class ResponseSchemas:
    """Checks every successful JSON answer against the schema its route declares in the OpenAPI
    document (api/schemas.py), so the whole suite checks the documented shapes."""

    def __init__(self):
        from codeyard.app import build_router

        self.router = build_router()
        self.components: dict[str, dict] = {}
        self.validators: dict[int, object] = {}

    def check(self, response: httpx.Response) -> None:
        if not 200 <= response.status_code < 300 or not response.headers.get("content-type", "").startswith("application/json"):
            return
        request = response.request
        if request.method == "HEAD":
            return
        match = self.router.match(request.method, request.url.raw_path.decode("latin-1").split("?", 1)[0])
        if match is None or match.route is None:
            return
        validator = self._validator(match.route)
        if validator is not None:
            try:
                validator.validate(response.json())
            except jsonschema_rs.ValidationError as error:
                raise AssertionError(f"{request.method} {request.url.path}: the answer does not match its schema: {error}") from None

    def _validator(self, route):
        from codeyard.api.schemas import response_schema

        if id(route) not in self.validators:
            schema = response_schema(route, self.components)
            document = None if schema is None else {**schema, "components": {"schemas": dict(self.components)}}
            self.validators[id(route)] = None if document is None else jsonschema_rs.validator_for(document)
        return self.validators[id(route)]


_RESPONSE_SCHEMAS: list[ResponseSchemas] = []


def response_schemas() -> ResponseSchemas:
    if not _RESPONSE_SCHEMAS:
        _RESPONSE_SCHEMAS.append(ResponseSchemas())
    return _RESPONSE_SCHEMAS[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """`python -m codeyard serve` on a free loopback port, sharing the tests' database and data dir."""

    def __init__(self, config: config_module.Config, log_dir: Path):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.config = config.with_overrides(port=self.port, base_url=self.base_url, host="127.0.0.1")
        self.log_path = log_dir / "server.log"
        self.process: subprocess.Popen | None = None
        self.http = httpx.Client(base_url=self.base_url, timeout=30)

    @property
    def api(self) -> ApiClient:
        return ApiClient(self.http)

    def env(self) -> dict[str, str]:
        # No embedded job worker: tests run jobs themselves (tests/jobs), so that none is taken
        # by a server they do not watch.
        return {**os.environ, **config_module.to_env(self.config), "CODEYARD_LOG_LEVEL": "warning", "CODEYARD_WORKER": "0"}

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "codeyard", "serve", "--host", "127.0.0.1", "--port", str(self.port),
             "--data-dir", str(self.config.data_dir)],
            env=self.env(), stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while True:
            self.check_alive()
            try:
                if self.http.get("/-/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"live server did not start; log:\n{self.log()}")
            time.sleep(0.1)

    def check_alive(self) -> None:
        if self.process is None or self.process.poll() is not None:
            raise RuntimeError(f"live server is not running; log:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        self.http.close()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()


# --- roles on one project, counted queries (members, hooks, uploads) ------------------------------

ROLES = ("anonymous", "outsider", "guest", "reporter", "developer", "master", "owner", "admin")
ROLE_LEVELS = {"guest": 10, "reporter": 20, "developer": 30, "master": 40}


@dataclass(frozen=True)
class Team:
    """A project with one user per role: outsider (signed in, not a member), guest..master (direct
    members), owner (the namespace owner), admin; `anonymous` is None."""

    project: TestProject
    people: dict

    __test__ = False

    def user(self, role: str) -> TestUser | None:
        return self.people.get(role)


def make_team(users: UserFactory, projects: ProjectFactory, admin: TestUser, visibility: int = 0, prefix: str = "") -> Team:
    owner = users.create(f"{prefix}owner")
    project = projects.create(owner, visibility=visibility)
    people = {"owner": owner, "admin": admin, "outsider": users.create(f"{prefix}outsider")}
    for role, level in ROLE_LEVELS.items():
        people[role] = users.create(f"{prefix}{role}")
        projects.add_member(project, people[role], level)
    return Team(project, people)


def _is_token_lookup(statement: str) -> bool:
    return "FROM users JOIN tokens" in statement


class QueryCounter:
    """Counts the SQL statements sent through the runtime's engine while active (a context manager);
    `fast` holds those of the fast path (`Database.fast_first` / `fast_all`), which bypasses it."""

    def __init__(self, rt: Runtime):
        self.db = rt.db
        self.engine = rt.db.engine
        self.statements: list[str] = []
        self.fast: list[str] = []

    def _record(self, _connection, _cursor, statement, _parameters, _context, _executemany) -> None:
        if not statement.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")):
            self.statements.append(statement)

    def __enter__(self) -> QueryCounter:
        sqlalchemy_event.listen(self.engine, "before_cursor_execute", self._record)
        self.db.fast_observers.append(self.fast.append)
        return self

    def __exit__(self, *_exc) -> None:
        sqlalchemy_event.remove(self.engine, "before_cursor_execute", self._record)
        self.db.fast_observers.remove(self.fast.append)

    @property
    def fast_reads(self) -> list[str]:
        """Fast-path statements but the presentation cache's settings read (made once a second) and
        the caller's lookup by token (kept between requests, `db/changes.py`: `token_reads`)."""
        return [s for s in self.fast if "application_settings" not in s and not _is_token_lookup(s)]

    @property
    def token_reads(self) -> int:
        """How many times a caller was looked up by token on the fast path."""
        return sum(_is_token_lookup(statement) for statement in self.fast)

    @property
    def count(self) -> int:
        return len(self.statements)


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Author",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Cy Committer",
    "GIT_COMMITTER_EMAIL": "cy@example.com",
}


class WorkingCopy:
    """A working clone of a project's bare repository on disk, for building repository contents
    in tests without the HTTP transport (pushes go straight to the bare repository's path)."""

    _dates = itertools.count(0)

    def __init__(self, rt: Runtime, project: TestProject, root: Path):
        from codeyard.git import storage

        self.bare = storage.repository_path(rt.config.repositories_dir, project.id)
        self.path = root
        home = root.parent / f"{root.name}-home"
        home.mkdir(parents=True, exist_ok=True)
        self.env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_IDENTITY,
                    "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}  # fmt: skip
        subprocess.run(["git", "init", "-q", "-b", "master", str(root)], env=self.env, check=True)
        self.git("remote", "add", "origin", str(self.bare))

    def git(self, *args: str) -> str:
        result = subprocess.run(["git", *args], cwd=self.path, env=self.env, capture_output=True, text=True)
        if result.returncode != 0:
            raise AssertionError(f"git {' '.join(args)}: {result.stderr}")
        return result.stdout.strip()

    def commit(self, message: str, files: dict[str, str] | None = None, remove: tuple[str, ...] = ()) -> str:
        """Commit FILES (path -> content) and removals with a distinct, fixed date; returns the SHA."""
        for name, content in (files or {f"file{next(self._dates)}.txt": message}).items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            self.git("add", name)
        for name in remove:
            self.git("rm", "-q", name)
        # Later commits are later whatever ran before in this process (minutes from the count, no wrap).
        when = f"{1451916706 + 60 * next(self._dates)} +0100"
        env_date = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        result = subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", message], cwd=self.path,
                                env={**self.env, **env_date}, capture_output=True, text=True)  # fmt: skip
        assert result.returncode == 0, result.stderr
        return self.git("rev-parse", "HEAD")

    def push(self, *refspecs: str) -> None:
        self.git("push", "-q", "origin", *(refspecs or ("master",)))


def record_push(rt: Runtime, project: TestProject, user: TestUser, *updates: tuple[str, str, str]) -> None:
    """What the git transport does after a push (events, default branch, pipelines, hooks) for
    UPDATES, (ref, before, after) each, that a WorkingCopy pushed straight to the repository."""
    with rt.db.transaction() as session:
        pushes.post_push(session, rt, session.get(Project, project.id), session.get(User, user.id),
                         [pushes.RefUpdate(*update) for update in updates])  # fmt: skip
