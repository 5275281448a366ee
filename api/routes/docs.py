"""The words and the methods a page refers to: the glossary (/glossary and
/api/glossary) and the project's docs/*.md as pages (/help, /help/{name}).

The docs are the same Markdown files the repository holds, rendered by
markdown-it (CommonMark and tables; raw HTML in them is shown as text, not
run). A link from one doc to another (`insights.md#luck`) becomes a link to
its page; the screenshots they show are served beside them. A server run
from an installed package without the docs folder says so instead.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, HTMLResponse, Response
from markdown_it import MarkdownIt
from markupsafe import Markup
from pydantic import BaseModel

from api.glossary import TERMS, as_json
from api.responses import json_response, not_found, page

router = APIRouter()

DOCS = Path(__file__).resolve().parents[2] / "docs"
_NAME = r"^[a-z0-9][a-z0-9-]{0,60}$"
_MD_LINK = re.compile(r'href="(?!https?:|/|#)([a-z0-9-]+)\.md(#[^"]*)?"')
_IMG = re.compile(r'src="(?!https?:|/)([a-z0-9-]+\.png)"')

# the docs a reader of the pages wants first; the rest follow by title
FIRST = ("rules", "analysis", "insights", "fairness", "exports", "certificate", "deal-commitment")


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def _title(text: str, name: str) -> str:
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    return first.lstrip("#").strip() if first.startswith("#") else name


def render_doc(text: str) -> str:
    """A doc's Markdown as HTML, its links to other docs made links to their pages.

    >>> render_doc("See [the rules](rules.md#tiles) and ![a](screenshot-x.png).")
    '<p>See <a href="/help/rules#tiles">the rules</a> and <img src="/help/screenshot-x.png" alt="a" />.</p>\\n'
    """
    # a block that scrolls sideways takes the focus, so that a keyboard can scroll it
    html = _md().render(text).replace("<pre>", '<pre tabindex="0">').replace("<table>", '<table tabindex="0">')
    html = _MD_LINK.sub(lambda m: f'href="/help/{m[1]}{m[2] or ""}"', html)
    return _IMG.sub(lambda m: f'src="/help/{m[1]}"', html)


def _docs() -> list[tuple[str, str]]:
    """(name, title) of every doc, the readers' first."""
    if not DOCS.is_dir():
        return []
    found = {p.stem: _title(p.read_text(encoding="utf-8"), p.stem) for p in DOCS.glob("*.md")}
    first = [n for n in FIRST if n in found]
    return [(n, found[n]) for n in first] + sorted(((n, t) for n, t in found.items() if n not in FIRST),
                                                    key=lambda x: x[1].lower())


@router.get("/glossary", response_class=HTMLResponse, include_in_schema=False)
def glossary() -> HTMLResponse:
    return page("glossary.html", nav="help", terms=TERMS)


class GlossaryTerm(BaseModel):
    """One word of the game, as /glossary shows it."""

    key: str  # its anchor: /glossary#key
    english: str
    spanish: str  # "" where the game has no Spanish word of its own
    meaning: str
    also: list[str]  # other spellings and words for it


@router.get("/api/glossary", tags=["help"], summary="The game's words", operation_id="glossary",
            response_model=list[GlossaryTerm])
def api_glossary() -> Response:
    """Every word of the game the pages use: the key of its entry on /glossary,
    the English and Spanish words, the meaning, and other spellings."""
    return json_response(as_json())


@router.get("/help", response_class=HTMLResponse, include_in_schema=False)
def help_index() -> HTMLResponse:
    return page("help.html", nav="help", docs=_docs())


@router.get("/help/{name}", response_class=HTMLResponse, include_in_schema=False, response_model=None)
def help_doc(name: str = PathParam(max_length=80)) -> Response:
    if re.fullmatch(r"[a-z0-9-]+\.png", name):
        shot = DOCS / name
        return FileResponse(shot, media_type="image/png") if shot.is_file() else not_found(f"No picture {name}.")
    path = DOCS / f"{name}.md"
    if not re.match(_NAME, name) or not path.is_file():
        why = "" if DOCS.is_dir() else " The docs ship with the source; this server was started without them."
        return not_found(f"No page of the docs is called {name!r}.{why}")
    text = path.read_text(encoding="utf-8")
    return page("doc.html", nav="help", title=_title(text, name), doc=name, body=Markup(render_doc(text)))
