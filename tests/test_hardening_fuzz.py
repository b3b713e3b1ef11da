"""Property fuzzing of every parser that reads text an attacker controls.

- passage splitter and quote cutter: every quote verbatim, one line, bounded;
- render and check: never an unexpected exception, render idempotent;
- URL normalizer: only InvalidURL, idempotent, never shows a secret value;
- curl-argument parser: only the BadInput family.

``make test`` runs ``EXAMPLES`` (bounded) examples per property; ``make hardening``
(FETCHLEDGER_HARDENING=1) runs 20 times as many. Each property reports its example
count to the figures file under ``make hardening``.
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from fetchledger import Ledger
from fetchledger.adapters.curl_args import parse_curl_args
from fetchledger.cite import STYLES, check, render
from fetchledger.errors import BadInput, InvalidArgument, InvalidURL, UnknownSource
from fetchledger.identity.secrets import REDACTED
from fetchledger.identity.urls import normalize_url, parse_http_url, redact_url, url_identity
from fetchledger.text.normalize import LINE_BREAKS, clean_lines
from fetchledger.text.passages import MAX_PASSAGE, MAX_QUOTE, select_quotes, split_passages

from cite_sources import seed
from measured import FIGURES, HEAVY

EXAMPLES = 2_000 if HEAVY else 100
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.filter_too_much])
_counts: dict[str, int] = {}


def count(name: str) -> None:
    _counts[name] = _counts.get(name, 0) + 1


@pytest.fixture(scope="module", autouse=True)
def report_counts() -> Iterator[None]:
    yield
    if FIGURES:
        with open(FIGURES, "a", encoding="utf-8") as handle:
            for name, examples in sorted(_counts.items()):
                handle.write(json.dumps({"case": f"fuzz {name}", "examples": examples}) + "\n")


# --- passages and quotes ----------------------------------------------------------------

# Text an adversary writes: every line break, sentence terminators, closers, CJK, RTL,
# combining marks, zero-width characters, digits, long runs without spaces.
HOSTILE_CHARS = st.sampled_from(
    list(LINE_BREAKS) + list("\n\t .!?…。！？\"'”’»)]」』）([«“‘¿¡:;,-")
    + list("abcXYZ019") + ["\u0301", "\u200b", "\u200f", "\ufeff", "\u00a0", "é", "ß",
                           "水", "ل", "𝔘", "\x00", "\x7f", "\u2028"])
hostile_text = st.one_of(
    st.text(HOSTILE_CHARS, max_size=600),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=600),
    st.builds(lambda a, n, b: a + "x" * n + b, st.text(HOSTILE_CHARS, max_size=40),
              st.integers(0, 2500), st.text(HOSTILE_CHARS, max_size=40)),
)


@FUZZ
@given(raw=hostile_text, query=st.one_of(st.none(), st.text(HOSTILE_CHARS, max_size=20)),
       k=st.integers(1, 8), max_chars=st.sampled_from([20, 80, MAX_QUOTE]))
def test_quotes_from_hostile_text_are_verbatim_one_line_bounded(
        raw: str, query: str | None, k: int, max_chars: int) -> None:
    count("passages+quotes")
    text = clean_lines(raw)  # what every extractor stores
    assert not set(text) & set(LINE_BREAKS)
    passages = split_passages(text)
    previous_end = 0
    for passage in passages:
        piece = text[passage.start : passage.end]
        assert piece and piece == piece.strip() and "\n" not in piece
        assert passage.end - passage.start <= MAX_PASSAGE
        assert passage.start >= previous_end  # in order, never overlapping
        previous_end = passage.end
    for span in select_quotes(text, passages, query, k, max_chars=max_chars):
        quote = text[span.start : span.end]
        assert quote and "\n" not in quote and len(quote) <= max_chars
        assert "…" not in span.line.strip("…") or "…" in quote  # ellipses only at cuts
        assert span.line in {quote, f"…{quote}", f"{quote}…", f"…{quote}…"}
        assert any(p.start <= span.start and span.end <= p.end for p in passages)


# --- render and check -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fuzz") / "ledger.db"
    with Ledger(path) as ledger:
        seed(ledger)
    return path


DRAFT_PIECES = st.sampled_from([
    "Water boils at 100 °C.", "At sea level, water boils at 100 °C (212 °F).", "[1]", "[2]",
    "[6]", "[99]", "[0]", "[1][2]", "[1, 2]", "[1-3]", "[^1]", "[^n]: note\n", " ", "\n",
    "\n\n", "\r\n", "`[3]`", "```\n[4]\n```\n", "~~~\n[1]\n", "[x](https://e.example/[1])",
    "<https://a.example>", "https://raw.example/p", "# Title ", "- item ", "> quoted [1] ",
    "| a | b [1] |\n|---|---|\n", '"water boils at 100 °C"[1]', "“boils at 70 °C”[1]",
    "<!-- fetchledger:sources -->", "<!-- /fetchledger:sources -->", "\n## Sources\n",
    "[1] Boiling point — en.example — 2024\n", "*em* ", "**[2]**", "\\[1\\]", "    [5]\n",
    "[ref]", "\n[ref]: ./r.md\n", "e.g. ", "8,849 metres ", "3 March 2021 ", "。", "\u2028",
    "[", "]", "(", ")", "^", "…", "\t",
])
drafts = st.one_of(st.lists(DRAFT_PIECES, max_size=30).map("".join),
                   st.text(st.sampled_from(list("ab1234 .,[]()^*_`#>-|!:\n\r\"“”<>/\\…")),
                           max_size=200))


@FUZZ
@given(draft=drafts, style=st.sampled_from(STYLES), renumber=st.booleans())
def test_render_never_fails_unexpectedly_and_is_idempotent(
        seeded: Path, draft: str, style: str, renumber: bool) -> None:
    count("render")
    with Ledger(seeded) as ledger:
        try:
            once = render(ledger, draft, style=style, renumber=renumber)
        except (InvalidArgument, UnknownSource):
            event("refused")
            return
        again = render(ledger, once.text, style=style, renumber=renumber)
    assert again.text == once.text


@FUZZ
@given(draft=drafts, allow_links=st.booleans(), strict=st.booleans())
def test_check_never_fails_and_points_inside_the_draft(
        seeded: Path, draft: str, allow_links: bool, strict: bool) -> None:
    count("check")
    with Ledger(seeded) as ledger:
        report = check(ledger, draft, allow_links=allow_links, strict=strict)
    lines = draft.replace("\r\n", "\n").split("\n")
    for problem in report.problems:
        assert 1 <= problem.line <= len(lines)
        assert 1 <= problem.column <= len(lines[problem.line - 1]) + 1
        assert "\n" not in problem.message


# --- the URL normalizer ---------------------------------------------------------------------

SECRET = "Zq7Secret"  # every secret value below starts with this and appears nowhere else
_drawn = iter(range(10**9))
secret_values = st.text(string.ascii_letters + string.digits, min_size=4, max_size=10).map(
    lambda tail: f"{SECRET}{next(_drawn)}x{tail}")  # unique: never a substring of another
hosts = st.one_of(
    st.sampled_from(["example.com", "EXAMPLE.com.", "a-b.example", "xn--bcher-kva.example",
                     "bücher.example", "127.0.0.1", "0x7f.1", "2130706433", "0177.0.0.1",
                     "[::1]", "[::ffff:10.0.0.1]", "[fe80::1%25eth0]", "10.0.0.5.",
                     "example.com:8080", "example.com:80", "example.com:443", "example.com:0",
                     "example.com:99999", "1.2.3.4.5", "256.1.1.1", "[::1", "", "%31.1",
                     "ex ample.com", "exa_mple.com", "ａｂｃ.example", "127。0。0。1"]),
    st.text(string.ascii_lowercase + string.digits + ".-_[]:%", min_size=1, max_size=20),
)
path_chars = string.ascii_letters + string.digits + "/.-_~%!$&'()*+,;=:@ é"
param_names = st.sampled_from(["q", "page", "token", "api_key", "apiKey", "X-Amz-Signature",
                               "password", "sig", "utm_source", "fbclid", "gclid", "a", "key",
                               "access_token", "client_secret", "session_id", "Q%20x", ""])


@st.composite
def urls(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A URL and the secret values it carries (user-info, secret-named parameters)."""
    secrets: list[str] = []
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "HtTpS", "ftp", "file", "javascript",
                                   ""]))
    userinfo = ""
    if draw(st.booleans()):
        user, password = draw(secret_values), draw(secret_values)
        secrets += [user, password]
        userinfo = f"{user}:{password}@" if draw(st.booleans()) else f"{user}@"
        secrets = secrets if ":" in userinfo else secrets[:1]
    path = "/" + draw(st.text(path_chars, max_size=20))
    for name in draw(st.lists(param_names, max_size=2)):  # path parameters: ;jsessionid=V
        value = draw(st.one_of(secret_values, st.text(string.ascii_letters, max_size=6)))
        path += f";{name}={value}" + draw(st.sampled_from(["", "/", "/x"]))
        if value.startswith(SECRET) and name.lower() not in {"q", "page", "a", "utm_source",
                                                              "fbclid", "gclid", "q%20x", ""}:
            secrets.append(value)
    params = []
    for name in draw(st.lists(param_names, max_size=5)):
        value = draw(st.one_of(secret_values, st.text(string.ascii_letters + "%+= ",
                                                        max_size=8)))
        params.append(f"{name}={value}")
        if value.startswith(SECRET) and name.lower() not in {"q", "page", "a", "utm_source",
                                                              "fbclid", "gclid", "q%20x", ""}:
            secrets.append(value)
    query = ("?" + "&".join(params)) if params else ""
    fragment = "#" + draw(st.text(path_chars, max_size=8)) if draw(st.booleans()) else ""
    sep = draw(st.sampled_from(["://", "://", ":/", ":", ":\\\\"]))
    return f"{scheme}{sep}{userinfo}{draw(hosts)}{path}{query}{fragment}", secrets


