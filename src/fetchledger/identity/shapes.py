"""Credentials recognised by their shape, not their name (DESIGN §8).

The other rules of :mod:`.secrets` find a secret by what it is *called*
(``api_key=``, ``Authorization:``, ``--token``). Two kinds of secret carry no
such name and are found by what they *look like*:

- **capability URLs**, whose path is the credential: Slack webhooks
  (``hooks.slack.com/services/T…/B…/SECRET``, also ``/workflows/…`` and
  ``/triggers/…``), Discord webhooks (``discord.com/api/webhooks/ID/SECRET``),
  Telegram bots (``api.telegram.org/botSECRET/method``, ``/file/botSECRET/…``),
  Microsoft Teams / Office 365 connectors (``…webhook.office.com/webhookb2/…/
  IncomingWebhook/SECRET``), Zapier catch hooks, IFTTT Maker keys, PagerDuty
  integration keys and Datadog intake keys; on any host, the path shapes of
  Mattermost and Rocket.Chat hooks. The segment that is the secret is
  marked; the ids around it (a Slack workspace, a Discord webhook id) stay shown;
- **well-known token formats**, wherever a value is kept (a query value under a
  plain name, an argv word, a header value, a body field, a path segment):
  GitHub, GitLab, Slack, OpenAI, Anthropic, Stripe, AWS access key ids, Google
  API keys and OAuth tokens, JWTs, npm, PyPI, Hugging Face and others
  (:data:`TOKEN_FORMATS`). Each is a literal prefix and a body of a fixed
  alphabet with a minimum length, standing alone (no letter, digit, ``_`` or
  ``-`` just before it, no letter or digit just after it), so ordinary words
  (``sk-learn``, ``risk-free``, ``ghp``) never match;
- **private keys**: the body of a PEM or PGP private key block (the armour lines
  stay).

:func:`redact_shapes` replaces each one in a text by its mark (``REDACTED`` or a
keyed mark: the identity tells two webhooks apart) and notes the value, to be
scrubbed from whatever echoes it. A URL's separators may be percent-encoded at
any level (``hooks.slack.com%2Fservices%2F…``: a webhook nested in a parameter).
Each pattern is tried only where its literal prefix (or host) stands, found in
one pass (Aho-Corasick, in C); a match scans forward once: linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from urllib.parse import unquote

import ahocorasick

__all__ = ["TOKEN_FORMATS", "WEBHOOKS", "has_hint", "may_hold_shapes", "redact_private_keys",
           "redact_shapes", "shape_secrets"]

_Mark = Callable[[str], str]  # .secrets.Mark (that module imports this one)

# --- well-known token formats ----------------------------------------------------------
#
# (name, pattern): each pattern starts with a literal prefix; the body's alphabet and
# minimum length follow the issuer's format (shorter or other-lettered runs are words).
TOKEN_FORMATS: tuple[tuple[str, str], ...] = (
    ("GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)", r"gh[pousr]_[A-Za-z0-9_]{36,}"),
    ("GitHub fine-grained token", r"github_pat_[A-Za-z0-9_]{40,}"),
    ("GitLab token (glpat-, gldt-, glrt-...)",
     r"gl(?:pat|dt|rt|ptt|cbt|imt|agent|soat|oas|ft|ffct|wt)-[A-Za-z0-9_-]{20,}"),
    ("Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-)",
     r"xox[abprse](?:\.xox[abprse])?-[0-9]+-[A-Za-z0-9-]{8,}"),
    ("Slack app token", r"xapp-[0-9]-[A-Za-z0-9-]{20,}"),
    ("Anthropic key", r"sk-ant-[A-Za-z0-9_-]{32,}"),
    ("OpenAI project, service or admin key",
     r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,}"),
    ("OpenRouter key", r"sk-or-v1-[a-f0-9]{64}"),
    ("OpenAI key", r"sk-[A-Za-z0-9]{32,}"),
    ("Stripe secret or restricted key", r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("Stripe webhook secret", r"whsec_[A-Za-z0-9]{24,}"),
    ("AWS access key id", r"(?:AKIA|ASIA)[A-Z0-9]{16}"),
    ("Google API key", r"AIza[A-Za-z0-9_-]{35}"),
    ("Google OAuth token", r"ya29\.[A-Za-z0-9_-]{20,}"),
    ("Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{24,}"),
    ("JSON Web Token", r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    ("npm token", r"npm_[A-Za-z0-9]{36,}"),
    ("PyPI token", r"pypi-AgE[A-Za-z0-9_-]{40,}"),
    ("Hugging Face token", r"hf_[A-Za-z0-9]{34,}"),
    ("SendGrid key", r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    ("Shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32,}"),
    ("DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("HashiCorp Vault token", r"hv[sbr]\.[A-Za-z0-9_-]{24,}"),
    ("Databricks token", r"dapi[a-f0-9]{32}"),
    ("Groq key", r"gsk_[A-Za-z0-9]{40,}"),
    ("Replicate token", r"r8_[A-Za-z0-9]{32,}"),
    ("Linear key", r"lin_api_[A-Za-z0-9]{32,}"),
    ("Postman key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("xAI key", r"xai-[A-Za-z0-9]{64,}"),
    ("Perplexity key", r"pplx-[A-Za-z0-9]{40,}"),
    ("Mailgun key", r"key-[a-f0-9]{32}"),
    ("Square token", r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"),
    ("Atlassian API token", r"ATATT3[A-Za-z0-9_=-]{50,}"),
    ("Sentry token", r"sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=_-]{40,}"),
    ("Notion token", r"ntn_[A-Za-z0-9]{40,}"),
    ("Heroku key", r"HRKU-[A-Za-z0-9_-]{20,}"),
    ("1Password service account token", r"ops_eyJ[A-Za-z0-9+/=_-]{40,}"),
    ("Docker Hub token", r"dckr_pat_[A-Za-z0-9_-]{20,}"),
    ("Terraform Cloud token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_-]{60,}"),
    ("New Relic key", r"NRAK-[A-Z0-9]{27}"),
    ("Supabase token", r"sbp_[a-f0-9]{40}"),
    ("Twilio API key", r"SK[0-9a-fA-F]{32}"),
    ("Bitbucket app password", r"ATBB[A-Za-z0-9_=.-]{28,}"),
    ("Telegram bot token", r"[0-9]{8,10}(?::|%3[aA])AA[A-Za-z0-9_-]{33}"),
)
# A letter or digit just after a token makes it part of a longer word; so does one of
# `A-Za-z0-9_-` just before it (every format's body is made of them), unless it ends an
# escape (`%3D`: `=` encoded, in a nested URL).
_TOKEN_AT = re.compile(r"(?:(?<![A-Za-z0-9_-])|(?<=%[0-9A-Fa-f]{2}))(?:"
                       + "|".join(p for _, p in TOKEN_FORMATS) + r")(?![A-Za-z0-9])")
# What each format starts with, and how far before the hint's start the token starts
# (None: over the digits before it, a Telegram bot's id). A token is tried only where
# one of them stands (found in one pass, in C): a text holding none costs no scan,
# and a text holding many is tried once at each.
_TOKEN_HINTS: dict[str, int | None] = {
    **dict.fromkeys(("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "xapp-",
                     "sk-", "sk_", "rk_", "whsec_", "AKIA", "ASIA", "AIza", "ya29.",
                     "GOCSPX-", "eyJ", "npm_", "pypi-AgE", "hf_", "SG.", "shpat_", "shpca_",
                     "shppa_", "shpss_", "hvs.", "hvb.", "hvr.", "dapi", "gsk_", "r8_",
                     "lin_api_", "PMAK-", "sk-or-v1-", "xai-", "pplx-", "key-", "sq0atp-",
                     "sq0csp-", "ATATT3", "sntryu_", "sntrys_", "ntn_", "HRKU-", "ops_eyJ",
                     "dckr_pat_", "NRAK-", "sbp_", "SK", "ATBB"), 0),
    ".atlasv1.": 14,  # after the token's 14 first characters
    **{f"gl{kind}-": 0 for kind in ("pat", "dt", "rt", "ptt", "cbt", "imt", "agent", "soat",
                                     "oas", "ft", "ffct", "wt")},
    "_v1_": 3,  # do[opr]_v1_
    ":AA": None, "%3AAA": None, "%3aAA": None,
}

# --- capability URLs -------------------------------------------------------------------

_S = r"(?:/|%(?:25)*2[fF])"  # a path separator, also percent-encoded (a nested URL)
_ID = r"[A-Za-z0-9]+"
_GROUP = r"[A-Za-z0-9-]+(?:@|%(?:25)*40)[A-Za-z0-9-]+"  # Teams' group@tenant ids
_SECRET = r"[A-Za-z0-9_-]+"
_END = r"(?![A-Za-z0-9_-])"
# A host name (or its last labels: a subdomain's dot may stand before it) starts a URL,
# follows its user-info or an encoded `/` or `@` (a nested URL).
_HOST_START = r"(?:(?<![A-Za-z0-9-])|(?<=2[fF])|(?<=%40))"
_PORT = r"(?::[0-9]+)?"

# (name, host (its last labels, matched in any case), the path after it: its one group is
# the secret). Each host starts with one of the hints below.
WEBHOOKS: tuple[tuple[str, str, str], ...] = (
    ("Slack incoming webhook", r"hooks\.slack(?:-gov)?\.com",
     rf"{_S}services{_S}{_ID}{_S}{_ID}{_S}({_SECRET}){_END}"),
    ("Slack workflow webhook", r"hooks\.slack(?:-gov)?\.com",
     rf"{_S}workflows{_S}{_ID}{_S}{_ID}{_S}{_ID}{_S}({_SECRET}){_END}"),
    ("Slack trigger", r"hooks\.slack(?:-gov)?\.com",
     rf"{_S}triggers{_S}{_ID}{_S}{_ID}{_S}({_SECRET}){_END}"),
    ("Discord webhook", r"discord(?:app)?\.com",
     rf"{_S}api(?:{_S}v[0-9]+)?{_S}webhooks{_S}[0-9]+{_S}({_SECRET}){_END}"),
    ("Telegram bot", r"api\.telegram\.org",
     rf"{_S}(?:file{_S})?bot([0-9]+(?::|%(?:25)*3[aA])[A-Za-z0-9_-]+){_END}"),
    ("Microsoft Teams / Office 365 webhook",
     r"(?:webhook\.office\.com|outlook\.office(?:365)?\.com)",
     rf"{_S}webhook(?:b2)?{_S}{_GROUP}{_S}IncomingWebhook{_S}"
     rf"({_SECRET}{_S}{_SECRET}(?:{_S}{_SECRET})?){_END}"),
    ("Zapier catch hook", r"hooks\.zapier\.com",
     rf"{_S}hooks{_S}catch{_S}[0-9]+{_S}({_SECRET}){_END}"),
    ("IFTTT Maker key", r"maker\.ifttt\.com",
     rf"{_S}(?:trigger{_S}[A-Za-z0-9_-]+{_S}(?:json{_S})?with{_S}key|use){_S}"
     rf"({_SECRET}){_END}"),
    ("PagerDuty integration key", r"events\.pagerduty\.com",
     rf"{_S}(?:integration|x-ere){_S}({_SECRET}){_END}"),
    ("Datadog intake key", r"datadoghq\.(?:com|eu)",
     rf"{_S}(?:api{_S})?v[0-9]+{_S}input{_S}({_SECRET}){_END}"),
    # on any host (servers people run themselves): the path's shape alone
    ("Mattermost incoming webhook", "",  # 26 lowercase letters and digits, a digit among them
     rf"{_S}hooks{_S}((?=[a-z]{{0,25}}[0-9])[a-z0-9]{{26}}){_END}"),
    ("Rocket.Chat incoming webhook", "",  # its integration id and token
     rf"{_S}hooks{_S}([A-Za-z0-9]{{17}}{_S}[A-Za-z0-9]{{40,}}){_END}"),
)
# (where each host starts, lowercase: a webhook is tried only where one stands)
_WEBHOOK_HINTS = ("hooks.slack", "discord", "api.telegram.org", "webhook.office.com",
                  "outlook.office", "hooks.zapier.com", "maker.ifttt.com",
                  "events.pagerduty.com", "datadoghq.", "/hooks/", "%2fhooks%2f")
_WEBHOOK_AT = re.compile("|".join(f"{_HOST_START}(?i:{host}){_PORT}{rest}" if host else rest
                                  for _, host, rest in WEBHOOKS))
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

# Escapes of the unreserved characters tokens hold besides letters and digits (`%5F` is
# `_`): a token written with them is looked for with them decoded.
_ESCAPED = (("%5F", "_"), ("%5f", "_"), ("%2D", "-"), ("%2d", "-"), ("%2E", "."), ("%2e", "."))


def _decoded_unreserved(text: str) -> str:
    for escape, char in _ESCAPED:
        if escape in text:
            text = text.replace(escape, char)
    return text


@lru_cache(maxsize=1)
def _finders() -> tuple[ahocorasick.Automaton, ahocorasick.Automaton, ahocorasick.Automaton]:
    """The hints of tokens (as written), of webhook hosts (lowercase), and of both
    (lowercase: whether a text needs a look at all, in one pass)."""
    tokens, hooks, either = (ahocorasick.Automaton() for _ in range(3))
    for hint, back in _TOKEN_HINTS.items():
        tokens.add_word(hint, (len(hint), back))
        either.add_word(hint.lower(), hint)
    for hint in _WEBHOOK_HINTS:
        hooks.add_word(hint, len(hint))
        either.add_word(hint, hint)
    either.add_word("-----begin", "-----begin")  # a private key
    for automaton in (tokens, hooks, either):
        automaton.make_automaton()
    return tokens, hooks, either


def _folded(text: str) -> str:
    """``text`` lowercase, of the same length (so the same offsets)."""
    lowered = text.lower()  # (fast; a few characters lowercase to two: İ)
    return lowered if len(lowered) == len(text) else text.translate(_LOWER)


def _hook_starts(text: str) -> list[int]:
    """Where a webhook's host may start, in order."""
    return sorted(end - size + 1 for end, size in _finders()[1].iter(_folded(text)))


