"""How git names things: ref namespaces, the null SHA, the branch a new repository starts on.

No imports: policies and models read these too, without loading pygit2.
"""

HEADS = "refs/heads/"
TAGS = "refs/tags/"
ZERO_SHA = "0" * 40  # the "before" of a created ref, the "after" of a deleted one
INITIAL_BRANCH = "master"  # what the HEAD of a new repository names
