# Helpers for the bundle tests, on top of tests/lib.sh: a store with history and SBOMs to carry.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
export AREC_STORE=$T/store

# make_history: records mesh/app twice (two history entries) and mesh/tool once, each with its SBOM;
# sets APP1, APP2 and TOOL to their digests.
make_history() {
  mkdir -p "$T/in/app/etc" "$T/in/tool"
  echo one >"$T/in/app/etc/version"
  head -c 200000 /dev/urandom >"$T/in/app/data.bin"
  ln -sf data.bin "$T/in/app/data.link"
  cp /usr/bin/true "$T/in/tool/tool"
  APP1=$("$AREC" record --module mesh --name app --dir "$T/in/app=/srv/app" --target app --config Release | cut -d@ -f2)
  echo two >"$T/in/app/etc/version"
  APP2=$("$AREC" record --module mesh --name app --dir "$T/in/app=/srv/app" --target app --config Release | cut -d@ -f2)
  TOOL=$("$AREC" record --module mesh --name tool --file "$T/in/tool/tool" --entrypoint /usr/local/bin/tool --env MODE=fast | cut -d@ -f2)
  [[ $APP1 != "$APP2" ]] || fail "the two records of mesh/app have the same digest"
}
