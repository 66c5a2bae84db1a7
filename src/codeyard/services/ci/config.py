""".gitlab-ci.yml: parsed and checked as GitLab 8.6's GitlabCiYamlProcessor did (reference 12.5).

`parse(text)` gives a `CiConfig` (stages, jobs) or raises `ConfigError` with GitLab's message;
`CiConfig.jobs_for(ref, tag, project_path)` picks the jobs whose `only`/`except` let the ref through.
A job comes out as the dict a build is made of (pipelines.create_build): name, stage, stage_idx,
commands, options, variables, tags, when, allow_failure.

Bounded before anything is built: the file is at most MAX_BYTES (it is parsed inside the push's
transaction); libyaml's event stream is walked first and a file nesting collections deeper than
MAX_DEPTH is refused there (libyaml parses iteratively but composes nodes by recursion in C: some
30,000 levels, 80 KB of `[`, overflowed the stack and killed the process); then the YAML is composed
with the safe loader and its node graph measured with every alias expanded (at most MAX_NODES nodes
and MAX_EXPANDED characters of scalars, MAX_DEPTH levels, no alias cycles) before it is constructed,
so an alias bomb is refused after reading a few kilobytes. `/regex/` patterns of only/except run
on RE2 (regexes.py). At most MAX_JOBS jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from . import regexes

MAX_BYTES = 128 * 1024
MAX_NODES = 50_000
MAX_EXPANDED = 2 * 1024 * 1024
MAX_DEPTH = 64
MAX_JOBS = 500

DEFAULT_STAGES = ["build", "test", "deploy"]
DEFAULT_STAGE = "test"
GLOBAL_KEYS = ("before_script", "after_script", "image", "services", "types", "stages", "variables", "cache")
JOB_KEYS = ("tags", "script", "only", "except", "type", "image", "services", "allow_failure", "stage", "when",
            "artifacts", "cache", "dependencies")  # fmt: skip
CACHE_KEYS = ("key", "untracked", "paths")
ARTIFACTS_KEYS = ("name", "untracked", "paths")
WHEN = ("on_success", "on_failure", "always")


# libyaml's parser when PyYAML has it (several times faster), with the safe constructor either way.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ConfigError(Exception):
    """The file is refused; the message is what the pipeline records as its yaml_errors."""


@dataclass(frozen=True)
class CiConfig:
    stages: list[str]
    jobs: list[dict]  # in file order, each with its `only` and `except` patterns

    def jobs_for(self, ref: str, tag: bool, project_path: str) -> list[dict]:
        """The jobs to build for REF (a branch or tag name) of the project at PROJECT_PATH."""
        chosen = []
        for job in self.jobs:
            if job["only"] and not matches(job["only"], ref, tag, project_path):
                continue
            if job["except"] and matches(job["except"], ref, tag, project_path):
                continue
            chosen.append({key: value for key, value in job.items() if key not in ("only", "except")})
        return chosen


def matches(patterns: list[str], ref: str, tag: bool, project_path: str) -> bool:
    return any(match_ref(pattern, ref, tag, project_path) for pattern in patterns)


def match_ref(pattern: str, ref: str, tag: bool, project_path: str) -> bool:
    """One only/except pattern: `branches`, `tags`, `triggers`, `/regex/` or a ref name, each
    optionally followed by `@namespace/project` (then only in that project)."""
    pattern, at, path = pattern.partition("@")
    if at and path != project_path:
        return False
    if pattern == "tags":
        return tag
    if pattern == "branches":
        return not tag
    if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
        return regexes.search(pattern[1:-1], ref)
    return pattern == ref  # `triggers` never matches: codeyard has no triggers


# --- loading ----------------------------------------------------------------------------------------


def load(text: str | bytes):
    """The YAML document, bounded (see the module's notes)."""
    if len(text.encode() if isinstance(text, str) else text) > MAX_BYTES:
        raise ConfigError(f"The file is too large (at most {MAX_BYTES // 1024} KiB)")
    loader = LOADER(text)
    try:
        _check_nesting(text)
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        raise ConfigError(_yaml_message(error)) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"(<unknown>): {error}") from None
    except RecursionError:
        raise ConfigError(f"The file is nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


_OPENS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_CLOSES = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _check_nesting(text: str | bytes) -> None:
    """Refuse a collection inside more than MAX_DEPTH others, from the parser's events alone (no
    recursion: libyaml's composer would recurse once per level in C, unguarded)."""
    enclosing = 0
    for event in yaml.parse(text, Loader=LOADER):
        if isinstance(event, _OPENS):
            if enclosing > MAX_DEPTH:
                raise ConfigError(f"The file is nested deeper than {MAX_DEPTH} levels")
            enclosing += 1
        elif isinstance(event, _CLOSES):
            enclosing -= 1


def _yaml_message(error: yaml.MarkedYAMLError) -> str:
    """Psych's wording: `(<unknown>): <problem> <context> at line L column C`."""
    mark = error.problem_mark or error.context_mark
    where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
    parts = [part for part in (error.problem, error.context) if part]
    return f"(<unknown>): {' '.join(parts)}{where}"


def _measure(root: yaml.Node) -> None:
    """Refuse a node graph too big once its aliases (shared nodes) are expanded, or cyclic."""
    sizes: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node, depth: int) -> tuple[int, int]:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise ConfigError("The file refers to itself through an alias")
        if depth > MAX_DEPTH:
            raise ConfigError(f"The file is nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, yaml.ScalarNode):
            result = (1, len(node.value) + 1)
        else:
            open_nodes.add(key)
            children = node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]
            nodes, chars = 1, 0
            for child in children:
                child_nodes, child_chars = size(child, depth + 1)
                nodes, chars = nodes + child_nodes, chars + child_chars
                if nodes > MAX_NODES or chars > MAX_EXPANDED:
                    raise ConfigError("The file is too large once its aliases are expanded")
            open_nodes.discard(key)
            result = (nodes, chars)
        sizes[key] = result
        return result

    size(root, 0)


