#!/usr/bin/env bash
# push tags the latest record of each module/name `latest` (so clean-up of untagged manifests keeps it and
# tag-listing tools find it); --tag adds tags, --no-latest opts out; older records go by digest only; a
# tag already naming the digest is not written again.
AREC=$1
source "$(dirname "$0")/lib.sh"
command -v skopeo >/dev/null || skip "skopeo is not installed (scripts/deps installs it)"
use_registry "$REG"
# A repository without tags is NAME_UNKNOWN to docker-registry's tag list: no tags.
tags() { curl -sS "http://$REG/v2/$M/$1/tags/list" | jq -c '.tags // [] | map(select(startswith("sha256-") | not)) | sort'; }  # SBOMs' fallback tags aside
at_tag() { skopeo inspect --tls-verify=false --no-tags "docker://$REG/$M/$1" | jq -r .Digest; }

v1=$(record app 2000)
expect_exit 0 "$AREC" push --json
expect_eq '["latest"]' "$(jq -c '.images[0].tags' <<<"$OUT")" "tags in the summary"
expect_eq "$v1" "$(at_tag app:latest)" "skopeo inspect app:latest"
expect_eq '["latest"]' "$(tags app)" "tags of app"

note "a new record moves latest; the earlier one pushed by digest takes no tag"
echo changed >>"$T/in/app/id"
v2=$("$AREC" record --module "$M" --name app --dir "$T/in/app=/srv/app" | cut -d@ -f2)
expect_exit 0 "$AREC" push "$M/app@$v1" --json
expect_eq '[]' "$(jq -c '.images[0].tags' <<<"$OUT")" "tags of a record from the history"
expect_eq "$v1" "$(at_tag app:latest)" "latest before the new record is pushed"
expect_exit 0 "$AREC" push --json
expect_eq "$v2" "$(at_tag app:latest)" "latest after the new record is pushed"

note "pushing again writes nothing: the tag names the digest already"
expect_exit 0 "$AREC" -vv push
expect_not_contains "$ERR" "PUT http" "requests of a re-push"
expect_contains "$ERR" "HEAD http://$REG/v2/$M/app/manifests/latest" "requests of a re-push"

note "--tag adds tags to the newest pushed record of each module/name"
expect_exit 0 "$AREC" push "$M/app" "$M/app@$v1" --tag v2 --tag stable --json
expect_eq '["latest","stable","v2"] []' "$(jq -c '[.images[].tags | sort] | "\(.[0]) \(.[1])"' -r <<<"$OUT")" "tags in the summary"
expect_eq '["latest","stable","v2"]' "$(tags app)" "tags of app"
expect_eq "$v2" "$(at_tag app:stable)" "skopeo inspect app:stable"

note "--no-latest: by digest only, or with the --tag given"
other=$(record other 1000)
expect_exit 0 "$AREC" push "$M/other" --no-latest --json
expect_eq '[]' "$(jq -c '.images[0].tags' <<<"$OUT")" "tags in the summary"
expect_eq '[]' "$(tags other)" "tags of other"
expect_eq "$other" "$(skopeo inspect --tls-verify=false --no-tags "docker://$REG/$M/other@$other" | jq -r .Digest)" "by digest"
expect_exit 0 "$AREC" push "$M/other" --no-latest --tag v1
expect_eq '["v1"]' "$(tags other)" "tags of other"
echo PASS
