"""Credentials that interpreter code (``python -c``, ``php -r``, ``perl -e``, ``ruby -e``,
``node -e``) passes by place or as a default, for :mod:`.fed_secrets` (DESIGN §8):

- by position to a common call: ``connect('h', 'u', 'PW')`` (MySQL drivers,
  ``DBI->connect``, ``new PDO``, ``mysqli_connect``, ``FTP``; after a port number,
  paramiko's ``connect('h', 22, 'u', 'PW')``), ``login('u', 'PW')``, ``auth=('u',
  'PW')``, ``HTTPBasicAuth('u', 'PW')``, also under another name (``B =
  HTTPBasicAuth; B('u', 'PW')``, ``import … as B``);
- as a default: ``${PW:-V}`` in shell, ``os.environ.get('API_TOKEN', 'V')``, ``or
  'V'``, ``|| 'V'``, ``?? 'V'``, an option's ``default='V'``.

Each finder appends the literal values to ``found``; every scan is linear (one regular
expression over the text and a few words after each hit).
"""

from __future__ import annotations

import re

from .secrets import is_secret_name

__all__ = ["call_aliases", "call_secrets", "default_secrets", "may_alias", "may_default"]


# --- credentials passed by position in code ---------------------------------------------

_CALL = re.compile(r"(?<![\w$])(connect|mysqli?_connect|mysqli|PDO|getConnection"
                   r"|FTP(?:_TLS)?(?:\.open|\.new)?|login|oci_p?connect|simple_bind(?:_s)?"
                   r"|bind_s|ftp_login|ldap_bind|ssh2_auth_password|imap_open"
                   r"|HTTP(?:Basic|Digest|Proxy)Auth|(?:Basic|Digest)Auth|basic_auth"
                   r"|digest_auth|auth[ \t]*=>?)[ \t]*\(")
_ARGUMENT = re.compile(r"""[ \t]*(?:[bru]?'([^'\\\n]*)'|[bru]?"([^"\\\n]*)"|([^,()'"\[\]{}\n=]*))"""
                       r"""[ \t]*([,)]?)""")
_NUMBER = re.compile(r"[0-9]+")
_MAX_ARGUMENTS = 5


def call_secrets(text: str, found: list[str]) -> None:
    """``connect(HOST, USER, 'PW')``, ``login(USER, 'PW')``, ``auth=(USER, 'PW')``: the
    password by its place, when it is a string literal."""
    for call in _CALL.finditer(text):
        _password_at(call.group(1), _arguments(text, call.end()), found)
    if may_alias(text):
        _aliased_call_secrets(text, found)


def _password_at(name: str, arguments: list[tuple[bool, str]], found: list[str]) -> None:
    """The password among the ``arguments`` of a call of ``name``, by its place: the
    third (after a host and a user, the fourth after a port too: ``connect``, JDBC's
    ``getConnection(URL, USER, PW)``, PHP's ``ftp_login($c, USER, PW)``, ``ldap_bind``,
    ``imap_open``, ``ssh2_auth_password``), else the second (``login(USER, PW)``,
    ``oci_connect(USER, PW, DB)``, LDAP's ``simple_bind_s(DN, PW)``); ``login(HOST,
    USER, PW)`` (pexpect's pxssh) the second and the third."""
    places = [1]
    if name.startswith(("connect", "mysql", "PDO", "FTP", "getConnection", "ftp_", "ldap_",
                        "ssh2_", "imap_")):
        places = [3 if len(arguments) > 3 and _NUMBER.fullmatch(arguments[1][1]) else 2]
    elif name == "login" and len(arguments) > 2:
        places = [1, 2]
    for place in places:
        if len(arguments) > place and arguments[place][0]:
            value = arguments[place][1]
            if value.strip() and "$" not in value and not value.startswith(("%", "{")):
                found.append(value)


def _arguments(text: str, at: int) -> list[tuple[bool, str]]:
    """The first positional arguments of a call from ``at``: (a string literal?, its
    text); none past a keyword argument or a nested bracket."""
    arguments: list[tuple[bool, str]] = []
    while len(arguments) < _MAX_ARGUMENTS:
        match = _ARGUMENT.match(text, at)
        if match is None:
            break
        single, double, bare, end = match.groups()
        literal = single if single is not None else double
        if literal is None and not (bare or "").strip():
            break
        arguments.append((literal is not None, literal if literal is not None
                          else (bare or "").strip()))
        at = match.end()
        if end != ",":
            break
    return arguments


# --- a password as a default, a call under another name ---------------------------------

# `${DB_PASSWORD:-V}`, `${TOKEN:=V}` (also without the colon, and `+`: the value used
# when set). In code, a literal standing in for a secret-like setting that is missing:
# the next argument of a look-up (`os.environ.get('API_TOKEN', 'V')`, `os.getenv`,
# `setdefault`, Ruby's `ENV.fetch`, Laravel's `env`, Java's `getOrDefault`; after a
# section, `config.get('db', 'password', fallback='V')`; `default=`/`fallback=`), any such
# look-up given to a secret-like name (`password=os.environ.get('X', 'V')`); what stands
# after `or`, `||`, `??`, `?:` or in a block after one (`os.environ.get('SECRET_KEY') or
# 'V'`, `process.env['API_KEY'] || 'V'`, `ENV.fetch('TOKEN') { 'V' }`, `env.TOKEN ?? 'V'`);
# an option's `default=` (`add_argument('--token', default='V')`, click's `option`)
_SHELL_DEFAULT = re.compile(r"\$\{([A-Za-z_]\w*):?[-=+]([^}$`'\"\s\\]+)\}")
_LOOKUP = re.compile(  # a look-up of a setting's name, then its default
    r"""(?<![\w$])(?:get(?:env|OrDefault)?|setdefault|fetch|env)[ \t]*\([ \t]*"""
    r"""(?:[bru]?(['"])[^'"\\\n]*\1[ \t]*,[ \t]*)?"""  # a section first (configparser)
    r"""[bru]?(['"])([^'"\\\n]*)\2"""  # the setting's name
    r"""(?:[ \t]*,[ \t]*(?:(?:default|fallback)[ \t]*=[ \t]*)?[bru]?(['"])([^'"\\\n]*)\4"""
    r"""|[ \t]*[)\]][ \t]*(?:\|\||\?\?|\?:|or\b|\{)[ \t]*[bru]?(['"])([^'"\\\n]*)\6)""")