# --- checking ----------------------------------------------------------------------------------------


def parse(text: str | bytes) -> CiConfig:
    document = load(text)
    if not isinstance(document, dict):
        raise ConfigError("YAML should be a hash")
    document = {_name(key): value for key, value in document.items()}
    stages = document.get("stages") if _present(document.get("stages")) else document.get("types")
    globals_ = {
        "before_script": document.get("before_script") if _present(document.get("before_script")) else [],
        "after_script": document.get("after_script"),
        "image": document.get("image"),
        "services": document.get("services"),
        "stages": stages,
        "variables": document.get("variables") if _present(document.get("variables")) else {},
        "cache": document.get("cache"),
    }
    definitions = {name: value for name, value in document.items() if name not in GLOBAL_KEYS}
    for name, value in definitions.items():
        if _hidden(name):
            continue
        if not isinstance(value, dict) or "script" not in value:
            raise ConfigError(f"Unknown parameter: {name}")
    jobs = {name: _with_stage(value) for name, value in definitions.items() if not _hidden(name)}
    if not jobs:
        raise ConfigError("Please define at least one job")
    if len(jobs) > MAX_JOBS:
        raise ConfigError(f"Too many jobs (at most {MAX_JOBS})")
    _check_globals(globals_)
    stages = list(globals_["stages"]) if _present(globals_["stages"]) else list(DEFAULT_STAGES)
    for name, job in jobs.items():
        _check_job(name, job, stages, jobs)
    return CiConfig(stages, [_build_job(name, job, stages, globals_) for name, job in jobs.items()])


def _name(key) -> str:
    if isinstance(key, str) and key.strip():
        return key
    raise ConfigError("job name should be non-empty string")


def _with_stage(job: dict) -> dict:
    """A copy of JOB (aliases share mappings) with its stage: `stage`, else `type`, else test."""
    stage = job.get("stage") if _present(job.get("stage")) else job.get("type")
    return {**job, "stage": stage if _present(stage) else DEFAULT_STAGE}


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _present(value) -> bool:
    """Ruby's truth: only nil and false are false."""
    return value is not None and value is not False


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _check_globals(globals_: dict) -> None:
    if not _strings(globals_["before_script"]):
        raise ConfigError("before_script should be an array of strings")
    if globals_["after_script"] is not None and not _strings(globals_["after_script"]):
        raise ConfigError("after_script should be an array of strings")
    if globals_["image"] is not None and not isinstance(globals_["image"], str):
        raise ConfigError("image should be a string")
    if globals_["services"] is not None and not _strings(globals_["services"]):
        raise ConfigError("services should be an array of strings")
    if globals_["stages"] is not None and not _strings(globals_["stages"]):
        raise ConfigError("stages should be an array of strings")
    variables = globals_["variables"]
    if not (isinstance(variables, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in variables.items())):
        raise ConfigError("variables should be a map of key-valued strings")
    if _present(globals_["cache"]):
        _check_cache("", globals_["cache"])


