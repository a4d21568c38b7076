#!/usr/bin/env bash
# Many builders, one registry: three builders (stores of their own) record and push the same module/name
# at once, round after round. Afterwards every record pushed is at the registry as a record artifact;
# `latest` and `latest-debug` name records pushed, and once each builder has pushed again the newest of
# their configuration by recording time (pushes at once can cross: the registry has no conditional tag
# write, which a held tag put shows); a fourth store's pull --all gets the whole history in that order;
# every manifest there parses and is complete.
# A push of an older record leaves `latest` where it is and says so. A record artifact from the future
# (as a hostile registry would add one) is refused by pull, with the store unchanged, and counts for
# nothing when a push compares.
AREC=$1
source "$(dirname "$0")/lib.sh"
for tool in jq curl python3; do command -v $tool >/dev/null || skip "no $tool (scripts/deps installs it)"; done
start_registry R own  # its own registry: pull --all reads the whole catalog
use_registry "$R"
record_type=application/vnd.dev.arec.record.v1+json
index_type=application/vnd.oci.image.index.v1+json
manifest_type=application/vnd.oci.image.manifest.v1+json
rounds=4

# build STORE ROUND CONFIG: records $M/app of CONFIG with content of its own into STORE, and pushes.
build() {
  mkdir -p "$T/in/$1-$2-$3"
  echo "$1 $2 $3" >"$T/in/$1-$2-$3/data"
  AREC_STORE=$T/$1 "$AREC" record --module "$M" --name app --target app --config "$3" \
    --dir "$T/in/$1-$2-$3=/srv/app" >/dev/null || return 1
  AREC_STORE=$T/$1 "$AREC" push >"$T/$1-$2-$3.out" 2>"$T/$1-$2-$3.err" || { cat "$T/$1-$2-$3.err" >&2; return 1; }
}
tag_digest() {
  curl -sfI -H "Accept: $manifest_type, $index_type" "http://$R/v2/$M/app/manifests/$1" |
    tr -d '\r' | sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: //p'
}
# The record artifacts the registry lists for $M/app@DIGEST, as "recorded digest-of-artifact".
listed_records() {
  curl -sf -H "Accept: $index_type" "http://$R/v2/$M/app/manifests/sha256-${1#sha256:}" |
    jq -r --arg t "$record_type" '.manifests[] | select(.artifactType == $t) |
      "\(.annotations["org.opencontainers.image.created"]) \(.digest)"'
}

note "three builders record and push $M/app at once, $rounds rounds each (b3 records Debug too)"
pids=()
for b in b1 b2 b3; do
  (
    for round in $(seq 1 $rounds); do
      build $b "$round" Release || exit 1
      if [[ $b == b3 ]]; then build $b "$round" Debug || exit 1; fi
    done
  ) &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a builder's record or push failed"; done

# Every record of every builder, as "recorded digest config".
for b in b1 b2 b3; do
  AREC_STORE=$T/$b "$AREC" records "$M/app" --history --json | jq -r '.[] | "\(.recorded) \(.digest) \(.config)"'
done | sort >"$T/all"
expect_eq $((rounds * 4)) "$(wc -l <"$T/all")" "records made by the builders"

note "every record pushed is at the registry as a record artifact of its image"
while read -r recorded digest config; do
  listed_records "$digest" | grep -q "^$recorded " || fail "no record artifact of $digest recorded $recorded ($config) at the registry"
done <"$T/all"

note "latest and latest-debug name records pushed; once each builder has pushed again, the newest of their configuration"
# Records have seconds: of two made in the same second either may be latest.
newest() { awk -v c="$1" '$3 == c' "$T/all" | sort | tail -n1 | cut -d' ' -f1; }
time_of() { grep " $1 " "$T/all" | head -n1 | cut -d' ' -f1; }
for tag in latest latest-debug; do
  [[ -n $(time_of "$(tag_digest $tag)") ]] || fail "$tag names no record a builder pushed"
done
# Distribution has no conditional write of a tag: two pushes at once can cross inside one request's time,
# the older record's put landing last (the case below shows it). The next push of each repairs it.
for b in b1 b2 b3; do AREC_STORE=$T/$b "$AREC" push >/dev/null 2>"$T/$b-again.err" || fail "$b's push again: $(cat "$T/$b-again.err")"; done
expect_eq "$(newest Release)" "$(time_of "$(tag_digest latest)")" "the time of the record latest names"
expect_eq "$(newest Debug)" "$(time_of "$(tag_digest latest-debug)")" "the time of the record latest-debug names"

