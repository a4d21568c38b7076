#!/usr/bin/env bash
# `arec completion bash` is a script bash takes: sourced, `complete -p arec` names it, and it completes
# commands, options and the store's module/names. The zsh script passes `zsh -n` where zsh is.
AREC=$1
source "$(dirname "$0")/../lib.sh"
export AREC_STORE=$T/store
bin=$T/bin && mkdir -p "$bin" && ln -s "$(realpath "$AREC")" "$bin/arec"
export PATH=$bin:$PATH
echo app >"$T/app"
arec record --module mesh --name app --file "$T/app" >/dev/null
arec record --module mesh --name builder --file "$T/app" >/dev/null
arec record --module tools --name lint --file "$T/app" >/dev/null

expect_exit 0 arec completion bash
script=$OUT
source <(printf '%s\n' "$script")
expect_eq "complete -o default -F _arec arec" "$(complete -p arec)" "complete -p arec"

# complete WORDS...: what Tab offers after the words, the last being the one typed so far.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _arec
  printf '%s\n' "${COMPREPLY[@]}" | sort | paste -sd' '
}
expect_eq "record records" "$(complete_words arec rec)" "commands"
expect_eq "read-port record records ref registry-config resolve" "$(complete_words arec -v re)" "commands after a global option"
expect_eq "--json" "$(complete_words arec records --js)" "options of records"
expect_eq "--history" "$(complete_words arec --store "$AREC_STORE" records --hi)" "options after --store DIR"
expect_eq "--chunk-size" "$(complete_words arec push --ch)" "options of push"
expect_eq "--store" "$(complete_words arec records --st)" "global options after the command"
expect_eq "mesh/app mesh/builder" "$(complete_words arec push mesh/)" "module/names of the store"
expect_eq "tools/lint" "$(complete_words arec verify t)" "module/names of the store"
expect_eq "mesh/app mesh/builder" "$(complete_words arec inspect mesh/)" "module/names for inspect"
expect_eq "tools/lint" "$(complete_words arec export t)" "module/names for export"
expect_eq "mesh/app mesh/builder tools/lint" "$(AREC_STORE=$T/none complete_words arec --store "$AREC_STORE" records '')" "names of the --store on the line"
expect_eq "bash" "$(complete_words arec completion b)" "shells"
expect_eq "needs-rebuild" "$(complete_words arec help ne)" "commands for help"
mkdir -p "$T/dirs/sub"
expect_eq "$T/dirs/sub" "$(complete_words arec --store "$T/dirs/s")" "directories for --store"

if command -v zsh >/dev/null; then
  arec completion zsh >"$T/_arec"
  zsh -n "$T/_arec" || fail "zsh -n refuses the zsh completion"
  zsh -fc "autoload -U compinit && compinit -u -d $T/zcompdump && source $T/_arec && [[ \${_comps[arec]} == _arec ]]" ||
    fail "the zsh completion does not register _arec for arec"
else
  note "zsh is not installed: the zsh script is not checked (scripts/deps installs it)"
fi
if command -v fish >/dev/null; then
  arec completion fish >"$T/arec.fish"
  fish -n "$T/arec.fish" || fail "fish -n refuses the fish completion"
else
  note "fish is not installed: the fish script is not checked"
fi
echo PASS
