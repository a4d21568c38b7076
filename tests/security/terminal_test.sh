#!/usr/bin/env bash
# Nothing printed that came from outside drives the terminal: escapes and newlines in a registry's error
# body, in a Docker-Content-Digest header, in catalog names, in an imported record's fields and in layer
# entry names reach stdout and stderr written as text ("\x1b", "\n"), never as raw control bytes.
AREC=$1
source "$(dirname "$0")/hostile.sh"

# No byte below 0x20 but newline, and no DEL, in a file.
no_control_bytes() { # file what
  local found
  found=$(LC_ALL=C tr -d '\n' <"$1" | LC_ALL=C tr -d '\040-\176\200-\377' | od -An -c | tr -d ' \n')
  expect_eq "" "$found" "raw control bytes in $2"
}
# Exactly one line of output: a newline from outside must not forge a second.
one_line() { expect_eq 1 "$(grep -c '' "$1")" "lines in $2"; }

start_hostile terminal
note "a registry's error body holding an OSC title, colours and a newline"
"$AREC" pull "$HOSTILE/evil/app:latest" >"$T/out" 2>"$T/err" && fail "pull succeeded"
no_control_bytes "$T/err" "pull's error"
one_line "$T/err" "pull's error"
expect_contains "$(cat "$T/err")" '\x1b]0;pwned\x07\x1b[31mRED\x1b[0m forged line' "pull's error"

note "a Docker-Content-Digest header holding escapes"
"$AREC" pull "$HOSTILE/evil/digest:latest" >"$T/out" 2>"$T/err" && fail "pull succeeded"
no_control_bytes "$T/err" "pull's error"
one_line "$T/err" "pull's error"

note "catalog names holding escapes"
"$AREC" -v needs-rebuild --catalog >"$T/out" 2>"$T/err" || true
no_control_bytes "$T/out" "needs-rebuild's output"
no_control_bytes "$T/err" "needs-rebuild's messages"

# listed_catalog REPOSITORY TAG: the hostile registry's catalog from now on (read at each request).
listed_catalog() {
  jq -n --arg r "$1" --arg t "$2" '{($r): [$t]}' >"$T/hostile-terminal/catalog.json.new"
  mv "$T/hostile-terminal/catalog.json.new" "$T/hostile-terminal/catalog.json"
}
# catalog_refused NEEDLE: needs-rebuild --catalog fails as the registry's failure (exit 3), in one line
# holding NEEDLE and no raw control byte.
catalog_refused() {
  local rc=0
  "$AREC" needs-rebuild --catalog >"$T/out" 2>"$T/err" || rc=$?
  expect_eq 3 "$rc" "needs-rebuild --catalog's exit"
  no_control_bytes "$T/err" "needs-rebuild's error"
  one_line "$T/err" "needs-rebuild's error"
  expect_contains "$(cat "$T/err")" "$1" "needs-rebuild's error"
}
note "catalog names and tags outside the distribution grammar: exit 3, named escaped, never requested"
listed_catalog ../../etc latest
: >"$HOSTILE_LOG"
catalog_refused "reading the catalog of $HOSTILE (GET /v2/_catalog): the registry lists \"../../etc\", which is not a repository name"
expect_eq 0 "$(grep -c 'tags/list' "$HOSTILE_LOG" || true)" "tag lists requested after a catalog naming ../../etc"
listed_catalog $'evil/\e[31mred' latest
catalog_refused 'the registry lists "evil/\x1b[31mred", which is not a repository name'
listed_catalog evil/app $'latest\nforged'
catalog_refused "listing the tags of evil/app at $HOSTILE: the registry lists the tag \"latest\\nforged\", which is not a tag"
note "move's plan says the catalog was not read, and why, escaped"
listed_catalog $'evil/\e[31mred' latest
expect_exit 0 "$AREC" move --to n1 --port 5001
printf '%s\n' "$OUT" >"$T/out"
no_control_bytes "$T/out" "move's plan"
expect_contains "$OUT" 'the registry lists "evil/\x1b[31mred", which is not a repository name' "move's plan"
rm "$T/hostile-terminal/catalog.json"

note "an imported record whose fields hold escapes and newlines: refused, and said without them"
mkdir -p "$T/in"
echo app >"$T/in/app"
AREC_STORE=$T/source "$AREC" record --module sec --name app --file "$T/in/app=/srv/app" >/dev/null
AREC_STORE=$T/source "$AREC" export sec/app -o "$T/bundle.tar" >/dev/null
mkdir "$T/b" && tar -xf "$T/bundle.tar" -C "$T/b"
for field in dev.arec.target org.opencontainers.image.created org.opencontainers.image.base.digest; do
  jq --arg k "$field" --arg v $'\e]0;pwned\a\e[31m\nforged' '.manifests[0].annotations[$k] = $v' "$T/b/index.json" >"$T/index.json"
  cp "$T/index.json" "$T/b/index.json.new" && mv "$T/b/index.json.new" "$T/b/index.json"
  (cd "$T/b" && tar -cf "$T/evil.tar" oci-layout index.json blobs)
  AREC_STORE=$T/import-store "$AREC" import "$T/evil.tar" >"$T/out" 2>"$T/err" && fail "import of a record with a hostile $field succeeded"
  no_control_bytes "$T/err" "import's error ($field)"
  one_line "$T/err" "import's error ($field)"
  tar -xf "$T/bundle.tar" -C "$T/b" index.json
done
[[ ! -e $T/import-store ]] || fail "a refused import created the store"

note "layer entry names holding escapes: inspect --files escapes them"
mkdir -p "$T/tree"
printf x >"$T/tree/"$'evil\e]0;pwned\a\e[31m\nname'
"$AREC" record --module sec --name evil --dir "$T/tree=/srv" >/dev/null
"$AREC" inspect sec/evil --files >"$T/out" 2>"$T/err"
no_control_bytes "$T/out" "inspect --files"
expect_contains "$(cat "$T/out")" '/srv/evil\x1b]0;pwned\x07\x1b[31m\nname' "inspect --files"
"$AREC" records >"$T/out" 2>"$T/err"
no_control_bytes "$T/out" "records"
