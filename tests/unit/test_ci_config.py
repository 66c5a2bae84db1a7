"""The .gitlab-ci.yml rules of GitLab 8.6 (reference 12.5), one test per rule and message."""

from __future__ import annotations

import time

import pytest

from codeyard.services.ci import config
from codeyard.services.ci.config import ConfigError, parse


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(text)
    return str(caught.value)


def test_a_full_file():
    found = parse(
        """
image: ruby:2.1
services: [postgres]
before_script: ["bundle install"]
after_script: ["echo done"]
stages: [build, test, deploy]
variables: {DATABASE_URL: "postgres://db", RAILS_ENV: test}
cache: {key: k, paths: [vendor/]}
compile:
  stage: build
  script: make
  tags: [docker]
rspec:
  script: ["rspec", "rubocop"]
  image: ruby:2.3
  allow_failure: true
  artifacts: {name: out, paths: [coverage/], untracked: true}
  dependencies: [compile]
deploy:
  stage: deploy
  script: cap deploy
  when: on_failure
  cache: {paths: [tmp/]}
  services: [redis]
  only: [master]
"""
    )
    assert found.stages == ["build", "test", "deploy"]
    assert [j["name"] for j in found.jobs] == ["compile", "rspec", "deploy"]
    compile_, rspec, deploy = found.jobs
    assert compile_ == {
        "name": "compile", "stage": "build", "stage_idx": 0, "commands": "bundle install\nmake",
        "options": {"image": "ruby:2.1", "services": ["postgres"], "cache": {"key": "k", "paths": ["vendor/"]},
                    "after_script": ["echo done"]},
        "variables": [{"key": "DATABASE_URL", "value": "postgres://db", "public": True},
                      {"key": "RAILS_ENV", "value": "test", "public": True}],
        "tags": ["docker"], "when": "on_success", "allow_failure": False, "only": [], "except": [],
    }  # fmt: skip
    assert rspec["stage"] == "test" and rspec["stage_idx"] == 1
    assert rspec["commands"] == "bundle install\nrspec\nrubocop"
    assert rspec["allow_failure"] is True
    assert rspec["options"]["image"] == "ruby:2.3"
    assert rspec["options"]["artifacts"] == {"name": "out", "untracked": True, "paths": ["coverage/"]}
    assert rspec["options"]["dependencies"] == ["compile"]
    assert deploy["when"] == "on_failure" and deploy["stage_idx"] == 2
    assert deploy["options"]["cache"] == {"paths": ["tmp/"]} and deploy["options"]["services"] == ["redis"]


def test_defaults():
    (job,) = parse("rspec:\n  script: rspec\n").jobs
    assert parse("rspec:\n  script: rspec\n").stages == ["build", "test", "deploy"]
    assert (job["stage"], job["stage_idx"], job["commands"], job["options"], job["variables"], job["when"]) == (
        "test", 1, "\nrspec", {}, [], "on_success"
    )


@pytest.mark.parametrize(
    "text, commands",
    [
        ("before_script: [bundle, make]\nj:\n  script: rspec\n", "bundle\nmake\nrspec"),
        ("before_script: [bundle]\nj:\n  script: [rspec, rubocop]\n", "bundle\nrspec\nrubocop"),
        ("j:\n  script: rspec\n", "\nrspec"),
        ("before_script: []\nj:\n  script: [rspec, rubocop]\n", "\nrspec\nrubocop"),
        ("before_script:\nj:\n  script: rspec\n", "\nrspec"),
    ],
)
def test_commands_are_the_before_script_a_newline_then_the_script(text, commands):
    """GitLab 8.6: `"#{@before_script.join("\n")}\n#{script}"`: with no before_script the runner
    gets a newline first."""
    assert parse(text).jobs[0]["commands"] == commands


def test_types_is_an_alias_of_stages_and_type_of_stage():
    found = parse("types: [one, two]\njob:\n  type: two\n  script: x\n")
    assert found.stages == ["one", "two"]
    assert found.jobs[0]["stage"] == "two" and found.jobs[0]["stage_idx"] == 1