note "no manifest is half-written: every tag parses and every blob it names is there"
for tag in $(curl -sf "http://$R/v2/$M/app/tags/list" | jq -r '.tags[]'); do
  body=$(curl -sf -H "Accept: $manifest_type, $index_type" "http://$R/v2/$M/app/manifests/$tag") || fail "tag $tag: no manifest"
  jq -e . >/dev/null <<<"$body" || fail "tag $tag: the manifest does not parse"
  for blob in $(jq -r '(.config.digest // empty), (.layers[]?.digest)' <<<"$body"); do
    curl -sfI "http://$R/v2/$M/app/blobs/$blob" >/dev/null || fail "tag $tag: blob $blob missing"
  done
done

note "two pushes crossing: the older record's tag put held in flight lands after the newer's push; the next push repairs it"
start_fault_proxy P "$R"
printf '{"self": "n1", "nodes": {"n1": {"ports": {"registry": %s}}}, "services": {"registry": "n1"}}\n' "${P##*:}" >"$T/proxied.json"
mkdir -p "$T/in/cross-old" "$T/in/cross-new"
echo old >"$T/in/cross-old/data" && echo new >"$T/in/cross-new/data"
cross_old=$(AREC_STORE=$T/cross-old "$AREC" record --module "$M" --name cross --dir "$T/in/cross-old=/srv" | cut -d@ -f2)
sleep 1.1  # recording times have seconds
cross_new=$(AREC_STORE=$T/cross-new "$AREC" record --module "$M" --name cross --dir "$T/in/cross-new=/srv" | cut -d@ -f2)
faults '[{"method": "PUT", "path": "/manifests/latest$", "fault": "hold", "delay": 4, "times": 1}]'
AREC_STORE=$T/cross-old AREC_NODES=$T/proxied.json "$AREC" push >/dev/null 2>"$T/cross-old.err" &
old_push=$!
for _ in $(seq 100); do [[ $(faults_injected) -ge 1 ]] && break; sleep 0.1; done
[[ $(faults_injected) -ge 1 ]] || fail "the older record's tag put was not held"
AREC_STORE=$T/cross-new expect_exit 0 "$AREC" push
wait "$old_push" || fail "the older record's push failed: $(cat "$T/cross-old.err")"
cross_tag() {
  curl -sfI -H "Accept: $manifest_type, $index_type" "http://$R/v2/$M/cross/manifests/latest" |
    tr -d '\r' | sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: //p'
}
expect_eq "$cross_old" "$(cross_tag)" "latest after the crossing pushes (the older record's put landed last)"
AREC_STORE=$T/cross-new expect_exit 0 "$AREC" push
expect_eq "$cross_new" "$(cross_tag)" "latest after the newer record's next push"

note "a fourth store's pull --all gets the whole history, in the order recorded"
export AREC_STORE=$T/c
expect_exit 0 "$AREC" pull --all --records-only --json
"$AREC" records "$M/app" --history --json | jq -r '.[] | "\(.recorded) \(.digest) \(.config)"' >"$T/pulled"
expect_eq "$(cat "$T/all")" "$(sort "$T/pulled")" "the records pulled"
expect_eq "$(cut -d' ' -f1 "$T/pulled" | sort)" "$(cut -d' ' -f1 "$T/pulled")" "the pulled history's times, in order"
expect_eq "$(newest Release)" "$("$AREC" records "$M/app" --json | jq -r '.[] | select(.config == "Release") | .recorded')" \
  "the time of the pulled store's latest Release record"

note "a push of an older record leaves latest at the newer one and says so"
mkdir -p "$T/in/old"
echo old >"$T/in/old/data"
AREC_STORE=$T/old expect_exit 0 "$AREC" record --module "$M" --name app --target app --config Release --dir "$T/in/old=/srv/app"
sleep 1.1  # recording times have seconds
build b1 new Release || fail "b1's push failed"
newer=$(tag_digest latest)
AREC_STORE=$T/old expect_exit 0 "$AREC" push --json
expect_eq "$newer" "$(tag_digest latest)" "latest after the older record's push"
expect_eq "latest $newer" "$(jq -r '.images[0].kept[0] | "\(.tag) \(.digest)"' <<<"$OUT")" "what push --json says it kept"
expect_eq "[]" "$(jq -c '.images[0].tags' <<<"$OUT")" "the tags the older record got"
expect_contains "$ERR" "tag latest: left at $newer"
old=$(AREC_STORE=$T/old "$AREC" records "$M/app" --json | jq -r '.[0].digest')
listed_records "$old" | grep -q . || fail "the older record was not pushed as a record artifact"

