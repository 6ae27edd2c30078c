#!/bin/sh
# Minimal HTTP/1.0 shim for systemd socket activation (Accept=yes): stdin/stdout are the
# connection. Parses the request head, exports CGI variables, runs holon-trigger.cgi and
# turns its "Status:" header into the HTTP status line.
CGI=${CGI:-/usr/local/lib/holon/holon-trigger.cgi}
read -r method target version
QUERY_STRING=${target#*\?}; [ "$QUERY_STRING" = "$target" ] && QUERY_STRING=""
export QUERY_STRING REQUEST_METHOD="$method"
while IFS= read -r line; do
  line=$(printf '%s' "$line" | tr -d '\r')
  [ -z "$line" ] && break
  name=$(printf '%s' "${line%%:*}" | tr 'a-z' 'A-Z')
  value=${line#*: }
  case "$name" in
    AUTHORIZATION) export HTTP_AUTHORIZATION="$value" ;;
    CONTENT-LENGTH) export CONTENT_LENGTH="$value" ;;
    CONTENT-TYPE) export CONTENT_TYPE="$value" ;;
    X-SOURCE) export HTTP_X_SOURCE="$value" ;;
  esac
done
out=$("$CGI")
status=$(printf '%s\n' "$out" | sed -n 's/^Status: \([0-9][0-9]* [^\r]*\).*$/\1/p' | head -n 1)
printf 'HTTP/1.0 %s\r\n' "${status:-500 Internal Server Error}"
printf '%s\n' "$out" | sed '1{/^Status:/d}'
