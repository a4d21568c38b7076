#!/usr/bin/env bash
# Work grows linearly with hostile input. A template of 1 MB of "arec://" is composed, and scanned by
# needs-rebuild, in under a second of CPU, as is 1 MB of the registry's address; an endless standard input ends at the 256 MiB cap, named; a bundle of 8,000 records of
# distinct module/names imports in under 10 s of CPU; a small compressed bundle that would expand to a large
# blob is refused before the store is touched, unless --max-expansion allows it.
AREC=$1
source "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed (scripts/deps installs it)"
export AREC_STORE=$T/store
printf '{"self": "n1", "nodes": {"n1": {"ports": {"registry": 5000}}}, "services": {"registry": "n1"}}\n' >"$T/nodes.json"
export AREC_NODES=$T/nodes.json

# cpu MAX_MS EXIT cmd...: runs cmd (its output in $T/.out and $T/.err), expects EXIT, and at most MAX_MS
# of CPU (user and system): the machine may be shared, so the wall clock would measure the neighbours.
cpu() {
  local max=$1 want=$2 rc=0 used
  shift 2
  local TIMEFORMAT='%3U %3S'
  { time "$@" >"$T/.out" 2>"$T/.err" || rc=$?; } 2>"$T/.cpu"
  OUT=$(cat "$T/.out") ERR=$(cat "$T/.err")
  [[ $rc == "$want" ]] || fail "$* exited $rc, expected $want; stderr: $(head -c 300 "$T/.err")"
  used=$(awk '{printf "%d", ($1 + $2) * 1000}' "$T/.cpu")
  CPU_MS=$used
  ((used <= max)) || fail "$* took $used ms of CPU, more than $max"
}

note "1 MB of arec:// in one word: composed, every request left as it is, in under a second"
python3 -c 'import sys; sys.stdout.write("arec://" * ((1 << 20) // 7))' >"$T/long.txt"
cpu 1000 0 "$AREC" compose "$T/long.txt" -o "$T/long.out"
cmp -s "$T/long.txt" "$T/long.out" || fail "compose changed a template holding no request it can fill"
note "compose of 1 MB of arec:// took $CPU_MS ms of CPU"
note "the same 1 MB scanned by needs-rebuild: nothing pinned, in under a second"
cpu 1000 0 "$AREC" needs-rebuild "$T/long.txt"
expect_contains "$ERR" "nothing would break on a registry move (read 1 file)" "needs-rebuild"
note "needs-rebuild of 1 MB of arec:// took $CPU_MS ms of CPU"
note "1 MB of the registry's address in one word: every place found, in under a second"
python3 -c 'import sys; sys.stdout.write("127.0.0.1:5000/" * ((1 << 20) // 15))' >"$T/addresses.txt"
cpu 1000 1 "$AREC" needs-rebuild "$T/addresses.txt"
expect_contains "$OUT" "1 reference in 69905 places would break on a registry move" "needs-rebuild"
note "needs-rebuild of 1 MB of addresses took $CPU_MS ms of CPU"
note "the same once more on a line of words: arec://port/ with nothing after"
python3 -c 'import sys; sys.stdout.write("arec://port/" * ((1 << 20) // 12))' >"$T/ports.txt"
cpu 1000 2 "$AREC" compose "$T/ports.txt" -o "$T/ports.out"
expect_contains "$ERR" "requests cannot be filled:" "compose"
note "compose of 1 MB of arec://port/ took $CPU_MS ms of CPU"

note "an endless standard input: refused at 256 MiB, naming the cap"
timed 20000 2 bash -c "head -c 300M /dev/zero | '$AREC' compose - -o '$T/endless.out'"
expect_one_line_error "standard input: larger than 256 MiB, the most arec reads"

note "a bundle of 8,000 records of distinct module/names: imported in under 10 s"
mkdir -p "$T/in"
echo app >"$T/in/app"
AREC_STORE=$T/source "$AREC" record --module q --name app --file "$T/in/app=/srv/app" >/dev/null
AREC_STORE=$T/source "$AREC" export q/app -o "$T/one.tar" >/dev/null
mkdir "$T/b" && tar -xf "$T/one.tar" -C "$T/b"
python3 - "$T/b/index.json" <<'PY'
import json, sys
path = sys.argv[1]
index = json.load(open(path))
record = next(m for m in index["manifests"] if "dev.arec.module" in m.get("annotations", {}))
out = [m for m in index["manifests"] if m is not record]
for i in range(8000):
    m = json.loads(json.dumps(record))
    m["annotations"]["dev.arec.module"] = "q%d" % (i // 100)
    m["annotations"]["dev.arec.name"] = "n%d" % i
    m["annotations"].pop("org.opencontainers.image.ref.name", None)
    out.append(m)
index["manifests"] = out
json.dump(index, open(path, "w"))
PY
(cd "$T/b" && tar -cf "$T/many.tar" oci-layout index.json blobs)
cpu 10000 0 "$AREC" import "$T/many.tar"
expect_contains "$OUT" "imported 8000 records" "import"
note "import of 8,000 records took $CPU_MS ms of CPU"
expect_eq 8000 "$("$AREC" records --json | jq length)" "records after the import"

note "a compressed bundle whose blob expands 1000 times: refused, store untouched; --max-expansion allows it"
rm -rf "$T/b2" && mkdir -p "$T/b2/blobs/sha256"
head -c 50M /dev/zero >"$T/zeros"
hex=$(sha256sum "$T/zeros" | cut -d' ' -f1)
mv "$T/zeros" "$T/b2/blobs/sha256/$hex"
cp "$T/b/oci-layout" "$T/b2/"
echo '{"schemaVersion": 2, "manifests": []}' >"$T/b2/index.json"
(cd "$T/b2" && tar -czf "$T/bomb.tar.gz" oci-layout index.json blobs)
rm -rf "$T/b2"
export AREC_STORE=$T/bomb-store
timed 10000 2 "$AREC" import "$T/bomb.tar.gz"
expect_one_line_error "100 times the bundle's"
expect_contains "$ERR" "(--max-expansion allows more)"
[[ ! -e $AREC_STORE ]] || fail "a refused import created the store"
expect_exit 2 "$AREC" import --max-expansion 10000 "$T/bomb.tar.gz"
expect_one_line_error "index.json lists no records"