def _token_starts(text: str) -> list[int] | None:
    """Where a token may start (at or just before each hint), in order; None where hints
    are so dense (``eyJ-eyJ-…``) that one scan of the whole text by the pattern costs
    less than trying each."""
    starts: list[int] = []
    most = len(text) // 48 + 16
    for end, (size, back) in _finders()[0].iter(text):
        if len(starts) > most:
            return None
        at = end - size + 1
        if back is None:  # the digits before it: a Telegram bot's id
            first = at
            while first > 0 and at - first < 10 and text[first - 1].isdigit():
                first -= 1
            at = first
        else:
            at -= back
        if at >= 0:
            starts.append(at)
    starts.sort()
    return starts


# The shortest a token or a capability URL can be (`xoxb-1-` and 8 characters).
_SHORTEST = 15


def has_hint(text: str) -> bool:
    """Whether ``text``, of any length, holds the start of a token or webhook host (a
    part of one that may go on past it)."""
    return next(_finders()[2].iter(_folded(text)), None) is not None


def may_hold_shapes(text: str) -> bool:
    """False when no shape rule can match in ``text`` (most texts): one pass of a hint
    finder (in C), no regular-expression scan."""
    if len(text) < _SHORTEST:
        return False
    if has_hint(text):
        return True
    if "%" in text:
        decoded = _decoded_unreserved(text)
        return decoded != text and may_hold_shapes(decoded)
    return False