note "a record artifact recorded 9999-12-31T23:59:59Z, added at the registry, exactly as arec writes one"
artifact=$(listed_records "$newer" | head -n1 | cut -d' ' -f2)
curl -sf -H "Accept: $manifest_type" "http://$R/v2/$M/app/manifests/$artifact" >"$T/artifact.json"
curl -sf "http://$R/v2/$M/app/blobs/$(jq -r '.layers[0].digest' "$T/artifact.json")" >"$T/document.json"
python3 - "$T" <<'PY'
import hashlib, json, sys
t = sys.argv[1]
canonical = lambda v: json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
future = "9999-12-31T23:59:59Z"
document = json.load(open(f"{t}/document.json"))
document["recorded"] = future
doc = canonical(document)
manifest = json.load(open(f"{t}/artifact.json"))
manifest["layers"][0].update(digest="sha256:" + hashlib.sha256(doc).hexdigest(), size=len(doc))
manifest["annotations"]["org.opencontainers.image.created"] = future
open(f"{t}/future-doc", "wb").write(doc)
open(f"{t}/future-manifest", "wb").write(canonical(manifest))
PY
doc_digest=sha256:$(sha256sum "$T/future-doc" | cut -d' ' -f1)
location=$(curl -sf -X POST -D - -o /dev/null "http://$R/v2/$M/app/blobs/uploads/" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
[[ $location == http* ]] || location=http://$R$location
curl -sf -X PUT -H 'Content-Type: application/octet-stream' --data-binary "@$T/future-doc" \
  "$location$([[ $location == *\?* ]] && echo '&' || echo '?')digest=$doc_digest" >/dev/null || fail "could not upload the document"
future=sha256:$(sha256sum "$T/future-manifest" | cut -d' ' -f1)
curl -sf -X PUT -H "Content-Type: $manifest_type" --data-binary "@$T/future-manifest" \
  "http://$R/v2/$M/app/manifests/$future" >/dev/null || fail "could not put the artifact"
size=$(stat -c %s "$T/future-manifest")
curl -sf -H "Accept: $index_type" "http://$R/v2/$M/app/manifests/sha256-${newer#sha256:}" |
  jq -c --arg d "$future" --argjson s "$size" --arg t "$record_type" \
    '.manifests += [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $d, size: $s, artifactType: $t,
       annotations: {"org.opencontainers.image.created": "9999-12-31T23:59:59Z"}}]' >"$T/referrers"
curl -sf -X PUT -H "Content-Type: $index_type" --data-binary "@$T/referrers" \
  "http://$R/v2/$M/app/manifests/sha256-${newer#sha256:}" >/dev/null || fail "could not list the artifact"

note "pull refuses it (exit 3), naming it, and leaves the store as it was"
export AREC_STORE=$T/d
AREC_STORE=$T/d expect_exit 0 "$AREC" pull "$M/app@$old" --records-only
before=$(cat "$T/d/index.json")
expect_exit 3 "$AREC" pull "$M/app:latest"
expect_contains "$ERR" "the record artifact $future of $M/app@$newer"
expect_contains "$ERR" "recorded 9999-12-31T23:59:59Z, more than 5 minutes ahead of this machine's clock"
expect_eq "$before" "$(cat "$T/d/index.json")" "index.json after the refused pull"
expect_eq "$old" "$("$AREC" records "$M/app" --history --json | jq -r 'map(.digest) | join(" ")')" "the history after the refused pull"
expect_exit 3 "$AREC" pull --all
expect_contains "$ERR" "9999-12-31T23:59:59Z"
expect_eq "$before" "$(cat "$T/d/index.json")" "index.json after the refused pull --all"

note "a push compares with it as with no record: the next build's push moves latest on, with a warning"
build b2 after Release || fail "b2's push failed"
expect_eq "$(AREC_STORE=$T/b2 "$AREC" records "$M/app" --json | jq -r '.[0].digest')" "$(tag_digest latest)" \
  "latest after a push past the record from the future"
expect_contains "$(cat "$T/b2-after-Release.err")" "recorded 9999-12-31T23:59:59Z, more than 5 minutes ahead of this machine's clock: not newer"
