"""How the reference memory system stores a connector's feed: a GitHub-like repository of issues.

Each item becomes an issue page ``gh/<feed>/<n>`` laid out as an issue tracker's connector lays
it out (the title as heading, then a link line to the item, then its description), and the feed
itself gets one repository card ``gh/<feed>/index`` the first time an item arrives.  The layout
matters beyond looks: a pointer's synopsis is the page's first line of prose, and a codex index
lists every page of the source, so what a proactive seam injects from a connector's source
(and its token count) follows from it.  gbrain 0.60's GitHub connector stores the same shape,
which is what lets our poisoning cells match its committed ones.
"""

from __future__ import annotations

import json

ISSUE_HOST = "https://github.com"
CARD_LEAF = "index"


def issue_slug(feed: str, number: int) -> str:
    return f"gh/{feed}/{number}"


def card_slug(feed: str) -> str:
    return f"gh/{feed}/{CARD_LEAF}"


def _quoted(text: str) -> str:
    # A JSON string is a YAML scalar that no title can break out of.
    return json.dumps(text, ensure_ascii=False)


def issue_markdown(feed: str, number: int, title: str, body: str) -> str:
    """One open issue of ``feed`` as a page."""
    url = f"{ISSUE_HOST}/{feed}/issues/{number}"
    front = [f"title: {_quoted(title)}", "type: issue", f"number: {number}", "state: open", f"url: {_quoted(url)}"]
    text = [f"# {title}", "", f"[Issue #{number}]({url}) · open", "", "## Description", "",
            body.strip() or "_no description_"]
    return "---\n" + "\n".join(front) + "\n---\n\n" + "\n".join(text) + "\n"


def card_markdown(feed: str) -> str:
    """The feed's repository card: its name (the page title) and where it lives."""
    return (f"---\ntitle: {_quoted(feed)}\ntype: repo\nurl: {_quoted(f'{ISSUE_HOST}/{feed}')}\n---\n\n"
            f"# {feed}\n\nDefault branch: main\n")
