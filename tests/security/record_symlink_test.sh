#!/usr/bin/env bash
# `arec record` of a tree holding symlinks that point outside it: an absolute link (to a file or to a
# directory) is stored as a link, and nothing it points at is read into the layer; a relative link that
# climbs out of the tree is refused (exit 2), never followed.
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

note "a relative link climbing out of the tree: refused, naming it"
ln -s ../../outside/secret "$T/in/tree/sub/escape"
expect_exit 2 "$AREC" record --module sec --name links --dir "$T/in/tree=/srv/tree"
expect_one_line_error "symlink sub/escape -> ../../outside/secret points outside the directory"
echo PASS
