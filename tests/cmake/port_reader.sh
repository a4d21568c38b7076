#!/usr/bin/env bash
# Arec::port_reader from the installed package: a program that does find_package(Arec) and links it
# builds, reads ports as arec read-port does, and needs none of arec's dependencies at run time.
source "$(dirname "$0")/lib.sh"

configure "$work/configure.log" "$AREC_TEST_PROJECTS/port_reader" "$work/build" -DCMAKE_PREFIX_PATH="$AREC_TEST_PREFIX"
build "$work/build.log" "$work/build"
read_ports=$work/build/read_ports

expect_exit 0 "$read_ports" 6852 5432
expect_eq 6852 "$OUT" "a port"
expect_eq "" "$ERR" "warnings for a port"
expect_exit 0 "$read_ports" " " 5432
expect_eq 5432 "$OUT" "nothing said: the sealed port"
expect_exit 0 "$read_ports" arec://port/store 5432
expect_eq 5432 "$OUT" "an unfilled request: the sealed port"
expect_eq "warning: unfilled request arec://port/store" "$ERR" "the caller's warning"
expect_exit 2 "$read_ports" 54x32 5432
expect_eq 'error: "54x32" is not a port (an integer 1-65535, empty, or an unfilled arec:// request)' "$ERR" "not a port"

# Only the C++ runtime: no libarchive, OpenSSL, libcurl or anything else arec itself links.
needed=$(readelf -d "$read_ports" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | paste -sd' ')
expect_contains "$needed" "libstdc++.so" "the libraries read_ports needs"
for lib in $needed; do
  case $lib in
    libstdc++.so.* | libm.so.* | libgcc_s.so.* | libc.so.*) ;;
    *) fail "read_ports needs $lib (all it needs: $needed)" ;;
  esac
done
