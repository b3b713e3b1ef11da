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
from functools import lru_cache

__all__ = ["LINK_WORDS", "is_callback_name", "oauth_companions", "plain_name", "secret_value",
           "token_like"]

_NOT_NAME = re.compile(r"[\W_]+")  # what is not a letter or digit, in any script
_CALLBACK_NAMES = ("code", "ticket", "nonce", "pat", "hash", "verifier", "otc", "samlart",
                   "artifact")
# The words of single-use links (a password reset, an e-mail confirmation, an
# invitation, a magic login link): as a query name or the path segment before a token
LINK_WORDS = re.compile("reset|verif|confirm|activat|invit|magic|unsubscrib|onetime|otp"
                        "|ticket|login|signin")
_OAUTH_COMPANIONS = frozenset({"redirecturi", "clientid", "sessionstate", "codechallenge"})
_CAS_TICKET = re.compile(r"(?:ST|PT|PGT|PGTIOU|TGT)-[\w.-]{6,}")
_TOKEN_ALPHABET = re.compile(r"[A-Za-z0-9._~+/=-]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CLASS_CHANGE = re.compile(r"(?<=[a-z])[A-Z0-9]|(?<=[A-Z])[a-z0-9]|(?<=[0-9])[A-Za-z]")
_ALNUM_PAIR = re.compile(r"(?<=[A-Za-z0-9])[A-Za-z0-9]")
_LOWER_RUN = re.compile(r"[a-z]+")
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_HEX_WORD = re.compile(r"0[xX][0-9a-fA-F]+")  # an Ethereum address or hash: public


def token_like(value: str) -> bool:
    """True for a value that looks like a random token rather than a word, a number or
    a slug: 16 characters or more of a token's alphabet (letters, digits, ``._~+/=-``)
    whose character classes (lower, upper, digit) change at 30% or more of its adjacent
    letter-or-digit pairs and whose runs of lower-case letters are under 3 long on
    average (``4f0AX4XfWh7Kq9ZtR2mB``; not ``how-to-reset-2024``,
    ``PythonTutorialForBeginners2024`` or ``ThisIsAPlainTitle``: words), a UUID, or
    hex digits with both digits and letters (a digest).
    Looks at the first 512 characters."""
    head = value[:512]
    if len(head) < 16 or not _TOKEN_ALPHABET.fullmatch(head) or _HEX_WORD.fullmatch(head):
        return False
    if (len(head) == 36 and _UUID.fullmatch(head)) or (
            _HEX.fullmatch(head) and not head.isdigit() and not head.isalpha()):
        return True  # a UUID, a hex digest or id: digits and letters a-f
    changes = len(_CLASS_CHANGE.findall(head))
    if changes < 4 or changes < 0.3 * len(_ALNUM_PAIR.findall(head)):
        return False
    lower = _LOWER_RUN.findall(head)  # words (CamelCase too) hold runs of 3 or more
    return not lower or sum(map(len, lower)) < 3 * len(lower)


def plain_name(name: str) -> str:
    """A name lowercased, every character that is not a letter or digit dropped."""
    lowered = name.lower()
    return lowered if lowered.isascii() and lowered.isalnum() else _NOT_NAME.sub("", lowered)


@lru_cache(maxsize=4096)  # the same few names again and again in a long query
def is_callback_name(name: str) -> bool:
    """A name under which OAuth/SSO callbacks and single-use links put a credential,
    also an ordinary word (``code``, ``ticket``, ``nonce``, ``pat``, ``hash``,
    ``verifier``, ``otc``, SAML's ``SAMLart``, and names ending in one:
    ``verification_code``), or holding a single-use link's word (:data:`LINK_WORDS`:
    ``?reset=``, ``?invite=``, ``?confirm=``, ``?activation=``)."""
    plain = plain_name(name)
    return plain.endswith(_CALLBACK_NAMES) or LINK_WORDS.search(plain) is not None


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


