"""How a container reaches the brain: a bind-mounted Unix socket or a run network.

The embedded Postgres listens only on a Unix socket in a temp dir
(``postgresql://postgres@/bb_x?host=/tmp/xyz/pg``): we bind-mount that directory at
the same path and give the container no network at all.  A TCP URL (compose
Postgres) instead needs a run-scoped internal network that Postgres is attached to.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}


@dataclass(frozen=True)
class DbTarget:
    socket_dir: str | None = None  # Unix-socket mode
    host: str | None = None  # TCP mode
    port: int | None = None

    @property
    def is_socket(self) -> bool:
        return self.socket_dir is not None


def parse_target(url: str) -> DbTarget:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    qhost = query.get("host", "")
    if qhost.startswith("/"):
        return DbTarget(socket_dir=qhost)
    netloc_host = unquote(parts.hostname or "") if parts.hostname else ""
    # libpq also accepts a percent-encoded socket path in the host position.
    if netloc_host.startswith("/"):
        return DbTarget(socket_dir=netloc_host)
    if not netloc_host and not qhost:
        # libpq default: the compiled-in socket dir; we cannot know it, assume Debian's.
        return DbTarget(socket_dir="/var/run/postgresql")
    return DbTarget(host=qhost or netloc_host, port=parts.port or int(query.get("port", 0) or 5432))


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def rewrite_host(url: str, new_host: str) -> str:
    """Replace host[:port] of a TCP URL, keeping user, password, dbname and query."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in ("host", "port")]
    userinfo = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
    return urlunsplit((parts.scheme, userinfo + new_host, parts.path, urlencode(query), parts.fragment))