def redact_shapes(text: str, found: list[str], mark: _Mark) -> str:
    """``text`` with each capability-URL secret and each well-known token replaced by
    ``mark`` of it (a :data:`.secrets.Mark`); the values are appended to ``found`` (as
    written and decoded). The rest of the text stays as written — unless a token is
    only seen with its unreserved escapes decoded (``ghp%5F…``): then the text is given
    back decoded there, with the token marked."""
    if len(text) < _SHORTEST:
        return text
    shown = _redact(text, found, mark)
    if "%" in shown:
        decoded = _decoded_unreserved(shown)
        if decoded != shown:
            before = len(found)
            again = _redact(decoded, found, mark)
            if len(found) > before:
                return again
    return shown


def _redact(text: str, found: list[str], mark: _Mark) -> str:
    text = _each(text, _hook_starts(text), _WEBHOOK_AT, found, mark, None)
    text = redact_private_keys(text, found, mark)
    starts = _token_starts(text)
    if starts is None:
        return _TOKEN_AT.sub(lambda m: _marked(m, found, mark, 0), text)
    return _each(text, starts, _TOKEN_AT, found, mark, 0)


# A PEM (or PGP) private key: its armour lines stay, what is between them is the secret.
_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = "-----END "
# what a key's body holds: base64, line breaks (also escaped, `\n` in JSON), armour
# headers (`Proc-Type: 4,ENCRYPTED`), and the marks other rules left in it (a command
# line's rules record values as NUL, \x03, a private-use character, NUL)
_PEM_BODY = re.compile("[A-Za-z0-9+/=\\s\\\\:,.\\-\0\x03\U000f0000-\U0010ffff]*")