def test_hidden_jobs_are_ignored_and_serve_as_templates():
    found = parse(
        ".template: &t\n  image: busybox\n  tags: [x]\njob:\n  <<: *t\n  script: echo\n.other: 5\n"
    )
    assert [j["name"] for j in found.jobs] == ["job"]
    assert found.jobs[0]["options"] == {"image": "busybox"} and found.jobs[0]["tags"] == ["x"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "YAML should be a hash"),
        ("- a\n- b\n", "YAML should be a hash"),
        ("just text", "YAML should be a hash"),
        ("image: ruby\n", "Please define at least one job"),
        (".hidden:\n  script: x\n", "Please define at least one job"),
        ("job: 5\n", "Unknown parameter: job"),
        ("job:\n  image: ruby\n", "Unknown parameter: job"),
        ("1:\n  script: x\n", "job name should be non-empty string"),
        ("before_script: echo\njob:\n  script: x\n", "before_script should be an array of strings"),
        ("after_script: [1]\njob:\n  script: x\n", "after_script should be an array of strings"),
        ("image: [a]\njob:\n  script: x\n", "image should be a string"),
        ("services: redis\njob:\n  script: x\n", "services should be an array of strings"),
        ("stages: build\njob:\n  script: x\n", "stages should be an array of strings"),
        ("variables: [a]\njob:\n  script: x\n", "variables should be a map of key-valued strings"),
        ("variables: {A: 1}\njob:\n  script: x\n", "variables should be a map of key-valued strings"),
        ("cache: {key: [a]}\njob:\n  script: x\n", "cache:key parameter should be a string"),
        ("cache: {untracked: 1}\njob:\n  script: x\n", "cache:untracked parameter should be an boolean"),
        ("cache: {paths: a}\njob:\n  script: x\n", "cache:paths parameter should be an array of strings"),
        ("cache: a\njob:\n  script: x\n", "cache should be a hash"),
        ("job:\n  script: x\n  before_script: [a]\n", "job job: unknown parameter before_script"),
        ("job:\n  script: x\n  variables: {}\n", "job job: unknown parameter variables"),
        ("job:\n  script: 5\n", "job job: script should be a string or an array of a strings"),
        ("job:\n  script:\n", "job job: script should be a string or an array of a strings"),
        ("job:\n  script: x\n  image: 5\n", "job job: image should be a string"),
        ("job:\n  script: x\n  services: a\n", "job job: services should be an array of strings"),
        ("job:\n  script: x\n  tags: a\n", "job job: tags parameter should be an array of strings"),
        ("job:\n  script: x\n  only: master\n", "job job: only parameter should be an array of strings"),
        ("job:\n  script: x\n  except: [1]\n", "job job: except parameter should be an array of strings"),
        ("job:\n  script: x\n  allow_failure: 0\n", "job job: allow_failure parameter should be an boolean"),
        ("job:\n  script: x\n  when: later\n", "job job: when parameter should be on_success, on_failure or always"),
        ("job:\n  script: x\n  stage: nope\n", "job job: stage parameter should be build, test, deploy"),
        ("stages: [a]\njob:\n  script: x\n", "job job: stage parameter should be a"),
        ("job:\n  script: x\n  cache: {key: 1}\n", "job job: cache:key parameter should be a string"),
        ("job:\n  script: x\n  cache: {untracked: yes please}\n", "job job: cache:untracked parameter should be an boolean"),
        ("job:\n  script: x\n  cache: {paths: [1]}\n", "job job: cache:paths parameter should be an array of strings"),
        ("job:\n  script: x\n  artifacts: {name: [a]}\n", "job job: artifacts:name parameter should be a string"),
        ("job:\n  script: x\n  artifacts: {untracked: 2}\n", "job job: artifacts:untracked parameter should be an boolean"),
        ("job:\n  script: x\n  artifacts: {paths: a}\n", "job job: artifacts:paths parameter should be an array of strings"),
        ("job:\n  script: x\n  artifacts: [a]\n", "job job: artifacts should be a hash"),
        ("job:\n  script: x\n  dependencies: a\n", "job job: dependencies parameter should be an array of strings"),
        ("job:\n  script: x\n  dependencies: [ghost]\n", "job job: undefined dependency: ghost"),
        ("a:\n  script: x\nb:\n  script: x\n  dependencies: [a]\n", "b job: dependency a is not defined in prior stages"),
        ("b:\n  script: x\n  stage: build\n  dependencies: [a]\na:\n  script: x\n",
         "b job: dependency a is not defined in prior stages"),
        (".a:\n  script: x\n  stage: build\nb:\n  script: x\n  dependencies: [.a]\n", "b job: undefined dependency: .a"),
    ],
)
def test_messages(text, message):
    assert error_of(text) == message


