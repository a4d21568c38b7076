#!/usr/bin/env bash
# Rule 7: the same inputs give the same digest, whatever their mtimes, owners, modes' group bits,
# directory order or store; SOURCE_DATE_EPOCH sets the one mtime.
AREC=$1
source "$(dirname "$0")/../lib.sh"

make_copy() { # dir order
  mkdir -p "$1"
  local names=(bin/app lib/libx.so.1 share/a share/b)
  [[ $2 == reverse ]] && names=(share/b share/a lib/libx.so.1 bin/app)
  for n in "${names[@]}"; do
    mkdir -p "$1/$(dirname "$n")"
    echo "content of $n" >"$1/$n"
  done
  ln -s libx.so.1 "$1/lib/libx.so"
  chmod 755 "$1/bin/app"
}
make_copy "$T/a" forward
make_copy "$T/b" reverse
touch -d '2001-02-03 04:05:06' "$T/b/share/a" "$T/b/bin/app"
chmod 700 "$T/b/bin/app"
chmod 640 "$T/b/share/b"
if [[ $(id -u) == 0 ]]; then chown -R 1234:5678 "$T/b"; fi

a=$("$AREC" record --store "$T/sa" --module m --name n --dir "$T/a=/opt/x")
b=$("$AREC" record --store "$T/sb" --module m --name n --dir "$T/b=/opt/x")
expect_eq "$a" "$b" "digests of the two copies"
a_zstd=$("$AREC" record --store "$T/sa" --module m --name z --compression zstd --dir "$T/a=/opt/x")
b_zstd=$(AREC_THREADS=1 "$AREC" record --store "$T/sb" --module m --name z --compression zstd --dir "$T/b=/opt/x")
expect_eq "${a_zstd#*@}" "${b_zstd#*@}" "zstd digests"

c=$(SOURCE_DATE_EPOCH=1700000000 "$AREC" record --store "$T/sc" --module m --name n --dir "$T/a=/opt/x")
expect_ne "${a#*@}" "${c#*@}" "digest with another SOURCE_DATE_EPOCH"
d=$(SOURCE_DATE_EPOCH=1700000000 "$AREC" record --store "$T/sd" --module m --name n --dir "$T/b=/opt/x")
expect_eq "$c" "$d" "digests with the same SOURCE_DATE_EPOCH"
echo PASS
