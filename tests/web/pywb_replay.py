"""Runs in pywb's own virtualenv (``make pywb``), not under pytest: pywb requires
brotlipy, whose ``brotli`` module would shadow the Brotli package fetchledger uses.

``python pywb_replay.py WARC FOLDER URL...`` indexes WARC with ``cdx-indexer --verify
--allrecords`` (strict: HTTP protocol, status and verbs checked), adds it to a new
collection in FOLDER
the way pywb's collection manager does (``wb-manager init``/``add``, its own indexer,
POST/PUT bodies appended to the key), then asks pywb's WSGI app, in process through
webtest, for each URL in two modes: ``id_`` (the archived bytes as they are) and
``mp_`` (rewritten for the browser, as a visitor gets it). Prints one JSON object:
the index lines and each reply (status, headers, body)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def _reply(app: Any, path: str) -> dict[str, Any]:
    reply = app.get(path, expect_errors=True)
    return {"status": reply.status_int, "headers": [[k, v] for k, v in reply.headerlist],
            "body": reply.body.decode("utf-8", "replace")}


def main(argv: list[str]) -> None:
    warc, folder, *urls = argv
    os.chdir(folder)
    from pywb.indexer.cdxindexer import main as cdx_indexer
    from pywb.manager.manager import main as wb_manager

    # pywb's indexer in its strict mode first: every response's protocol and status
    # and every request's verb checked, all records included (it raises on a bad one)
    cdx_indexer(["--verify", "--allrecords", "--cdxj", "-o", "verified.cdxj", warc])
    verified = Path("verified.cdxj").read_text(encoding="utf-8").splitlines()

    wb_manager(["init", "archive"])
    wb_manager(["add", "archive", warc])
    index = Path("collections/archive/indexes/index.cdxj").read_text(encoding="utf-8")

    from pywb.apps.frontendapp import FrontEndApp
    from webtest import TestApp

    app = TestApp(FrontEndApp())
    replies = {url: {mode: _reply(app, f"/archive/{mode}/{url}") for mode in ("id_", "mp_")}
               for url in urls}
    print(json.dumps({"index": index.splitlines(), "verified": verified, "replies": replies}))


if __name__ == "__main__":
    main(sys.argv[1:])
