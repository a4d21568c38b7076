#!/usr/bin/env bash
# Fixture: installs this build of arec into a prefix, as a user would (`cmake --install`), for the tests
# that use the package through find_package(Arec). Checks the package's files are all there, with
# Arec::port_reader's library and headers.
#
#   install.sh BUILD_DIR CONFIG PREFIX
set -euo pipefail
build=$1 config=$2 prefix=$3
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" ${config:+--config "$config"}
[[ -x $prefix/bin/arec ]] || { echo "FAIL: $prefix/bin/arec was not installed" >&2; exit 1; }
package=$(dirname "$(find "$prefix" -name ArecConfig.cmake -print -quit)")
for file in ArecConfig.cmake ArecConfigVersion.cmake ArecTargets.cmake ArtifactRecorder.cmake ArecCompose.cmake ArecInstallTree.cmake \
  ArecCPackExternal.cmake; do
  [[ -f $package/$file ]] || { echo "FAIL: $file was not installed beside ArecConfig.cmake (in ${package:-nowhere})" >&2; exit 1; }
done
for file in lib/libarec_port_reader.a include/arec/port-reader/port_reader.hpp include/arec/util/error.hpp; do
  [[ -n $(find "$prefix" -path "$prefix/${file%%/*}*/${file#*/}" -print -quit) ]] ||
    { echo "FAIL: $file was not installed under $prefix" >&2; exit 1; }
done
