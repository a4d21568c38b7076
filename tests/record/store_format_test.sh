#!/usr/bin/env bash
# The store's history database and its OCI view: a store of format 1 (index.json holding the whole
# history, as fixtures/store-v1 was made by arec before the database) is read as it is, converted by
# its first writer with nothing lost; index.json holds the view only; `check --repair` rewrites a
# deleted index.json; a store of a newer format is refused.
AREC=$1
source "$(dirname "$0")/../lib.sh"
fixture=$(dirname "$0")/fixtures/store-v1
export AREC_STORE=$T/store
cp -r "$fixture" "$AREC_STORE"
before=$(tree_state "$AREC_STORE")

note "a reader of a store not converted yet reads it as it is, and changes nothing"
expect_exit 0 "$AREC" records --history --json
expect_eq "$(jq -c . "$fixture.history.json")" "$(jq -c . <<<"$OUT")" "history before the conversion"
expect_exit 0 "$AREC" records --json
expect_eq "$(jq -c . "$fixture.latest.json")" "$(jq -c . <<<"$OUT")" "latest before the conversion"
expect_exit 0 "$AREC" check
expect_eq "$before" "$(tree_state "$AREC_STORE")" "the store after reading it"
[[ ! -e $AREC_STORE/arec/history.db ]] || fail "a reader created the history database"

note "the first writer converts it: the same history, in the same order, and the new record after it"
echo "new tool" >"$T/tool"
expect_exit 0 "$AREC" record --module infra --name tool --file "$T/tool=/opt/tool"
new=$OUT
[[ -f $AREC_STORE/arec/history.db ]] || fail "no history database after the first writer"
expect_exit 0 "$AREC" records --history --json
expect_eq "$(jq -c . "$fixture.history.json")" "$(jq -c '.[:-1]' <<<"$OUT")" "history after the conversion"
expect_eq "$new" "$(jq -r '.[-1] | "\(.module)/\(.name)@\(.digest)"' <<<"$OUT")" "the new record, last"
expect_exit 0 "$AREC" records shop/app --history --json
expect_eq "$(jq -c '[.[] | select(.name == "app")]' "$fixture.history.json")" "$(jq -c . <<<"$OUT")" "history of shop/app"
expect_exit 0 "$AREC" check --json
expect_eq "true 8 0 false" "$(json_get '"\(.ok) \(.records) \(.problems | length) \(.index_behind)"' <<<"$OUT")" "check"

note "index.json is the OCI view: the latest of each module/name and their SBOMs, not the history"
expect_eq "infra/tool shop/app shop/lib" \
  "$(jq -r '[.manifests[].annotations["org.opencontainers.image.ref.name"] // empty] | sort | join(" ")' "$AREC_STORE/index.json")" \
  "ref names in index.json"
expect_eq 3 "$(jq '[.manifests[] | select(.annotations["dev.arec.module"])] | length' "$AREC_STORE/index.json")" "records in index.json"
# shop/lib was recorded without an SBOM: two SBOMs, of shop/app and infra/tool.
expect_eq 2 "$(jq '[.manifests[] | select(.annotations["dev.arec.subject"])] | length' "$AREC_STORE/index.json")" "SBOMs in index.json"
for r in shop/app shop/lib infra/tool; do
  skopeo inspect "oci:$AREC_STORE:$r" >/dev/null || fail "skopeo cannot read $r"
done
umoci stat --image "$AREC_STORE:shop/app" >/dev/null || fail "umoci cannot read shop/app"
old_tool=$(jq -r '[.[] | select(.name == "tool")][0].digest' "$fixture.history.json")
expect_exit 0 "$AREC" sbom "infra/tool@$old_tool"
expect_eq SPDX-2.3 "$(json_get .spdxVersion <<<"$OUT")" "the SBOM of an older record, kept in the history"

note "check --repair after index.json is deleted"
view=$(cat "$AREC_STORE/index.json")
rm "$AREC_STORE/index.json"
expect_exit 1 "$AREC" check
expect_contains "$OUT" "problem: $AREC_STORE/index.json: missing (--repair writes it from the history)"
expect_exit 0 "$AREC" records --json
expect_eq 3 "$(json_get length <<<"$OUT")" "records read from the history without index.json"
expect_exit 0 "$AREC" check --repair
expect_contains "$OUT" "rewrote index.json from the history"
expect_contains "$OUT" "ok"
expect_eq "$view" "$(cat "$AREC_STORE/index.json")" "index.json after --repair"

note "an index.json left behind the history (as by a writer killed after its commit) is reported, then caught up"
cp "$AREC_STORE/index.json" "$T/old-view.json"
echo "newer tool" >"$T/tool"
"$AREC" record --module infra --name tool --file "$T/tool=/opt/tool" >/dev/null
current=$(cat "$AREC_STORE/index.json")
# What a writer killed after its commit leaves: the old index.json, noted in the history as the view.
cp "$T/old-view.json" "$AREC_STORE/index.json"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE meta SET value = value - 1 WHERE key = \"view\""); c.commit()' \
  "$AREC_STORE/arec/history.db"
