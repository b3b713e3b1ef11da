"""Issue 13: a ledger written before keyed identities keeps its ids.

The ledger below is made the way fetchledger 0.1 left it (migration 0001 only,
no identity key, locators under the old rules: `accesstoken=` in clear, a
redacted value as `REDACTED`, `%2e%2e` kept as `..`). Opening it migrates: the
same resource is found under its old id, nothing is renumbered, two sources
the new rules would merge stay apart, and the secrets the old rules missed
leave the locators, displays, attempts and metadata.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
from pathlib import Path

import pytest

from fetchledger import Document, Ledger
from fetchledger.identity.urls import url_identity
from fetchledger.text.passages import split_passages

from conftest import LedgerLocation, rows


def _old_ledger(path: Path, cwd: Path) -> None:
    with Ledger(path) as ledger:
        for locator, kind, meta in [
            ("https://api.example/v1/items?accesstoken=abc123&page=2", "web",
             {"final_url": "https://api.example/v1/items?accesstoken=abc123&page=2"}),
            ("https://api.example/v1/items?token=REDACTED", "web", {}),
            ("https://example.org/x/", "web", {}),
            ("https://example.org/x/bbb/..", "web", {}),  # old form of .../x/bbb/%2e%2e
            (f"echo --accesstoken=zzz999 (in {cwd})", "command",
             {"argv": ["echo", "--accesstoken=zzz999"],
              "command_line": "echo --accesstoken=zzz999"}),
            (f"sh -c 'TOKEN=REDACTED echo deployed' (in {cwd})", "command", {}),
            ("/srv/notes.txt", "file", {}),
        ]:
            ledger.register(Document(kind=kind, locator=locator, display=locator,  # type: ignore[arg-type]
                                     text=f"The stored text of {kind} number one.", raw=b"r",
                                     meta=meta))
    db = sqlite3.connect(path)
    with db:
        db.execute("INSERT INTO attempt (kind, locator, at, status, message) VALUES "
                   "('web', 'https://api.example/v2?clientsecret=cs-42', '2026-01-01T00:00:00Z',"
                   " 'http_error', 'HTTP 500')")
        db.execute("DROP TABLE identity_key")
        db.execute("DROP TABLE search_hit")  # the later migrations' tables, not in 0.1
        db.execute("DROP TABLE text_chunk")
        for index in ("passage_in_order", "passage_on_pages", "passage_headings"):
            db.execute(f"DROP INDEX {index}")
        db.execute("ALTER TABLE passage DROP COLUMN ordinal")
        db.execute("ALTER TABLE passage DROP COLUMN heading")
        db.execute("DELETE FROM migration WHERE name != '0001_initial'")
    db.close()


def test_an_old_ledger_keeps_its_ids_and_finds_them_under_the_new_identity(
        tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _old_ledger(path, tmp_path)
    before = rows(path, "SELECT id, kind FROM source ORDER BY id")
    with Ledger(path) as ledger:
        key = ledger.identity_key
        assert rows(path, "SELECT id, kind FROM source ORDER BY id") == before  # no renumbering
        find = ledger.source_for
        assert find(url_identity("https://api.example/v1/items?accesstoken=abc123&page=2",
                                 key)).id == 1
        assert find(url_identity("https://api.example/v1/items?accesstoken=other&page=2",
                                 key)) is None
        # a value the old rules redacted is gone: no new value is matched to it
        assert find(url_identity("https://api.example/v1/items?token=t1", key)) is None
        # the new rules would merge 3 and 4: the lower id takes the identity, 4 stays 4
        assert find(url_identity("https://example.org/x/bbb/%2e%2e", key)).id == 3
        assert ledger.source(4).id == 4
        for source in ledger.sources():  # numbered, flagged and chunked by 0008_reading
            lines = ledger.read_source(source.id).lines
            text = ledger.text(source.id)
            assert [(line.start, line.end) for line in lines] == [
                (p.start, p.end) for p in split_passages(text)]
            assert all(line.quote == text[line.start : line.end] for line in lines)
        again = ledger.run(["echo", "--accesstoken=zzz999"], cwd=tmp_path)
        assert again.source.id == 5 and again.source.locator == \
            f"echo --accesstoken=REDACTED (in {tmp_path})"
        other = ledger.run(["sh", "-c", "TOKEN=t2 echo deployed"], cwd=tmp_path)
        assert other.source.id == 8  # a new value never merges into the redacted one
    for value in ("abc123", "zzz999", "cs-42"):
        for table, column in (("source", "locator"), ("source", "display"), ("alias", "locator"),
                              ("attempt", "locator"), ("version", "meta")):
            for (stored,) in rows(path, f"SELECT {column} FROM {table}"):
                assert value not in stored, (table, column, stored)
    meta = json.loads(rows(path, "SELECT meta FROM version WHERE source_id = 1")[0][0])
    assert meta["final_url"] == "https://api.example/v1/items?accesstoken=REDACTED&page=2"
    assert rows(path, "SELECT name FROM migration ORDER BY name") == [
        ("0001_initial",), ("0002_keyed_identity",), ("0005_search_hits",),
        ("0007_secret_rules",), ("0008_reading",), ("0010_credentials_not_identity",),
        ("0011_nested_secrets",), ("0012_secret_shapes",), ("0014_shell_quoting",),
        ("0016_more_secret_options",), ("0017_more_secret_forms",), ("0020_fed_secrets",),
        ("0022_held_out_secrets",), ("0023_stray_percent",),
        ("0024_url_characters",)]
    assert rows(path, "PRAGMA integrity_check") == [("ok",)]


@pytest.mark.both_backends
def test_a_ledger_of_the_first_secret_rules_keeps_its_ids_under_the_second(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """A ledger written after keyed identities but before issue 13's second pass held
    session path parameters, session cookies' names and program passwords in clear;
    migration 0007 finds each source again under its old id and redacts them."""
    folder = tmp_path.resolve()
    with Ledger(ledger_path) as ledger:
        key = ledger.identity_key
        for kind, locator, meta in [
            ("web", "https://shop.example/cart;jsessionid=S3SS10NAA?p=1",
             {"final_url": "https://shop.example/cart;jsessionid=S3SS10NAA?p=1"}),
            ("web", "https://shop.example/cart?PHPSESSID=PHPS3SS", {}),
            ("command", f"mysql -pDBPASSW0RD -e 'select 1' (in {folder})",
             {"argv": ["mysql", "-pDBPASSW0RD", "-e", "select 1"]}),
            ("command", f"curl -ubob:CURLPASSW0RD https://x.example/ (in {folder})", {}),
        ]:
            ledger.register(Document(kind=kind, locator=locator, display=locator,  # type: ignore[arg-type]
                                     text=f"The stored text of a {kind} source.", raw=b"r",
                                     meta=meta))
    rows(ledger_path, "DELETE FROM migration WHERE name = '0007_secret_rules'")
    with Ledger(ledger_path) as ledger:
        find = ledger.source_for
        assert find(url_identity("https://shop.example/cart;jsessionid=S3SS10NAA?p=1",
                                 key)).id == 1
        assert find(url_identity("https://shop.example/cart;jsessionid=OTHER?p=1", key)) is None
        assert find(url_identity("https://shop.example/cart?PHPSESSID=PHPS3SS", key)).id == 2
        from fetchledger.identity.commands import command_locator

        mysql = command_locator(["mysql", "-pDBPASSW0RD", "-e", "select 1"], folder, key=key)
        assert find(mysql.locator).id == 3
        assert ledger.source(3).locator == f"mysql -pREDACTED -e 'select 1' (in {folder})"
        curl = command_locator(["curl", "-ubob:CURLPASSW0RD", "https://x.example/"], folder,
                               key=key)
        assert find(curl.locator).id == 4
    for value in ("S3SS10NAA", "PHPS3SS", "DBPASSW0RD", "CURLPASSW0RD"):
        for table, column in (("source", "locator"), ("source", "display"),
                              ("alias", "locator"), ("version", "meta")):
            for (stored,) in rows(ledger_path, f"SELECT {column} FROM {table}"):
                assert value not in str(stored), (table, column, stored)


@pytest.mark.both_backends
def test_a_ledger_of_the_second_secret_rules_keeps_its_ids_under_the_third(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """A ledger written before issue 13's third pass held the secrets of URLs nested in
    parameters, unquoted ``NAME = V`` and split or positional secrets in clear;
    migration 0011 finds each source again under its old id and redacts them."""
    folder = tmp_path.resolve()
    nested = "https://h.example/login?next=https%3A%2F%2Fh2.example%2Fp%3Ftoken%3DN3ST3DV4L"
    commands = [["tool", "API_KEY = UNQU0T3DV4L"], ["git", "config", "user.password", "GITPW4L"],
                ["ssh", "host", "export TOKEN=SSHT0K3N; ./deploy"]]
    with Ledger(ledger_path) as ledger:
        key = ledger.identity_key
        for kind, locator, meta in [
            ("web", nested, {"final_url": nested}),
            *(("command", f"{shlex.join(argv)} (in {folder})", {"argv": argv})
              for argv in commands),
        ]:
            ledger.register(Document(kind=kind, locator=locator, display=locator,  # type: ignore[arg-type]
                                     text=f"The stored text of a {kind} source.", raw=b"r",
                                     meta=meta))
    rows(ledger_path, "INSERT INTO attempt (kind, locator, at, status, message) VALUES "
         "('web', ?, '2026-01-01T00:00:00Z', 'http_error', 'HTTP 500')",
         nested.replace("N3ST3DV4L", "ATT3MPTV4L"))
    rows(ledger_path, "DELETE FROM migration WHERE name = '0011_nested_secrets'")
    with Ledger(ledger_path) as ledger:
        find = ledger.source_for
        assert find(url_identity(nested, key)).id == 1
        assert find(url_identity(nested.replace("N3ST3DV4L", "OTHER"), key)) is None
        from fetchledger.identity.commands import command_locator

        for number, argv in enumerate(commands, start=2):
            assert find(command_locator(argv, folder, key=key).locator).id == number
            assert "REDACTED" in ledger.source(number).locator
        assert len(ledger.sources()) == 4
    for value in ("N3ST3DV4L", "UNQU0T3DV4L", "GITPW4L", "SSHT0K3N", "ATT3MPTV4L"):
        for table, column in (("source", "locator"), ("source", "display"),
                              ("alias", "locator"), ("version", "meta"), ("attempt", "locator")):
            for (stored,) in rows(ledger_path, f"SELECT {column} FROM {table}"):
                assert value not in str(stored), (table, column, stored)


def test_a_ledger_that_held_user_info_in_identities_keeps_its_ids(
        ledger_path: LedgerLocation) -> None:
    """Identities once kept ``REDACTED@`` for URL user-info (issue 13, third pass: it is a
    credential, not identity): migration 0010 finds each source again without it, under
    its old id; where a source of the same URL without user-info exists, it keeps the
    identity and the other keeps its old locator (never merged, never renumbered)."""
    with Ledger(ledger_path) as ledger:
        for locator in ("https://REDACTED@intranet.example/report?q=1",
                        "https://REDACTED@wiki.example/page",
                        "https://wiki.example/page"):
            ledger.register(Document(kind="web", locator=locator, display=locator,
                                     text="The stored text of a page.", raw=b"r"))
    rows(ledger_path, "DELETE FROM migration WHERE name = '0010_credentials_not_identity'")
    with Ledger(ledger_path) as ledger:
        key = ledger.identity_key
        find = ledger.source_for
        assert find(url_identity("https://u:pw@intranet.example/report?q=1", key)).id == 1
        assert find(url_identity("https://intranet.example/report?q=1", key)).id == 1
        assert find(url_identity("https://wiki.example/page", key)).id == 3
        assert find("https://REDACTED@wiki.example/page").id == 2
        assert [s.id for s in ledger.sources()] == [1, 2, 3]
        assert ledger.source(1).locator == "https://REDACTED@intranet.example/report?q=1"


@pytest.mark.both_backends
def test_a_ledger_that_held_webhooks_and_tokens_in_clear_keeps_its_ids(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """Before credentials known by their shape (webhook URLs whose path is the secret,
    token formats), a Slack webhook's URL was its identity in clear; migration 0012
    finds each source again under its old id — two webhooks stay two sources — and the
    clear values leave locators, displays, aliases, attempts and version metadata (the
    URLs and headers a WARC export writes)."""
    folder = tmp_path.resolve()
    hook = "https://hooks.slack.com/services/T0AAAA/B0BBBB/{}"
    first, second = hook.format("SL4CKS3CR3T0NE"), hook.format("SL4CKS3CR3TTW0")
    token = "ghp_" + "T0k3nV4lu3" * 4
    argv = ["gh", "api", "--hostname", "x", token]
    with Ledger(ledger_path) as ledger:
        key = ledger.identity_key
        for kind, locator, meta in [
            ("web", first, {"final_url": first, "redirects": [first], "exchanges": [
                {"method": "GET", "url": first, "request_headers": [["X-Note", token]],
                 "headers": [["Location", second]], "status": 200}]}),
            ("web", second, {"final_url": second}),
            ("command", f"{shlex.join(argv)} (in {folder})", {"argv": argv}),
        ]:
            ledger.register(Document(kind=kind, locator=locator, display=locator,  # type: ignore[arg-type]
                                     text=f"The stored text of a {kind} source.", raw=b"r",
                                     meta=meta))
    rows(ledger_path, "INSERT INTO attempt (kind, locator, at, status, message) VALUES "
         "('web', ?, '2026-01-01T00:00:00Z', 'http_error', 'HTTP 404')",
         "https://discord.com/api/webhooks/1234/D1SC0RDS3CR3T")
    rows(ledger_path, "DELETE FROM migration WHERE name = '0012_secret_shapes'")
    with Ledger(ledger_path) as ledger:
        find = ledger.source_for
        assert find(url_identity(first, key)).id == 1
        assert find(url_identity(second, key)).id == 2
        assert find(url_identity(hook.format("AN0THERS3CR3T"), key)) is None
        assert ledger.source(1).locator == hook.format("REDACTED")
        from fetchledger.identity.commands import command_locator

        assert find(command_locator(argv, folder, key=key).locator).id == 3
        assert len(ledger.sources()) == 3
    for value in ("SL4CKS3CR3T0NE", "SL4CKS3CR3TTW0", token, "D1SC0RDS3CR3T"):
        for table, column in (("source", "locator"), ("source", "display"),
                              ("alias", "locator"), ("version", "meta"), ("attempt", "locator")):
            for (stored,) in rows(ledger_path, f"SELECT {column} FROM {table}"):
                assert value not in str(stored), (table, column, stored)


@pytest.mark.both_backends
def test_a_ledger_that_held_a_secret_named_with_shell_quoting_keeps_its_ids(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """Before the rule that a secret's name may be spelled with the shell's quoting,
    ``sh -c 'x --tok\\en=V'`` kept V in its identity and display; migration 0014 finds
    each such source again under its old id (two values stay two sources) and V leaves
    the ledger."""
    _commands_found_again(tmp_path, ledger_path, "0014_shell_quoting", [
        ["sh", "-c", "deploy --tok\\en=Qu0t3dV4lu3One"],
        ["sh", "-c", "deploy --tok\\en=Qu0t3dV4lu3Two"],
        ["sh", "-c", "export TO''KEN=Qu0t3dV4lu3Three"]],
        ("Qu0t3dV4lu3One", "Qu0t3dV4lu3Two", "Qu0t3dV4lu3Three"), text="Deployed.")


@pytest.mark.both_backends
def test_a_ledger_that_held_secret_options_of_session_6_keeps_its_ids(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """Before session 6's red team, ``plink -pw V``, ``http -a bob:V`` and ``mount -o
    user=u,password=V`` kept V in identity and display; migration 0016 finds each such
    source again under its old id (two values stay two sources) and V leaves the
    ledger."""
    _commands_found_again(tmp_path, ledger_path, "0016_more_secret_options", [
        ["plink", "-pw", "Opt1onV4lueOne", "host"],
        ["plink", "-pw", "Opt1onV4lueTwo", "host"],
        ["http", "-a", "bob:Opt1onV4lueThree", "https://h/"],
        ["mount", "-o", "user=u,password=Opt1onV4lueFour", "//h/s", "/mnt"]],
        ("Opt1onV4lueOne", "Opt1onV4lueTwo", "Opt1onV4lueThree", "Opt1onV4lueFour"),
        text="Done.")


@pytest.mark.both_backends
def test_a_ledger_that_held_glued_passwords_keeps_its_ids(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """Before session 7, ``smbclient -U alice%V``, ``sqlplus alice/V@db``, ``htpasswd -b f
    u V``, ``xfreerdp /p:V`` and ``curl u:V@h/x`` kept V in identity and display;
    migration 0017 finds each such source again under its old id (two values stay two
    sources) and V leaves the ledger."""
    _commands_found_again(tmp_path, ledger_path, "0017_more_secret_forms", [
        ["smbclient", "//srv/s", "-U", "alice%Gl0edV4lueOne"],
        ["smbclient", "//srv/s", "-U", "alice%Gl0edV4lueTwo"],
        ["sqlplus", "alice/Gl0edV4lueThree@db"],
        ["htpasswd", "-b", "f", "alice", "Gl0edV4lueFour"],
        ["xfreerdp", "/u:alice", "/p:Gl0edV4lueFive"],
        ["curl", "alice:Gl0edV4lueSix@example.com/x"]],
        ("Gl0edV4lueOne", "Gl0edV4lueTwo", "Gl0edV4lueThree", "Gl0edV4lueFour",
         "Gl0edV4lueFive", "Gl0edV4lueSix"), text="Done.")


@pytest.mark.both_backends
def test_a_ledger_that_held_fed_passwords_keeps_its_ids(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """Before session 8, a password piped or here-strung to a reader of standard input
    (``echo V | docker login --password-stdin``, ``echo u:V | chpasswd``), typed by
    expect, in a heredoc's ``CONNECT u/V@db``, after ``isql DSN USER``, in ``exp
    u/V@db``, ``-hashes LM:NT`` or a ``connect('h', 'u', 'V')`` call kept V in identity
    and display; migration 0020 finds each such source again under its old id (two
    values stay two sources) and V leaves the ledger."""
    nt = "8846f7eaee8fb117ad06bdd830b7586c"
    _commands_found_again(tmp_path, ledger_path, "0020_fed_secrets", [
        ["sh", "-c", "echo F3dV4lueOne | docker login --password-stdin -u bob"],
        ["sh", "-c", "echo F3dV4lueTwo | docker login --password-stdin -u bob"],
        ["sh", "-c", "echo bob:F3dV4lueThree | chpasswd"],
        ["sh", "-c", "expect -c 'spawn ssh h; expect \"assword\"; send \"F3dV4lueFour\\r\"'"],
        ["sh", "-c", "sqlplus -s /nolog <<EOF\nCONNECT scott/F3dV4lueFive@orcl\nEOF"],
        ["isql", "DSN", "bob", "F3dV4lueSix"], ["exp", "scott/F3dV4lueSeven@orcl", "file=x"],
        ["secretsdump.py", "-hashes", f":{nt}", "admin@h"],
        ["python3", "-c", "connect('h', 'u', 'F3dV4lueNine')"]],
        ("F3dV4lueOne", "F3dV4lueTwo", "F3dV4lueThree", "F3dV4lueFour", "F3dV4lueFive",
         "F3dV4lueSix", "F3dV4lueSeven", nt, "F3dV4lueNine"), text="Done.")


@pytest.mark.both_backends
def test_a_ledger_that_held_session_9_held_out_secrets_keeps_its_ids(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """Before session 9, a password fed through a program in between, by ``yes``, as a
    default, to a renamed call, after a prompt naming no password, in a JDBC string or
    to ``oc -p``/``vault write`` kept V in identity and display; migration 0021 finds
    each such source again under its old id (two values stay two sources) and V leaves
    the ledger."""
    _commands_found_again(tmp_path, ledger_path, "0022_held_out_secrets", [
        ["sh", "-c", "echo H3ldV4lueOne | tee log | docker login --password-stdin -u bob"],
        ["sh", "-c", "echo H3ldV4lueTwo | tee log | docker login --password-stdin -u bob"],
        ["sh", "-c", "yes H3ldV4lueThree | passwd bob"],
        ["sh", "-c", "psql -W ${PGPASSWORD:-H3ldV4lueFour}"],
        ["python3", "-c", "from requests.auth import HTTPBasicAuth as B; B('u', 'H3ldV4lueFive')"],
        ["sh", "-c", "expect -c 'spawn ssh h; expect \"Retype\"; send \"H3ldV4lueSix\\r\"'"],
        ["java", "-jar", "a.jar", "jdbc:sqlserver://h;user=u;password=H3ldV4lueSeven;"],
        ["oc", "login", "-u", "u", "-p", "H3ldV4lueEight"],
        ["vault", "kv", "put", "secret/app", "value=H3ldV4lueNine"],
        ["sh", "-c", "P=H3ldV4lueTen; sshpass -p \"$P\" ssh h"],
        ["sh", "-c", "echo 'machine h login u password H3ldV4lueEleven' > ~/.netrc"]],
        ("H3ldV4lueOne", "H3ldV4lueTwo", "H3ldV4lueThree", "H3ldV4lueFour", "H3ldV4lueFive",
         "H3ldV4lueSix", "H3ldV4lueSeven", "H3ldV4lueEight", "H3ldV4lueNine", "H3ldV4lueTen",
         "H3ldV4lueEleven"), text="Done.")


@pytest.mark.both_backends
def test_a_ledger_that_held_callback_codes_and_link_tokens_keeps_its_ids(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """Before session 7, an OAuth callback's ``?code=`` and a ``/reset-password/TOKEN``
    link were identities and displays in clear; migration 0017 finds each source again
    under its old id (two codes stay two sources) and the values leave the ledger, while
    ``?code=python`` stays as it was."""
    urls = ["https://app.example/cb?code=4f0AX4XfWh7Kq9ZtR2mB&state=s1",
            "https://app.example/cb?code=Zq8Rt2mB4f0AX4XfWh7K&state=s1",
            "https://app.example/reset-password/Tk9mB2x7Qw4Lp8Zr3Yv",
            "https://docs.example/search?code=python"]
    with Ledger(ledger_path) as ledger:
        key = ledger.identity_key
        for url in urls:
            ledger.register(Document(kind="web", locator=url, display=url, raw=b"r",
                                     text="The stored text of a web source.",
                                     meta={"final_url": url}))
    rows(ledger_path, "DELETE FROM migration WHERE name = '0017_more_secret_forms'")
    with Ledger(ledger_path) as ledger:
        for n, url in enumerate(urls, start=1):
            assert ledger.source_for(url_identity(url, key)).id == n
        assert len(ledger.sources()) == len(urls)
        assert ledger.source(3).locator == "https://app.example/reset-password/REDACTED"
        assert ledger.source(4).locator == urls[3]
    for value in ("4f0AX4XfWh7Kq9ZtR2mB", "Zq8Rt2mB4f0AX4XfWh7K", "Tk9mB2x7Qw4Lp8Zr3Yv"):
        for table, column in (("source", "locator"), ("source", "display"),
                              ("alias", "locator"), ("version", "meta")):
            for (stored,) in rows(ledger_path, f"SELECT {column} FROM {table}"):
                assert value not in str(stored), (table, column, stored)


def _commands_found_again(folder: Path, ledger_path: LedgerLocation, migration: str,
                          commands: list[list[str]], values: tuple[str, ...], *,
                          text: str) -> None:
    """Commands registered as the rules before ``migration`` stored them (their secret
    values in clear) are found again under their ids once it has run (two values stay
    two sources), and their values leave the ledger."""
    from fetchledger.identity.commands import command_locator

    folder = folder.resolve()
    with Ledger(ledger_path) as ledger:
        key = ledger.identity_key
        for argv in commands:
            locator = f"{shlex.join(argv)} (in {folder})"  # as the old rules stored it
            ledger.register(Document(kind="command", locator=locator, display=locator,
                                     text=text, raw=b"r", meta={"argv": argv}))
    rows(ledger_path, f"DELETE FROM migration WHERE name = '{migration}'")
    with Ledger(ledger_path) as ledger:
        for n, argv in enumerate(commands, start=1):
            assert ledger.source_for(command_locator(argv, folder, key=key).locator).id == n
        assert len(ledger.sources()) == len(commands)
        assert "REDACTED" in ledger.source(1).locator
    for value in values:
        for table, column in (("source", "locator"), ("source", "display"),
                              ("alias", "locator"), ("version", "meta")):
            for (stored,) in rows(ledger_path, f"SELECT {column} FROM {table}"):
                assert value not in str(stored), (table, column, stored)


@pytest.mark.both_backends
def test_a_ledger_that_held_stray_percents_keeps_its_ids(
        tmp_path: Path, ledger_path: LedgerLocation) -> None:
    """Before issue 13's fourth pass a stray ``%`` stayed as written (``/50%``) and the
    escapes after one were decoded (``/%b%41`` stored as ``/%bA``, which a second pass
    made ``/%BA``); migration 0021 finds each such source again under its old id, a real
    escape (``/%1A``) keeps its own, and every locator is its own normal form."""
    old = [("https://example.org/50%", "https://example.org/50%"),
           ("https://example.org/%bA", "https://example.org/%b%41"),
           ("https://example.org/p?q=%zz", "https://example.org/p?q=%zz"),
           ("https://example.org/%1A", "https://example.org/%1a"),
           ("GET https://example.org/api/%Ax", "https://example.org/api/%%41x")]
    with Ledger(ledger_path) as ledger:
        key = ledger.identity_key
        for locator, _ in old:
            kind = "http" if locator.startswith("GET ") else "web"
            ledger.register(Document(kind=kind, locator=locator, display=locator,  # type: ignore[arg-type]
                                     text="The stored text of a page.", raw=b"r", meta={}))
    rows(ledger_path, "DELETE FROM migration WHERE name = '0023_stray_percent'")
    with Ledger(ledger_path) as ledger:
        for n, (_, fetched) in enumerate(old[:4], start=1):
            found = ledger.source_for(url_identity(fetched, key))
            assert found is not None and found.id == n, (fetched, found)
            assert url_identity(found.locator, key) == found.locator
        assert ledger.source(5).locator == "GET " + url_identity(old[4][1], key)
        assert len(ledger.sources()) == len(old)
