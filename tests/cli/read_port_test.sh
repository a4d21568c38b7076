# `arec read-port`: a port, or nothing said (the sealed value stands), or "not a port" (exit 2).
source "$(dirname "$0")/lib.sh"

expect_exit 0 "$arec" read-port 6852 --sealed 5000
expect_eq "$out" "6852"
expect_eq "$err" "" "stderr for a port"

# Empty: nothing said, quietly.
expect_exit 0 "$arec" read-port "" --sealed 5000
expect_eq "$out" "5000"
expect_eq "$err" "" "stderr for an empty value"

# An unfilled request: nothing said, loudly, naming it. Never "not a port".
expect_exit 0 "$arec" read-port "arec://port/store" --sealed 5432
expect_eq "$out" "5432"
expect_contains "$err" "warning: unfilled request arec://port/store"
expect_contains "$err" "the sealed port 5432 stands"
expect_exit 0 "$arec" read-port "arec://port/store" --sealed 5432 --json
expect_eq "$out" '{"port":5432,"request":"arec://port/store","said":"unfilled request"}'

# Nothing said and nothing sealed: an empty line.
expect_exit 0 "$arec" read-port ""
expect_eq "$out" ""

# Garbage is still an error.
for value in abc 0 65536 5000x " 50 00" "http://x"; do
  expect_exit 2 "$arec" read-port "$value" --sealed 5000
  expect_contains "$err" "\"$value\" is not a port"
  expect_eq "$out" ""
done
expect_exit 2 "$arec" read-port 80 --sealed 70000
echo "read-port: ok"