# ...given to a name (`password = os.environ.get(`): what stands just before the look-up
_GIVEN_TO = re.compile(r"""([A-Za-z_][\w.]*)['"]?[ \t]*(?:=|:|=>)[ \t]*"""
                       r"""(?:[\w$]+(?:\.|->|::)|\(\)\.)*\Z""")
_OR_DEFAULT = re.compile(  # env['API_KEY'] || 'V', env.TOKEN ?? 'V'
    r"""(?:\[[ \t]*(['"])([\w.-]+)\1[ \t]*\]|env\.([A-Za-z_]\w*))"""
    r"""[ \t]*(?:\|\||\?\?|\?:|or\b)[ \t]*[bru]?(['"])([^'"\\\n]*)\4""")
_OPTION_DEFAULT = re.compile(  # add_argument('--token', type=str, default='V')
    r"""\([ \t]*(['"])(-{0,2}[\w.-]+)\1[^()'"\n]{0,80}?\bdefault[ \t]*=[ \t]*"""
    r"""[bru]?(['"])([^'"\\\n]*)\3""")
_LOOKUPS = ("get(", "getenv", "getOrDefault", "setdefault", "fetch(", "env(", "get (")
_ORS = ("||", "??", "?:", " or ")


def may_default(text: str) -> bool:
    """Whether :func:`default_secrets` may find something (substring tests only)."""
    return ("${" in text or "default" in text or (
        "(" in text and any(lookup in text for lookup in _LOOKUPS)) or (
        ("env" in text or "ENV" in text) and any(either in text for either in _ORS)))


def default_secrets(text: str, found: list[str]) -> None:
    values: list[str] = []
    if "${" in text:
        values.extend(shell.group(2) for shell in _SHELL_DEFAULT.finditer(text)
                      if is_secret_name(shell.group(1)))
    if "(" in text and any(lookup in text for lookup in _LOOKUPS):
        for code in _LOOKUP.finditer(text):
            given = _GIVEN_TO.search(text, max(0, code.start() - 80), code.start())
            if is_secret_name(code.group(3)) or (given is not None and is_secret_name(
                    given.group(1).rsplit(".", 1)[-1])):
                values.append(code.group(5) if code.group(5) is not None else code.group(7))
    if "default" in text and "(" in text:
        values.extend(option.group(4) for option in _OPTION_DEFAULT.finditer(text)
                      if is_secret_name(option.group(2)))
    if ("[" in text or "env." in text) and any(either in text for either in _ORS):
        values.extend(alone.group(5) for alone in _OR_DEFAULT.finditer(text)
                      if is_secret_name(alone.group(2) or alone.group(3)))
    found.extend(value for value in values if value.strip() and "$" not in value)


# A known call bound to another name: `from requests.auth import HTTPBasicAuth as B`,
# `import pymysql.connect as c`, `B = requests.auth.HTTPBasicAuth` (not called there);
# the calls of that name take the password at the known call's place
_CALLED = (r"connect|mysqli?_connect|mysqli|PDO|getConnection|FTP(?:_TLS)?|login"
           r"|HTTP(?:Basic|Digest|Proxy)Auth|(?:Basic|Digest)Auth|basic_auth|digest_auth")
_ALIASED = re.compile(rf"(?<![\w$])({_CALLED})\b(?![ \t]*[(.])")
_AS_NAME = re.compile(r"[ \t]+as[ \t]+([A-Za-z_]\w*)")
_NAMED = re.compile(r"(?<![\w$.])([A-Za-z_$][\w$]*)[ \t]*=[ \t]*(?:[\w$]+(?:\.|->|::))*\Z")
_ALIAS_WORDS = ("connect", "PDO", "getConnection", "FTP", "login", "Auth", "auth")


def may_alias(text: str) -> bool:
    return ("=" in text or " as " in text) and any(word in text for word in _ALIAS_WORDS)


def call_aliases(text: str) -> dict[str, str]:
    """Each name ``text`` binds a known call to (``import … as NAME``, ``NAME = …CALL``)."""
    bound: dict[str, str] = {}
    for called in _ALIASED.finditer(text):
        alias = _AS_NAME.match(text, called.end()) or _NAMED.search(
            text, max(0, called.start() - 80), called.start())
        if alias is not None and alias.group(1) != called.group(1):
            bound[alias.group(1)] = called.group(1)
    return bound


def _aliased_call_secrets(text: str, found: list[str]) -> None:
    aliases = call_aliases(text)
    if not aliases:
        return
    calls = re.compile(r"(?<![\w$])(" + "|".join(map(re.escape, aliases)) + r")[ \t]*\(")
    for call in calls.finditer(text):
        _password_at(aliases[call.group(1)], _arguments(text, call.end()), found)
