"""The codeyard runner: takes builds from a codeyard server and runs their commands on this host.

It talks to the server only over HTTP (the runner protocol under /ci/api/v1) and imports nothing
else of codeyard, so it can run on any machine with Python, git and bash. Shell executor only: a
build's commands run as the runner's user, in a fresh directory, with no isolation beyond that.

- config.py: the configuration file (server URL and the runner's token), written 0600.
- client.py: the HTTP calls of the runner protocol.
- trace.py: a build's log, bounded in memory, with the build token masked.
- shell.py: the bash script and environment of a build.
- process.py: running a command in its own process group, with a deadline and an abort.
- archive.py: artifacts zipped from path globs, and safely unzipped.
- build.py: one build from clone to report; trace streaming and cancel detection.
- service.py: `register` and the polling loop of `run`.
"""

VERSION = "0.1.0"
