#!/usr/bin/env bash
# Where inputs land and what a record says of them: a --file destination ending in "/" is a directory
# the file goes into (cp, Dockerfile COPY); a --dir holding relative symlinks that climb out of it is
# recorded link for link (the test machine's /usr/bin, read back with umoci); `--base M/N` builds on the
# store's latest record of that name without network; a work tree with uncommitted changes records
# its revision as <sha>-dirty.
AREC=$1
source "$(dirname "$0")/../lib.sh"
command -v umoci >/dev/null || skip "umoci is not installed (scripts/deps installs it)"
export AREC_STORE=$T/store
# No registry: the node settings (which a --base reads for the keys it trusts) name one on a port
# nothing listens on, so anything that tried the network would fail.
printf '{"self": "n", "nodes": {"n": {"ports": {"registry": 9}}}, "services": {"registry": "n"}}\n' >"$T/nodes.json"
export AREC_NODES=$T/nodes.json
cd "$T"

# layer_listing DIGEST: `tar -tv` of the last layer of the record with manifest DIGEST (uncompressed or gzip).
layer_listing() {
  local manifest=$AREC_STORE/blobs/sha256/${1#sha256:}
  tar -tvf "$AREC_STORE/blobs/sha256/$(jq -r '.layers[-1].digest' "$manifest" | cut -d: -f2)"
}

mkdir -p "$T/in"
printf 'tool\n' >"$T/in/tool"
chmod +x "$T/in/tool"

note "--file SRC=/usr/local/bin/ puts the file inside the directory; =/ at the root"
expect_exit 0 "$AREC" record --module rec --name into --file "$T/in/tool=/usr/local/bin/" --file "$T/in/tool=/"
listing=$(layer_listing "${OUT#*@}"; echo .)
expect_contains "$listing" " usr/local/bin/tool"$'\n' "layer listing"
expect_contains "$listing" "drwxr-xr-x 0/0               0 1970-01-01 00:00 usr/local/bin/" "layer listing"
expect_contains "$listing" " tool"$'\n' "layer listing (the file at the root)"
umoci unpack --rootless --image "$AREC_STORE:rec/into" "$T/into" >/dev/null
[[ -d $T/into/rootfs/usr/local/bin ]] || fail "umoci: /usr/local/bin is not a directory"
cmp "$T/in/tool" "$T/into/rootfs/usr/local/bin/tool" || fail "umoci: /usr/local/bin/tool differs"
cmp "$T/in/tool" "$T/into/rootfs/tool" || fail "umoci: /tool differs"
expect_exit 2 "$AREC" record --module rec --name root --file "$T/in/tool=/."
expect_one_line_error "destination is the image root; write =/ to put the file in it"

note "relative symlinks climbing out of a --dir are recorded as they are; umoci unpacks them as links"
mkdir -p "$T/sys/usr/bin" "$T/sys/usr/lib/llvm/bin"
printf 'yaml2obj\n' >"$T/sys/usr/lib/llvm/bin/yaml2obj"
ln -s ../lib/llvm/bin/yaml2obj "$T/sys/usr/bin/yaml2obj"
ln -s ../../../../../etc/hostname "$T/sys/usr/bin/deep"
ln -s yaml2obj "$T/sys/usr/bin/alias"
expect_exit 0 "$AREC" record --module rec --name links --dir "$T/sys/usr/bin=/usr/bin" --dir "$T/sys/usr/lib=/usr/lib"
listing=$(layer_listing "${OUT#*@}")
expect_contains "$listing" "usr/bin/yaml2obj -> ../lib/llvm/bin/yaml2obj" "layer listing"
expect_contains "$listing" "usr/bin/deep -> ../../../../../etc/hostname" "layer listing"
umoci unpack --rootless --image "$AREC_STORE:rec/links" "$T/links" >/dev/null
expect_eq "../lib/llvm/bin/yaml2obj" "$(readlink "$T/links/rootfs/usr/bin/yaml2obj")" "umoci: the link"
cmp "$T/sys/usr/lib/llvm/bin/yaml2obj" "$T/links/rootfs/usr/bin/yaml2obj" || fail "umoci: the file through the link differs"

note "the test machine's /usr/bin records, and umoci unpack reproduces every link and file"
# A store of its own, removed afterwards: it holds a copy of /usr/bin.
start=$(date +%s%N)
AREC_STORE=$T/usrbin-store expect_exit 0 "$AREC" record --module rec --name usrbin --dir /usr/bin=/usr/bin --compression none
note "recorded /usr/bin ($(du -sh /usr/bin | cut -f1)) in $((($(date +%s%N) - start) / 1000000)) ms"
umoci unpack --rootless --image "$T/usrbin-store:rec/usrbin" "$T/usrbin" >/dev/null
expect_eq "$(cd /usr/bin && find . -type l -printf '%p -> %l\n' | sort)" \
  "$(cd "$T/usrbin/rootfs/usr/bin" && find . -type l -printf '%p -> %l\n' | sort)" "the links of /usr/bin"
expect_eq "$(cd /usr/bin && find . -type f -printf '%p %s\n' | sort)" \
  "$(cd "$T/usrbin/rootfs/usr/bin" && find . -type f -printf '%p %s\n' | sort)" "the files of /usr/bin"
rm -rf "$T/usrbin" "$T/usrbin-store"

note "--base M/N builds on the store's latest record of that name, without network"
printf 'v1\n' >"$T/in/lib-v1"
printf 'v2\n' >"$T/in/lib-v2"
"$AREC" record --module rec --name base --file "$T/in/lib-v1=/usr/lib/lib.txt" >/dev/null
expect_exit 0 "$AREC" record --module rec --name base --file "$T/in/lib-v2=/usr/lib/lib.txt"
base=${OUT#*@}
expect_exit 0 "$AREC" record --module rec --name top --base rec/base --file "$T/in/tool" --json
expect_eq "$base" "$(json_get .base <<<"$OUT")" "base digest: the latest record of rec/base"
umoci unpack --rootless --image "$AREC_STORE:rec/top" "$T/top" >/dev/null
expect_eq v2 "$(cat "$T/top/rootfs/usr/lib/lib.txt")" "the base's file"
cmp "$T/in/tool" "$T/top/rootfs/usr/local/bin/tool" || fail "the top's file differs"
expect_exit 2 "$AREC" record --module rec --name top --base rec/none --file "$T/in/tool"
expect_one_line_error "base \"rec/none\": no record of rec/none in the store"

note "--runtime none: each dynamically linked program is named in a warning, a tree of them in one"
mkdir -p "$T/progs"
cp /bin/true "$T/progs/a"
expect_exit 0 "$AREC" record --module rec --name progs --runtime none --dir "$T/progs=/bin"
expect_eq "arec: warning: /bin/a is dynamically linked and recorded with --runtime none and no --base: the image holds neither its loader nor its libraries, so it cannot run it" \
  "$(grep warning <<<"$ERR")" "the warning for one program"
for p in b c d e; do cp /bin/true "$T/progs/$p"; done
expect_exit 0 "$AREC" record --module rec --name progs --runtime none --dir "$T/progs=/bin"
expect_eq "arec: warning: 5 programs (/bin/a, /bin/b, /bin/c, and 2 more) are dynamically linked and recorded with --runtime none and no --base: the image holds neither their loader nor their libraries, so it cannot run them; -v names each" \
  "$(grep warning <<<"$ERR")" "the one warning for five programs"

note "the revision of a work tree with uncommitted changes to tracked files is <sha>-dirty"
git init -q "$T/repo"
cd "$T/repo"
printf 'a\n' >tracked
git add tracked
git -c user.email=t@t -c user.name=t commit -q -m init
head=$(git rev-parse HEAD)
printf 'untracked\n' >untracked
expect_exit 0 "$AREC" record --module rec --name rev --file "$T/in/tool" --json
expect_eq "$head" "$(json_get .revision <<<"$OUT")" "revision with only an untracked file"
touch tracked  # newer, same content: not a change
printf 'changed\n' >"$T/in/tool"
expect_exit 0 "$AREC" record --module rec --name rev --file "$T/in/tool" --json
expect_eq "$head" "$(json_get .revision <<<"$OUT")" "revision with a tracked file touched"
printf 'b\n' >>tracked
printf 'changed again\n' >"$T/in/tool"
expect_exit 0 "$AREC" record --module rec --name rev --file "$T/in/tool" --json
expect_eq "$head-dirty" "$(json_get .revision <<<"$OUT")" "revision with a tracked file changed"
git add tracked
printf 'changed a third time\n' >"$T/in/tool"
expect_exit 0 "$AREC" record --module rec --name rev --file "$T/in/tool" --json
expect_eq "$head-dirty" "$(json_get .revision <<<"$OUT")" "revision with a staged change"
dirty_digest=$(json_get .digest <<<"$OUT")

note "committed and rebuilt to the same bytes: records names the newest revision, the history keeps both"
git -c user.email=t@t -c user.name=t commit -q -m change
committed=$(git rev-parse HEAD)
expect_exit 0 "$AREC" record --module rec --name rev --file "$T/in/tool" --json
expect_eq "$dirty_digest $committed" "$(json_get '"\(.digest) \(.revision)"' <<<"$OUT")" "the same bytes, the new revision"
expect_exit 0 "$AREC" records rec/rev --json
expect_eq "$committed" "$(json_get '.[0].revision' <<<"$OUT")" "records after the commit"
expect_exit 0 "$AREC" records rec/rev --history --json
expect_eq "$head-dirty $committed" "$(json_get '[.[] | select(.digest == "'"$dirty_digest"'") | .revision] | join(" ")' <<<"$OUT")" "the history keeps both"
expect_exit 0 "$AREC" record --module rec --name rev --file "$T/in/tool" --json
expect_eq "false" "$(json_get .changed <<<"$OUT")" "the same bytes and revision again: nothing new"
echo PASS
