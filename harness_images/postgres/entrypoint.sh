#!/bin/sh
# Minimal subset of the official postgres image's entrypoint: initdb on first start,
# create POSTGRES_USER/POSTGRES_DB, listen on all interfaces of the (internal) network.
set -eu
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
: "${POSTGRES_HOST_AUTH_METHOD:=}"
if [ -z "$POSTGRES_HOST_AUTH_METHOD" ]; then
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then POSTGRES_HOST_AUTH_METHOD=scram-sha-256; else
    echo "bb-postgres: set POSTGRES_PASSWORD or POSTGRES_HOST_AUTH_METHOD=trust" >&2; exit 1; fi
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:-unused}" >"$pwfile"
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust \
    --auth-host="$POSTGRES_HOST_AUTH_METHOD" -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all all $POSTGRES_HOST_AUTH_METHOD" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != "postgres" ]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    createdb -U "$POSTGRES_USER" "$POSTGRES_DB"
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
fi
if [ "${1:-}" = "postgres" ]; then
  shift
  exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql "$@"
fi
exec "$@"
