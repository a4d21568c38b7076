#!/usr/bin/env bash
# `arec record` of a tree holding symlinks that point outside it: an absolute link (to a file or to a
# directory) and a relative link that climbs out of the tree are stored as links, and nothing they point
# at is read into the layer. An entry whose path passes through a recorded symlink is refused (exit 2).
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
mkdir -p "$T/in/tree/sub" "$T/outside/dir"
secret=outside-secret-$RANDOM$RANDOM
echo "$secret" >"$T/outside/secret"
echo "$secret" >"$T/outside/dir/inner"
echo app >"$T/in/tree/app"
ln -s "$T/outside/secret" "$T/in/tree/sub/file-link"
ln -s "$T/outside/dir" "$T/in/tree/sub/dir-link"
ln -s "../app" "$T/in/tree/sub/inside-link"
outside_before=$(tree_state "$T/outside")

expect_exit 0 "$AREC" record --module sec --name links --dir "$T/in/tree=/srv/tree"
digest=${OUT#*@}
manifest=$AREC_STORE/blobs/sha256/${digest#sha256:}
layer=$AREC_STORE/blobs/sha256/$(jq -r '.layers[0].digest' "$manifest" | cut -d: -f2)
listing=$(tar -tvzf "$layer")
expect_contains "$listing" "srv/tree/sub/file-link -> $T/outside/secret" "layer listing"
expect_contains "$listing" "srv/tree/sub/dir-link -> $T/outside/dir" "layer listing"
expect_contains "$listing" "srv/tree/sub/inside-link -> ../app" "layer listing"
expect_not_contains "$listing" "inner" "layer listing (nothing read through the directory link)"
expect_eq 0 "$(zcat "$layer" | grep -ac "$secret" || true)" "copies of the outside file's content in the layer"
expect_eq "$outside_before" "$(tree_state "$T/outside")" "the directory outside after recording"

note "a relative link climbing out of the tree: kept as the link it is, never followed"
ln -s ../../outside/secret "$T/in/tree/sub/escape"
ln -s ../../outside/dir "$T/in/tree/sub/escape-dir"
expect_exit 0 "$AREC" record --module sec --name links --dir "$T/in/tree=/srv/tree"
layer=$AREC_STORE/blobs/sha256/$(jq -r '.layers[0].digest' "$AREC_STORE/blobs/sha256/$(cut -d: -f2 <<<"${OUT#*@}")" | cut -d: -f2)
listing=$(tar -tvzf "$layer")
expect_contains "$listing" "srv/tree/sub/escape -> ../../outside/secret" "layer listing"
expect_contains "$listing" "srv/tree/sub/escape-dir -> ../../outside/dir" "layer listing"
expect_not_contains "$listing" "inner" "layer listing (nothing read through the climbing link)"
expect_eq 0 "$(zcat "$layer" | grep -ac "$secret" || true)" "copies of the outside file's content in the layer"
expect_eq "$outside_before" "$(tree_state "$T/outside")" "the directory outside after recording"

note "an entry under a symlink recorded by an earlier input: refused, naming both, store untouched"
mkdir -p "$T/in/more/dir-link"
echo planted >"$T/in/more/dir-link/planted"
store_before=$(tree_state "$AREC_STORE")
expect_exit 2 "$AREC" record --module sec --name under --dir "$T/in/tree=/srv/tree" --dir "$T/in/more=/srv/tree/sub/escape-dir/x"
expect_one_line_error "/srv/tree/sub/escape-dir/x (--dir $T/in/more) passes through the symlink /srv/tree/sub/escape-dir -> ../../outside/dir (--dir $T/in/tree)"
expect_exit 2 "$AREC" record --module sec --name under --dir "$T/in/tree=/srv/tree" --file "$T/in/tree/app=/srv/tree/sub/dir-link/"
# Files are taken before trees: here the directory comes first, then the link.
expect_one_line_error "/srv/tree/sub/dir-link is a directory for --file $T/in/tree/app and the symlink -> $T/outside/dir for --dir $T/in/tree"
note "a directory where another input records a symlink, in either order"
expect_exit 2 "$AREC" record --module sec --name under --dir "$T/in/tree=/srv/tree" --dir "$T/in/more=/srv/tree/sub"
expect_one_line_error "/srv/tree/sub/dir-link is a directory for --dir $T/in/more and the symlink -> $T/outside/dir for --dir $T/in/tree"
expect_exit 2 "$AREC" record --module sec --name under --dir "$T/in/more=/srv/tree/sub" --dir "$T/in/tree=/srv/tree"
expect_one_line_error "/srv/tree/sub/dir-link is a directory for --dir $T/in/more and the symlink -> $T/outside/dir for --dir $T/in/tree"
expect_eq "$store_before" "$(tree_state "$AREC_STORE")" "the store after refused records"
expect_eq "$outside_before" "$(tree_state "$T/outside")" "the directory outside after all"
echo PASS
