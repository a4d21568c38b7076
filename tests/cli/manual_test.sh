#!/usr/bin/env bash
# The manual page made at build time renders with man, names every command and variable, and the
# install puts it and the bash completion in the prefix.
AREC=$1
source "$(dirname "$0")/../lib.sh"
build=${AREC_TEST_BUILD_DIR:?the build directory}
page=$build/cli/arec.1
[[ -f $page ]] || fail "the build made no $page"
command -v man >/dev/null || skip "man is not installed (scripts/deps installs man-db)"

text=$(MANWIDTH=100 man -l "$page" 2>"$T/man.err") || fail "man -l $page failed: $(cat "$T/man.err")"
expect_eq "" "$(cat "$T/man.err")" "warnings of man -l"
expect_contains "$text" "AREC(1)"
for section in NAME SYNOPSIS DESCRIPTION "GLOBAL OPTIONS" COMMANDS ENVIRONMENT FILES "EXIT STATUS"; do
  grep -q "^$section\$" <<<"$text" || fail "the manual has no section $section"
done
for c in record records sbom ref check gc resolve compose push pull verify read-port needs-rebuild move help completion; do
  grep -qE "^   arec $c\$" <<<"$text" || fail "the manual has no command $c"
done
expect_not_contains "$text" "__man"
for v in AREC_STORE AREC_THREADS AREC_SYNC AREC_LOCK_TIMEOUT AREC_CHUNK_SIZE AREC_RETRY_BUDGET AREC_STALL_TIMEOUT AREC_MIN_RATE SOURCE_DATE_EPOCH; do
  expect_contains "$text" "$v"
done
expect_contains "$text" "arec record --module mesh --name app --file build/app"
note "the page is the one arec makes now"
expect_exit 0 "$AREC" __man "$T/arec.1"
cmp "$T/arec.1" "$page" || fail "the built page differs from what arec __man writes"

note "the install puts the page and the bash completion in the prefix"
cmake --install "$build" --prefix "$T/prefix" >"$T/install.log" 2>&1 || fail "cmake --install failed: $(cat "$T/install.log")"
cmp "$page" "$T/prefix/share/man/man1/arec.1" || fail "share/man/man1/arec.1 is not the page"
note "man arec finds the installed page: through PATH (the share/man beside its bin), or through MANPATH"
expect_eq "$T/prefix/share/man/man1/arec.1" "$(env -u MANPATH PATH="$T/prefix/bin:$PATH" man -w arec 2>&1)" \
  "man -w arec with the prefix's bin on PATH"
expect_eq "$T/prefix/share/man/man1/arec.1" "$(MANPATH="$T/prefix/share/man:" man -w arec 2>&1)" \
  "man -w arec with the prefix's share/man on MANPATH"
"$T/prefix/bin/arec" completion bash | cmp - "$T/prefix/share/bash-completion/completions/arec" ||
  fail "share/bash-completion/completions/arec is not the bash completion"
echo PASS
