"""Secrets: token generation and password hashing."""

from __future__ import annotations

from codeyard.services import credentials


def test_new_secrets_are_random_alphanumeric():
    secrets = {credentials.new_secret() for _ in range(100)}
    assert len(secrets) == 100
    assert all(len(s) == 20 and s.isalnum() for s in secrets)


def test_every_character_of_a_secret_ranges_over_the_whole_alphabet():
    secrets = [credentials.new_secret() for _ in range(3000)]
    for position in range(20):
        assert {s[position] for s in secrets} == set(credentials.TOKEN_ALPHABET)


def test_derived_secrets_are_what_they_were():
    # The digests of tokens derived before are stored: the spelling must never change.
    assert credentials.derived_secret(b"k" * 32, "runners-token:1") == "bMbnrFxfbCoiHdoh2XrT"


def test_password_hasher_with_production_cost():
    hasher = credentials.PasswordHasher()
    digest = hasher.hash("correct horse")
    assert digest.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert hasher.verify(digest, "correct horse")
    assert not hasher.verify(digest, "wrong horse")
    assert not hasher.verify(None, "anything")
    assert not hasher.verify("not-a-hash", "anything")
    assert not hasher.needs_rehash(digest)
    assert credentials.PasswordHasher(time_cost=1, memory_kib=1024, parallelism=1).needs_rehash(digest)