@FUZZ
@given(case=urls())
def test_normalize_url_only_raises_invalid_url_is_idempotent_and_hides_secrets(
        case: tuple[str, list[str]]) -> None:
    count("normalize_url (grammar)")
    url, secrets = case
    try:
        normal = normalize_url(url)
    except InvalidURL as error:
        event("invalid")
        assert "\n" not in error.message
        for secret in secrets:
            assert secret not in error.message + str(error.hint or ""), (url, error.message)
        return
    event("valid")
    assert normalize_url(normal) == normal
    identity = url_identity(url, b"k" * 32)
    assert url_identity(identity, b"k" * 32) == identity
    assert all(secret not in identity for secret in secrets), (url, identity)
    assert parse_http_url(normal).scheme in ("http", "https")
    for shown in (normal, redact_url(url)):
        for secret in secrets:
            assert secret not in shown, (url, shown)
    if secrets:
        assert REDACTED in normal


@FUZZ
@given(url=st.one_of(st.text(max_size=80), st.text(max_size=60).map(lambda s: "http://" + s),
                     st.text(max_size=60).map(lambda s: "https://h.example/" + s)))
def test_any_text_as_a_url_gives_a_normal_form_or_invalid_url(url: str) -> None:
    count("normalize_url (any text)")
    try:
        normal = normalize_url(url)
    except InvalidURL:
        return
    assert normalize_url(normal) == normal


