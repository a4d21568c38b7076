#!/usr/bin/env bash
# Every bad input: exit 2, one line naming the input and what is wrong, and the store as it was.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
mkdir -p "$T/in/tree/sub" "$T/outside"
echo app >"$T/in/app"
echo f >"$T/in/tree/sub/f"
"$AREC" record --module mesh --name app --file "$T/in/app" >/dev/null
before=$(tree_state "$T/store")

bad() { # needle args...
  local needle=$1
  shift
  expect_exit 2 "$AREC" record "$@"
  expect_one_line_error "$needle"
  expect_eq "$before" "$(tree_state "$T/store")" "store after: $*"
}

bad "--file \"$T/in/missing\": No such file or directory" --module mesh --name app --file "$T/in/missing"
bad "destination \"usr/bin/app\" must be an absolute path" --module mesh --name app --file "$T/in/app=usr/bin/app"
bad "destination \"/usr/../etc/app\" must not contain \"..\"" --module mesh --name app --file "$T/in/app=/usr/../etc/app"
bad "module \"Mesh\": not an OCI repository path component" --module Mesh --name app --file "$T/in/app"
bad "name \"my app\": not an OCI repository path component" --module mesh --name "my app" --file "$T/in/app"
bad "name \"a/b\": not an OCI repository path component" --module mesh --name a/b --file "$T/in/app"
bad "--file \"$T/in/tree\": is a directory (use --dir)" --module mesh --name app --file "$T/in/tree"
bad "--dir \"$T/in/app\": not a directory" --module mesh --name app --dir "$T/in/app"
bad "nothing to record" --module mesh --name app
bad "--env \"NOVALUE\": expected KEY=VALUE" --module mesh --name app --file "$T/in/app" --env NOVALUE
bad "compression \"lz4\": expected gzip, zstd or none" --module mesh --name app --file "$T/in/app" --compression lz4
bad "--runtime \"static\": expected auto or none" --module mesh --name app --file "$T/in/app" --runtime static
bad "base \"oci:$T/nowhere\"" --module mesh --name app --file "$T/in/app" --base "oci:$T/nowhere"
bad "no image named \"mesh/none\"" --module mesh --name app --file "$T/in/app" --base "oci:$T/store:mesh/none"
bad "expected oci:DIR[:REF]" --module mesh --name app --file "$T/in/app" --base "docker-archive:x"

bad "base \"mesh/none\": no record of mesh/none in the store" --module mesh --name app --file "$T/in/app" --base mesh/none
bad "--file \"$T/in/app=/.\": destination is the image root" --module mesh --name app --file "$T/in/app=/."

note "an entry under a symlink another input records is refused, naming both; one through it, too"
echo secret >"$T/outside/secret"
ln -s ../../outside "$T/in/tree/sub/escape"
bad "/sub/escape/x (--dir $T/in/tree) passes through the symlink /sub/escape -> ../../outside (--dir $T/in/tree)" \
  --module mesh --name app --dir "$T/in/tree" --dir "$T/in/tree=/sub/escape/x"
bad "/sub/escape is a directory for --file $T/in/app and the symlink -> ../../outside for --dir $T/in/tree" \
  --module mesh --name app --dir "$T/in/tree" --file "$T/in/app=/sub/escape/"
rm "$T/in/tree/sub/escape"

note "SOURCE_DATE_EPOCH that is not a number"
SOURCE_DATE_EPOCH=yesterday bad "SOURCE_DATE_EPOCH=yesterday: not a time" --module mesh --name app --file "$T/in/app"

note "a store that is something else is not written into"
mkdir -p "$T/notes" && echo keep >"$T/notes/todo.txt"
expect_exit 2 "$AREC" record --module mesh --name app --file "$T/in/app" --store "$T/notes"
expect_one_line_error "store $T/notes: exists and is not an OCI image layout"
expect_eq "todo.txt" "$(ls "$T/notes")" "the other directory"

# Unreadable files and unwritable stores need a user the permissions apply to.
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
  chmod 755 "$T" "$T/in"
  note "an unreadable file"
  echo secret >"$T/in/private" && chmod 600 "$T/in/private"
  mkdir -p "$T/nobody-store" && chown 65534 "$T/nobody-store"
  expect_exit 2 as_nobody "$AREC" record --module mesh --name app --file "$T/in/private" --store "$T/nobody-store/s"
  expect_one_line_error "--file \"$T/in/private\": Permission denied"
  expect_eq "" "$(ls "$T/nobody-store")" "store of an unreadable record"
  note "an unwritable store"
  chmod 644 "$T/in/app"
  expect_exit 2 as_nobody "$AREC" record --module mesh --name app --file "$T/in/app"
  expect_one_line_error "$T/store"
  expect_eq "$before" "$(tree_state "$T/store")" "store after an unwritable attempt"
else
  note "SKIP unreadable-file and unwritable-store cases: they need root (to act as another user) and setpriv"
fi
echo PASS
