#!/usr/bin/env bash
# A store never follows a link it did not make. arec/tmp replaced by a link to another directory: record
# refuses the store naming it (exit 2) and nothing in that directory is deleted. A FIFO in arec/tmp:
# record and check never block on it, and check reports it. A blob replaced by a link to a file of the
# same size: check reports it, push and verify refuse it, export reads nothing through it.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
mkdir -p "$T/in" "$T/elsewhere"
echo app >"$T/in/app"
expect_exit 0 "$AREC" record --module sec --name app --file "$T/in/app=/srv/app"
digest=${OUT#*@}

note "arec/tmp is a link to another directory: refused, naming it; nothing there is deleted"
for i in 1 2 3; do echo "precious $i" >"$T/elsewhere/.tmp-precious$i"; done
echo "precious" >"$T/elsewhere/notes"
touch -d '1 hour ago' "$T/elsewhere"/.tmp-precious* "$T/elsewhere/notes"
before=$(tree_state "$T/elsewhere")
mv "$AREC_STORE/arec/tmp" "$T/tmp-was"
ln -s "$T/elsewhere" "$AREC_STORE/arec/tmp"
echo changed >"$T/in/app"
expect_exit 2 "$AREC" record --module sec --name app --file "$T/in/app=/srv/app"
expect_one_line_error "$AREC_STORE/arec/tmp is a symbolic link where arec keeps a directory"
expect_eq "$before" "$(tree_state "$T/elsewhere")" "the directory the link points at, after record"
expect_exit 1 "$AREC" check --repair
expect_contains "$OUT" "problem: store $AREC_STORE: $AREC_STORE/arec/tmp is a symbolic link where arec keeps a directory" "check --repair"
expect_exit 2 "$AREC" gc
expect_eq "$before" "$(tree_state "$T/elsewhere")" "the directory the link points at, after check --repair and gc"
rm "$AREC_STORE/arec/tmp"
mv "$T/tmp-was" "$AREC_STORE/arec/tmp"

note "blobs/sha256 or arec a link: refused the same way"
mv "$AREC_STORE/arec" "$T/arec-was"
ln -s "$T/arec-was" "$AREC_STORE/arec"
expect_exit 2 "$AREC" record --module sec --name app --file "$T/in/app=/srv/app"
expect_one_line_error "$AREC_STORE/arec is a symbolic link"
rm "$AREC_STORE/arec"
mv "$T/arec-was" "$AREC_STORE/arec"

note "a FIFO in arec/tmp: record and check finish at once, and check reports it"
mkfifo "$AREC_STORE/arec/tmp/.tmp-fifo"
touch -h -d '1 hour ago' "$AREC_STORE/arec/tmp/.tmp-fifo"
timed 20000 0 timeout 30 "$AREC" record --module sec --name app --file "$T/in/app=/srv/app"
[[ -p $AREC_STORE/arec/tmp/.tmp-fifo ]] || fail "the FIFO was removed by the sweep"
timed 20000 1 timeout 30 "$AREC" check
expect_contains "$OUT" "problem: $AREC_STORE/arec/tmp/.tmp-fifo: a FIFO, not a temporary file arec writes" "check"
rm "$AREC_STORE/arec/tmp/.tmp-fifo"

note "a link in arec/tmp: reported by check, never followed or removed by the sweep"
echo "precious" >"$T/elsewhere/target"
touch -d '1 hour ago' "$T/elsewhere/target"
ln -s "$T/elsewhere/target" "$AREC_STORE/arec/tmp/.tmp-link"
expect_exit 0 "$AREC" record --module sec --name other --file "$T/in/app=/srv/app"
[[ -L $AREC_STORE/arec/tmp/.tmp-link && -f $T/elsewhere/target ]] || fail "the sweep removed the link or its target"
expect_exit 1 "$AREC" check
expect_contains "$OUT" "problem: $AREC_STORE/arec/tmp/.tmp-link: a symbolic link, not a temporary file arec writes" "check"
rm "$AREC_STORE/arec/tmp/.tmp-link"

note "a blob replaced by a link to a file of the same size: check reports it; push, verify and export refuse it"
expect_exit 0 "$AREC" records --json
digest=$(jq -r '.[] | select(.module == "sec" and .name == "app") | .digest' <<<"$OUT")
layer=$(jq -r '.layers[0].digest' "$AREC_STORE/blobs/sha256/${digest#sha256:}")
blob=$AREC_STORE/blobs/sha256/${layer#sha256:}
head -c "$(stat -c %s "$blob")" /dev/zero >"$T/elsewhere/same-size"
mv "$blob" "$T/blob-was"
ln -s "$T/elsewhere/same-size" "$blob"
expect_exit 1 "$AREC" check
expect_contains "$OUT" "problem: $blob: a symbolic link where a blob must be" "check"
# The registry is never reached: the refusal comes first.
printf '{"self": "n1", "nodes": {"n1": {"ports": {"registry": 9}}}, "services": {"registry": "n1"}}\n' >"$T/nodes.json"
export AREC_NODES=$T/nodes.json
expect_exit 2 "$AREC" push sec/app
expect_one_line_error "$blob: a symbolic link where a blob must be"
expect_exit 2 "$AREC" verify sec/app
expect_one_line_error "$blob: a symbolic link where a blob must be"
expect_exit 2 "$AREC" export --output "$T/bundle.tar" sec/app
# A blob that is a link is not one the store holds (Layout::has_blob counts regular files only).
expect_one_line_error "the store lacks its blob $layer (see arec check)"
[[ ! -e $T/bundle.tar ]] || fail "export wrote a bundle through the link"
rm "$blob"
mv "$T/blob-was" "$blob"
expect_exit 0 "$AREC" check