# --- the curl-argument parser ----------------------------------------------------------------

CURL_WORDS = st.sampled_from([
    "-X", "POST", "GET", "PUT", "BAD METHOD", "-H", "Accept: text/html", "X-Api-Key: k",
    "Accept:", "X-Empty;", "NoColon", "Bad Name: x", "-d", "a=1", "@-", "@missing.txt",
    "--data-raw", "--data-binary", "--data-urlencode", "name=va lue", "=x", "name@missing",
    "--json", '{"a": 1}', "-G", "--get", "-u", "user:pw", "-A", "agent", "-e", "ref", "-b",
    "c=1", "-L", "-I", "--head", "-m", "5", "-1", "abc", "--max-time", "--url",
    "http://h.example/p?q=1", "https://h.example/", "ftp://h.example/", "h.example/x",
    "-sSL", "-XPOST", "-sS", "-Lv", "-k", "--insecure", "-o", "out", "-x", "--resolve",
    "--unix-socket", "-F", "-T", "-i", "--compressed", "--fail", "-f", "--", "-", "",
    "--ledger", "l.db", "--allow-private", "--allow-host", "--query", "--snippets", "3",
    "--nope", "-Z", "-H\nInjected: 1", "X-A: b\r\nX-B: c", "-d\x00", "--data=inline",
    "--header=Accept: */*", "--request=DELETE",
])