def _check_cache(prefix: str, cache) -> None:
    if not isinstance(cache, dict):
        raise ConfigError(f"{prefix}cache should be a hash")
    if _present(cache.get("key")) and not isinstance(cache["key"], str):
        raise ConfigError(f"{prefix}cache:key parameter should be a string")
    if _present(cache.get("untracked")) and cache["untracked"] is not True:
        raise ConfigError(f"{prefix}cache:untracked parameter should be an boolean")
    if _present(cache.get("paths")) and not _strings(cache["paths"]):
        raise ConfigError(f"{prefix}cache:paths parameter should be an array of strings")


def _check_job(name: str, job: dict, stages: list[str], jobs: dict) -> None:
    for key in job:
        if key not in JOB_KEYS:
            raise ConfigError(f"{name} job: unknown parameter {key}")
    script = job["script"]
    if not isinstance(script, str) and not _strings(script):
        raise ConfigError(f"{name} job: script should be a string or an array of a strings")
    if _present(job.get("image")) and not isinstance(job["image"], str):
        raise ConfigError(f"{name} job: image should be a string")
    for key, what in (("services", "services should"), ("tags", "tags parameter should"),
                      ("only", "only parameter should"), ("except", "except parameter should")):  # fmt: skip
        if _present(job.get(key)) and not _strings(job[key]):
            raise ConfigError(f"{name} job: {what} be an array of strings")
    if _present(job.get("allow_failure")) and job["allow_failure"] is not True:
        raise ConfigError(f"{name} job: allow_failure parameter should be an boolean")
    if _present(job.get("when")) and job["when"] not in WHEN:
        raise ConfigError(f"{name} job: when parameter should be on_success, on_failure or always")
    if not isinstance(job["stage"], str) or job["stage"] not in stages:
        raise ConfigError(f"{name} job: stage parameter should be {', '.join(stages)}")
    if _present(job.get("cache")):
        _check_cache(f"{name} job: ", job["cache"])
    if _present(job.get("artifacts")):
        _check_artifacts(name, job["artifacts"])
    if _present(job.get("dependencies")):
        _check_dependencies(name, job, stages, jobs)


def _check_artifacts(name: str, artifacts) -> None:
    if not isinstance(artifacts, dict):
        raise ConfigError(f"{name} job: artifacts should be a hash")
    if _present(artifacts.get("name")) and not isinstance(artifacts["name"], str):
        raise ConfigError(f"{name} job: artifacts:name parameter should be a string")
    if _present(artifacts.get("untracked")) and artifacts["untracked"] is not True:
        raise ConfigError(f"{name} job: artifacts:untracked parameter should be an boolean")
    if _present(artifacts.get("paths")) and not _strings(artifacts["paths"]):
        raise ConfigError(f"{name} job: artifacts:paths parameter should be an array of strings")


def _check_dependencies(name: str, job: dict, stages: list[str], jobs: dict) -> None:
    if not _strings(job["dependencies"]):
        raise ConfigError(f"{name} job: dependencies parameter should be an array of strings")
    own = stages.index(job["stage"])
    for dependency in job["dependencies"]:
        if dependency not in jobs:
            raise ConfigError(f"{name} job: undefined dependency: {dependency}")
        if stages.index(jobs[dependency]["stage"]) >= own:
            raise ConfigError(f"{name} job: dependency {dependency} is not defined in prior stages")


def _known(value: dict, keys: tuple[str, ...]) -> dict:
    return {key: value[key] for key in keys if key in value and value[key] is not None}


def _build_job(name: str, job: dict, stages: list[str], globals_: dict) -> dict:
    script = job["script"] if isinstance(job["script"], list) else [job["script"]]
    cache = job.get("cache") if _present(job.get("cache")) else globals_["cache"]
    options = {
        "image": job.get("image") if _present(job.get("image")) else globals_["image"],
        "services": job.get("services") if _present(job.get("services")) else globals_["services"],
        "artifacts": _known(job["artifacts"], ARTIFACTS_KEYS) if _present(job.get("artifacts")) else None,
        "cache": _known(cache, CACHE_KEYS) if _present(cache) else None,
        "dependencies": job.get("dependencies") if _present(job.get("dependencies")) else None,
        "after_script": globals_["after_script"],
    }
    return {
        "name": name,
        "stage": job["stage"],
        "stage_idx": stages.index(job["stage"]),
        # GitLab 8.6: the before_script's lines, a newline, the script's (a newline first without one).
        "commands": "\n".join(globals_["before_script"]) + "\n" + "\n".join(script),
        "options": {key: value for key, value in options.items() if value is not None},
        "variables": [{"key": k, "value": v, "public": True} for k, v in globals_["variables"].items()],
        "tags": list(job.get("tags") or []),
        "when": job.get("when") or "on_success",
        "allow_failure": job.get("allow_failure") is True,
        "only": list(job.get("only") or []),
        "except": list(job.get("except") or []),
    }