def test_invalid_yaml_has_psychs_wording():
    message = error_of("job:\n  script: [a\n")
    assert message.startswith("(<unknown>): ") and "line" in message and "column" in message
    assert error_of("a: *undefined\n").startswith("(<unknown>): found undefined alias")


def test_a_large_file_is_refused_before_parsing():
    assert error_of("#" * (config.MAX_BYTES + 1)) == "The file is too large (at most 128 KiB)"


def test_an_alias_bomb_is_refused_quickly():
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        refs = ",".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append("job:\n  script: *a9")
    started = time.monotonic()
    assert error_of("\n".join(lines)) == "The file is too large once its aliases are expanded"
    assert time.monotonic() - started < 1


def test_a_long_string_repeated_through_aliases_is_refused():
    text = "s: &s " + "x" * 100_000 + "\nl: &l [" + ",".join(["*s"] * 50) + "]\njob:\n  script: *l\n"
    assert error_of(text) == "The file is too large once its aliases are expanded"


def test_a_self_referring_alias_is_refused():
    assert error_of("a: &a [*a]\njob:\n  script: x\n") == "The file refers to itself through an alias"


def test_deep_nesting_is_refused():
    text = "job:\n  script: x\n  tags: " + "[" * 200 + "]" * 200 + "\n"
    assert error_of(text) == f"The file is nested deeper than {config.MAX_DEPTH} levels"


def test_too_many_jobs():
    text = "".join(f"j{i}:\n  script: x\n" for i in range(config.MAX_JOBS + 1))
    assert error_of(text) == f"Too many jobs (at most {config.MAX_JOBS})"


def test_unsafe_tags_are_not_constructed():
    assert error_of("job: !!python/object/apply:os.system [echo hi]\n").startswith("(<unknown>): could not determine a constructor")


def test_only_and_except():
    found = parse(
        """
all: {script: x}
master_only: {script: x, only: [master]}
not_master: {script: x, except: [master]}
branches: {script: x, only: [branches]}
tags: {script: x, only: [tags]}
regex: {script: x, only: ["/^release-.*$/"]}
elsewhere: {script: x, only: ["master@other/project"]}
here: {script: x, only: ["master@group/app"]}
triggers: {script: x, only: [triggers]}
both: {script: x, only: [branches], except: ["/^wip/"]}
"""
    )

    def names(ref, tag):
        return [j["name"] for j in found.jobs_for(ref, tag, "group/app")]

    assert names("master", False) == ["all", "master_only", "branches", "here", "both"]
    assert names("feature", False) == ["all", "not_master", "branches", "both"]
    assert names("release-1", True) == ["all", "not_master", "tags", "regex"]
    assert names("wip-x", False) == ["all", "not_master", "branches"]
    assert "only" not in found.jobs_for("master", False, "group/app")[0]


def test_user_regexes_cannot_backtrack_for_long():
    found = parse('job:\n  script: x\n  only: ["/^(a+)+$/"]\n')
    started = time.monotonic()
    assert found.jobs_for("a" * 200 + "b", False, "g/p") == []
    assert time.monotonic() - started < 0.5


def test_a_regex_re2_refuses_matches_nothing():
    found = parse('job:\n  script: x\n  only: ["/(a)\\\\1/"]\n')
    assert found.jobs_for("aa", False, "g/p") == []