@FUZZ
@given(args=st.lists(st.one_of(CURL_WORDS, st.text(
    st.characters(blacklist_characters="/\\@", blacklist_categories=("Cs",)), max_size=12)),
    max_size=12))
def test_curl_arguments_raise_only_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             args: list[str]) -> None:
    count("curl arguments")
    assume(not any(a.startswith("@") and a not in ("@-", "@missing.txt") for a in args))
    monkeypatch.chdir(tmp_path)  # relative @files resolve in an empty folder
    try:
        command = parse_curl_args(args, read_stdin=lambda: b"from stdin")
        request = command.http_request()
    except BadInput as error:
        event(type(error).__name__)
        assert "\n" not in error.message
        return
    event("parsed")  # the URL itself is judged when sent (InvalidURL before any packet)
    for name, value in request.headers:
        assert "\n" not in name and (value is None or "\n" not in value)



# --- what the fuzzing found (kept as plain regression tests) ----------------------------------


def test_a_query_that_matches_nothing_in_a_long_passage_gives_the_lead(tmp_path: Path) -> None:
    """Cutting a passage over 300 characters around a query with no hit in it raised
    IndexError: `fetch URL -q "absent words"` crashed on pages whose lead was long."""
    text = ("The gauge at the north bank read high water on every day of the spring "
            "survey, " * 8).strip() + "."
    with Ledger(tmp_path / "l.db") as ledger:
        from fetchledger import Document

        got = ledger.register(Document(kind="file", locator="/long", display="/long",
                                       text=text, raw=text.encode()), query="zebra")
    quote = got.snippets[0].quote
    assert text.startswith(quote) and len(quote) <= MAX_QUOTE
    assert got.snippets[0].line == quote + "…"


@pytest.mark.parametrize("url", ["http:/Zq7user:Zq7pw@example.com/", "http:Zq7user@h.example/"])
def test_user_info_is_redacted_in_errors_without_two_slashes(url: str) -> None:
    """Browsers read ``http:/user:pw@host`` as user-info; error messages showed it."""
    with pytest.raises(InvalidURL) as caught:
        normalize_url(url)
    assert "Zq7" not in caught.value.message and REDACTED in caught.value.message


def test_user_info_after_backslashes_is_redacted() -> None:
    """``https:\\\\user:pw@host/`` is ``https://user:pw@host/`` to WHATWG (session 11: a
    URL now, no longer an error): its user-info is shown redacted."""
    assert normalize_url("https:\\\\Zq7user:Zq7pw@h.example/") == f"https://{REDACTED}@h.example/"


def test_the_did_you_mean_hint_hides_secrets() -> None:
    with pytest.raises(InvalidURL) as caught:
        normalize_url("example.com/data?token=Zq7tokenvalue&page=2")
    assert "Zq7tokenvalue" not in str(caught.value.hint)
    assert caught.value.hint == "did you mean https://example.com/data?token=REDACTED&page=2 ?"
