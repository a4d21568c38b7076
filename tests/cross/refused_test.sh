#!/usr/bin/env bash
# Records arec refuses for their platform, each with exit 2, a one-line error naming the files, and the
# store as it was: an arm64 and an amd64 program in one record; --platform contradicting the programs;
# a base of another platform; a --package of this machine's architecture;
# a foreign dynamic program whose target root is missing (a --sysroot without its loader, a machine with
# no cross packages here). A record without ELF files takes --platform, or this machine's platform.
source "$(dirname "$0")/../lib.sh"
AREC=$1
command -v aarch64-linux-gnu-gcc >/dev/null || skip "no aarch64-linux-gnu-gcc (Debian's gcc-aarch64-linux-gnu; scripts/deps installs it)"
[[ $(uname -m) == x86_64 ]] || skip "the checks name this machine's platform as linux/amd64; this one is $(uname -m)"
export SOURCE_DATE_EPOCH=0

printf '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n' >"$T/hello.c"
aarch64-linux-gnu-gcc -O2 -o "$T/hello-arm64" "$T/hello.c"
aarch64-linux-gnu-gcc -O2 -static -o "$T/hello-arm64-static" "$T/hello.c"
cc -O2 -o "$T/hello-amd64" "$T/hello.c"

store=$T/store
echo data >"$T/data.txt"
"$AREC" --store "$store" record --module cross --name seed --file "$T/data.txt" >/dev/null
before=$(tree_state "$store")
store_unchanged() { expect_eq "$before" "$(tree_state "$store")" "the store after $1"; }

expect_exit 2 "$AREC" --store "$store" record --module cross --name mixed --file "$T/hello-arm64-static" --file "$T/hello-amd64"
expect_one_line_error "the inputs are for two platforms"
expect_contains "$ERR" "hello-arm64-static) is linux/arm64" "error"
expect_contains "$ERR" "hello-amd64) is linux/amd64" "error"
store_unchanged "a record of two machines"

expect_exit 2 "$AREC" --store "$store" record --module cross --name wrong --file "$T/hello-arm64-static" --platform linux/amd64
expect_one_line_error "--platform linux/amd64 contradicts /usr/local/bin/hello-arm64-static"
expect_contains "$ERR" "which is linux/arm64" "error"
store_unchanged "a contradicting --platform"

# A cross build takes the target's packages: this machine's libc6 is refused, naming the one to give.
expect_exit 2 "$AREC" --store "$store" record --module cross --name host-package --file "$T/hello-arm64-static" --package libc6:amd64
expect_one_line_error "--package libc6:amd64: the image is for arm64; give libc6:arm64, the package of its architecture"
store_unchanged "a package of this machine's architecture"

expect_exit 2 "$AREC" --store "$store" record --module cross --name bad --file "$T/data.txt" --platform linux
expect_one_line_error '--platform "linux": expected OS/ARCHITECTURE[/VARIANT]'
store_unchanged "a malformed --platform"

# A base of another platform: the store's own amd64 record of data, as an OCI layout.
expect_exit 2 "$AREC" --store "$store" record --module cross --name onbase --file "$T/hello-arm64-static" --base "oci:$store:cross/seed"
expect_one_line_error "is for linux/amd64, the inputs for linux/arm64"
store_unchanged "a base of another platform"

# A sysroot without the arm64 loader: nothing of this machine is taken instead.
mkdir -p "$T/empty-sysroot"
expect_exit 2 "$AREC" --store "$store" record --module cross --name nosysroot --file "$T/hello-arm64" --sysroot "$T/empty-sysroot"
expect_one_line_error "needs the dynamic loader /lib/ld-linux-aarch64.so.1, which is not in the sysroot $T/empty-sysroot"
store_unchanged "a foreign program with a sysroot lacking its loader"

# A dynamic program of a machine with no cross packages here (the arm64 program relabelled RISC-V 64,
# e_machine 243): no /usr/riscv64-linux-gnu, no --sysroot, refused rather than given amd64 libraries.
if [[ -e /usr/riscv64-linux-gnu ]]; then
  note "/usr/riscv64-linux-gnu exists here: the check of a foreign program without a sysroot is left out"
else
  cp "$T/hello-arm64" "$T/hello-riscv64"
  printf '\xf3\x00' | dd of="$T/hello-riscv64" bs=1 seek=18 conv=notrunc status=none
  expect_exit 2 "$AREC" --store "$store" record --module cross --name riscv --file "$T/hello-riscv64"
  expect_one_line_error "/usr/local/bin/hello-riscv64 ($T/hello-riscv64) is for linux/riscv64, not this machine's"
  expect_contains "$ERR" "give --sysroot DIR (/usr/riscv64-linux-gnu is not there)" "error"
  store_unchanged "a foreign program without a sysroot"
fi

# No ELF file: --platform says, else this machine's platform.
config_of() { # REPO
  local manifest config
  manifest=$(jq -r --arg ref "$1" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $ref) | .digest' "$store/index.json")
  config=$(jq -r .config.digest "$store/blobs/sha256/${manifest#sha256:}")
  jq -c '[.os, .architecture, .variant]' "$store/blobs/sha256/${config#sha256:}"
}
"$AREC" --store "$store" record --module cross --name data-arm --file "$T/data.txt" --platform linux/arm/v7 >/dev/null
expect_eq '["linux","arm","v7"]' "$(config_of cross/data-arm)" "the platform of data recorded with --platform linux/arm/v7"
"$AREC" --store "$store" record --module cross --name static --file "$T/hello-arm64-static" --platform linux/arm64/v8 >/dev/null
expect_eq '["linux","arm64","v8"]' "$(config_of cross/static)" "the platform of an arm64 program with --platform linux/arm64/v8"
"$AREC" --store "$store" record --module cross --name static2 --file "$T/hello-arm64-static" >/dev/null
expect_eq '["linux","arm64",null]' "$(config_of cross/static2)" "the platform of an arm64 program"
expect_eq '["linux","amd64",null]' "$(config_of cross/seed)" "the platform of data recorded on this machine"