def redact_private_keys(text: str, found: list[str], mark: _Mark) -> str:
    """``text`` with the body of each private key block marked (its lines are noted in
    ``found`` too: an echo may wrap them otherwise). Linear: each run of body characters
    is scanned once however many ``BEGIN`` lines stand in it. (Command lines run this
    before their other rules: a key's armour headers look like ``NAME: V``.)"""
    if "-----BEGIN" not in text:
        return text
    pieces: list[str] = []
    last = run_from = run_to = 0
    end = -1
    for begin in _PEM_BEGIN.finditer(text):
        if begin.start() < last:
            continue
        if end < begin.end():  # the next END line (each one found once)
            end = text.find(_PEM_END, begin.end())
            if end < 0:
                break
        if not run_from <= begin.end() <= run_to:  # a new run of body characters
            run_from, run_to = begin.end(), _PEM_BODY.match(text, begin.end()).end()  # type: ignore[union-attr]
        if run_to < end:  # (before any copy of the body: a body is copied only once)
            continue
        body = text[begin.end():end]
        if len(body.strip()) < 16:
            continue
        found.append(body.strip())
        found.extend(line for line in re.split(r"\s+|\\n|\\r", body) if len(line) >= 16)
        pieces.extend((text[last:begin.end()], mark(body.strip())))
        last = end
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _each(text: str, starts: list[int], pattern: re.Pattern[str], found: list[str],
          mark: _Mark, group: int | None) -> str:
    """``text`` with ``pattern`` tried at each of ``starts`` (in order), each match's
    secret (``group``; None: its one group) marked."""
    if not starts:
        return text
    pieces: list[str] = []
    last = 0
    for at in starts:
        if at < last:
            continue  # inside a secret already marked
        match = pattern.match(text, at)
        if match is None:
            continue
        pieces.extend((text[last:at], _marked(match, found, mark, group)))
        last = match.end()
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _marked(match: re.Match[str], found: list[str], mark: _Mark,
            group: int | None = None) -> str:
    if group is None:  # the one group (the secret) of the alternative that matched
        group = match.lastindex or 0
    raw = match.group(group)
    if raw.startswith("REDACTED"):
        return match.group()  # already a mark
    plain = unquote(raw) if "%" in raw else raw
    found.extend((plain, raw) if plain != raw else (plain,))
    start, end = match.span(group)
    whole = match.group()
    offset = match.start()
    return whole[:start - offset] + mark(plain) + whole[end - offset:]


def shape_secrets(text: str) -> list[str]:
    """Every capability-URL secret and well-known token in ``text`` (a request body of
    any type): what to scrub from a response that echoes it."""
    found: list[str] = []
    redact_shapes(text, found, lambda value: "")
    return found
