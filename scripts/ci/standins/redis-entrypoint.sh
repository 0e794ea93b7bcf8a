#!/bin/sh
# As the official redis image: options alone run redis-server, which runs as the redis user with
# protected mode off.
set -eu
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ]; then
  shift
  exec setpriv --reuid=redis --regid=redis --init-groups redis-server --protected-mode no "$@"
fi
exec "$@"