expect_exit 0 "$AREC" check --json
expect_eq "true true" "$(json_get '"\(.ok) \(.index_behind)"' <<<"$OUT")" "check of a view behind the history"
expect_exit 0 "$AREC" check
expect_contains "$OUT" "index.json is behind the history"
# The next writer, even one that changes nothing, brings it up to date.
expect_exit 0 "$AREC" record --module infra --name tool --file "$T/tool=/opt/tool"
expect_eq "$current" "$(cat "$AREC_STORE/index.json")" "index.json after the next writer"

note "a store of format 4 (before the heads table) is brought to 5 by its next reader, and reads as before"
sql() { python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); r = c.execute(sys.argv[2]).fetchall(); c.commit(); print("\n".join(" ".join(map(str, row)) for row in r))' "$AREC_STORE/arec/history.db" "$1"; }
expect_exit 0 "$AREC" records --json
before=$OUT
expect_exit 0 "$AREC" records --history --json
history_before=$OUT
sql "DROP TABLE heads" >/dev/null
sql "PRAGMA user_version = 4" >/dev/null
expect_exit 0 "$AREC" records --json
expect_eq "$before" "$OUT" "records of a format-4 store, as its first reader of format 5 reads them"
expect_eq 5 "$(sql "PRAGMA user_version")" "the format after a reader opened it"
expect_exit 0 "$AREC" records --history --json
expect_eq "$history_before" "$OUT" "the history after the upgrade"
expect_eq "$(sql "SELECT seq FROM latest UNION SELECT seq FROM configs UNION SELECT seq FROM platforms ORDER BY 1" | paste -sd,)" \
  "$(sql "SELECT seq FROM heads ORDER BY 1" | paste -sd,)" "the heads: the records latest, configs and platforms name"
expect_eq "$current" "$(cat "$AREC_STORE/index.json")" "index.json after the upgrade to 5"
expect_exit 0 "$AREC" check

note "a store of format 3 (before the configs table) is brought to 5 by its next reader, and reads as before"
sql "DROP TABLE heads" >/dev/null
sql "DROP TABLE configs" >/dev/null
sql "PRAGMA user_version = 3" >/dev/null
expect_exit 0 "$AREC" records --json
expect_eq "$before" "$OUT" "records of a format-3 store, as its first reader of format 5 reads them"
expect_eq 5 "$(sql "PRAGMA user_version")" "the format after a reader opened it"
expect_exit 0 "$AREC" records --history --json
expect_eq "$history_before" "$OUT" "the history after the upgrade"
expect_eq "$(sql "SELECT module, name, config, MAX(seq) FROM records GROUP BY module, name, config ORDER BY 1, 2, 3" | paste -sd,)" \
  "$(sql "SELECT module, name, config, seq FROM configs ORDER BY 1, 2, 3" | paste -sd,)" "each configuration's newest"
expect_eq "$current" "$(cat "$AREC_STORE/index.json")" "index.json after the upgrade to 5"
expect_exit 0 "$AREC" check

note "a store of format 2 (one image per module/name, before the platforms table) is brought to 5 by its next reader"
sql "DROP TABLE heads" >/dev/null
sql "DROP TABLE platforms" >/dev/null
sql "DROP TABLE configs" >/dev/null
sql "PRAGMA user_version = 2" >/dev/null
expect_exit 0 "$AREC" records --json
latest=$OUT
expect_eq "$before" "$latest" "records of a format-2 store after the upgrade"
expect_eq 5 "$(sql "PRAGMA user_version")" "the format after a reader opened it"
expect_eq "$(jq -r '[.[] | "\(.module) \(.name) \(.platform)"] | sort | join(",")' <<<"$latest")" \
  "$(sql "SELECT module, name, platform FROM platforms ORDER BY module, name" | paste -sd,)" "the platforms: each latest record's own"
expect_eq "$current" "$(cat "$AREC_STORE/index.json")" "index.json after the upgrade"
expect_exit 0 "$AREC" check

note "a store of a newer format: refused for writing, with a message saying so, and left as it was"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version = 99"); c.commit()' \
  "$AREC_STORE/arec/history.db"
state=$(tree_state "$AREC_STORE")
expect_exit 2 "$AREC" record --module infra --name tool --file "$T/tool=/opt/tool"
expect_one_line_error "store $AREC_STORE: its format (99) is newer than this arec understands (5); use a newer arec to write to it"
expect_exit 2 "$AREC" gc
expect_one_line_error "is newer than this arec understands"
expect_eq "$state" "$(tree_state "$AREC_STORE")" "the newer store after the refusals"
echo PASS
