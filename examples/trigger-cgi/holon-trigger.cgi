#!/bin/sh
# CGI bridge: POST /cgi-bin/holon-trigger.cgi with header "Authorization: Bearer <token>"
# (or ?token=... if your caller cannot set headers). The request body, up to 64 KiB,
# becomes the wake hint payload. Works behind any CGI-capable server (nginx+fcgiwrap,
# Apache mod_cgi, lighttpd, busybox httpd). The token reaches holon in its environment
# (HOLON_TRIGGER_TOKEN), never on its command line where `ps` shows it to every user;
# never log QUERY_STRING or Authorization in your server config.
HOLON=${HOLON:-/usr/local/bin/holon}
export HOLON_HOME=${HOLON_HOME:-/var/lib/holon}

token=""
case "$HTTP_AUTHORIZATION" in
  Bearer\ *) token=${HTTP_AUTHORIZATION#Bearer } ;;
esac
if [ -z "$token" ]; then
  token=$(printf '%s' "$QUERY_STRING" | sed -n 's/^.*token=\([A-Za-z0-9_-]*\).*$/\1/p')
fi

len=${CONTENT_LENGTH:-0}
[ "$len" -gt 65536 ] && len=65536
head -c "$len" | HOLON_TRIGGER_TOKEN="$token" "$HOLON" trigger deliver \
  --source "${HTTP_X_SOURCE:-http}" \
  --content-type "${CONTENT_TYPE:-text/plain}" >/dev/null 2>&1
case $? in
  0) printf 'Status: 202 Accepted\r\nContent-Type: text/plain\r\n\r\naccepted\n' ;;
  2) printf 'Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nunknown trigger\n' ;;
  3) printf 'Status: 409 Conflict\r\nContent-Type: text/plain\r\n\r\nagent stopped\n' ;;
  *) printf 'Status: 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\nerror\n' ;;
esac
