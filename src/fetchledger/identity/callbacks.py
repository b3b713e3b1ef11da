"""URL values secret by their name *and* their shape (DESIGN §8), for
:mod:`fetchledger.identity.secrets`.

OAuth and SSO callbacks and single-use links carry their credential under names that
are also ordinary words (`?code=`, `?ticket=`, `?hash=`, `/token/V`, `/reset/V`): such
a value is secret when it looks like a token (16 characters or more of a token's
alphabet whose character classes change often — random, not a word, a number or a
slug — or a UUID), when the query carries OAuth companions (`redirect_uri=`,
`client_id=`, `session_state=`, `code_challenge=`, a `state=` of 6 characters or
more: then 4 characters are enough), or, for a ticket, by the CAS prefix (`ST-…`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["is_callback_name", "oauth_companions", "plain_name", "secret_value", "token_like"]

_NOT_NAME = re.compile(r"[\W_]+")  # what is not a letter or digit, in any script
_CALLBACK_NAMES = ("code", "ticket", "nonce", "pat", "hash", "verifier", "otc")
_OAUTH_COMPANIONS = frozenset({"redirecturi", "clientid", "sessionstate", "codechallenge"})
_CAS_TICKET = re.compile(r"(?:ST|PT|PGT|PGTIOU|TGT)-[\w.-]{6,}")
_TOKEN_ALPHABET = re.compile(r"[A-Za-z0-9._~+/=-]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CLASS_CHANGE = re.compile(r"(?<=[a-z])[A-Z0-9]|(?<=[A-Z])[a-z0-9]|(?<=[0-9])[A-Za-z]")
_ALNUM_PAIR = re.compile(r"(?<=[A-Za-z0-9])[A-Za-z0-9]")
_HEX_WORD = re.compile(r"0[xX][0-9a-fA-F]+")  # an Ethereum address or hash: public


def token_like(value: str) -> bool:
    """True for a value that looks like a random token rather than a word, a number or
    a slug: 16 characters or more of a token's alphabet (letters, digits, ``._~+/=-``)
    whose character classes (lower, upper, digit) change at 30% or more of its adjacent
    letter-or-digit pairs (``4f0AX4XfWh7Kq9ZtR2mB``, a hex digest; not
    ``how-to-reset-2024`` or ``PythonTutorialForBeginners2024``), or a UUID. Looks at
    the first 512 characters."""
    head = value[:512]
    if len(head) < 16 or not _TOKEN_ALPHABET.fullmatch(head) or _HEX_WORD.fullmatch(head):
        return False
    if len(head) == 36 and _UUID.fullmatch(head):
        return True
    changes = len(_CLASS_CHANGE.findall(head))
    return changes >= 4 and changes >= 0.3 * len(_ALNUM_PAIR.findall(head))


def plain_name(name: str) -> str:
    """A name lowercased, every character that is not a letter or digit dropped."""
    lowered = name.lower()
    return lowered if lowered.isascii() and lowered.isalnum() else _NOT_NAME.sub("", lowered)


def is_callback_name(name: str) -> bool:
    """A name under which OAuth/SSO callbacks and single-use links put a credential,
    also an ordinary word (``code``, ``ticket``, ``nonce``, ``pat``, ``hash``,
    ``verifier``, ``otc``, and names ending in one: ``verification_code``)."""
    return plain_name(name).endswith(_CALLBACK_NAMES)


def oauth_companions(names: Iterable[tuple[str, str]]) -> bool:
    """Whether a query's ``(name, value)`` pairs hold an OAuth companion parameter: then
    its callback-named values are secret however short (see :func:`secret_value`)."""
    for name, value in names:
        plain = plain_name(name)
        if plain in _OAUTH_COMPANIONS or (plain == "state" and len(value) >= 6):
            return True
    return False


def secret_value(name: str, value: str, companions: bool = False) -> bool:
    """Whether ``value`` (decoded) under the plain ``name`` is a credential all the same:
    a callback name (:func:`is_callback_name`) with a token-like value, a CAS ticket, or
    any value of 4 characters or more beside OAuth ``companions``."""
    if not value or not is_callback_name(name):
        return False
    if companions and len(value) >= 4:
        return True
    return token_like(value) or (plain_name(name).endswith("ticket")
                                 and _CAS_TICKET.match(value) is not None)


