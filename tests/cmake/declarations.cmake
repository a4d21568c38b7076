# What the module reads from a FetchContent or ExternalProject declaration, as the SBOM says it: the
# version (a version tag, else the dependency's project(VERSION), else a version in the URL's file name,
# else the tag as it is) and the download location (git+URL@TAG, file:// for a local path).
#
#   cmake -DAREC_MODULE_DIR=<cmake-module> -P declarations.cmake
include("${AREC_MODULE_DIR}/ArecInstallTree.cmake")

function(expect what expected actual)
  if(NOT "${expected}" STREQUAL "${actual}")
    message(SEND_ERROR "${what}: expected [${expected}], got [${actual}]")
  endif()
endfunction()

# _arec_declared_version(out tag project_version url)
_arec_declared_version(v "v1.2.3" "9.9" "")
expect("a version tag" "1.2.3" "${v}")
_arec_declared_version(v "2.0.1-rc1" "" "")
expect("a version tag without v" "2.0.1-rc1" "${v}")
_arec_declared_version(v "4f2a6c1de0b1a9c1b4c3d2e1f0a9b8c7d6e5f4a3" "1.4.0" "")
expect("a commit, and the dependency's project(VERSION)" "1.4.0" "${v}")
_arec_declared_version(v "" "" "https://example.com/dl/fastcrc-0.9.1.tar.gz")
expect("a release tarball" "0.9.1" "${v}")
_arec_declared_version(v "main" "" "")
expect("a branch, and nothing else" "main" "${v}")
_arec_declared_version(v "" "" "https://example.com/dl/source.zip")
expect("nothing that says" "" "${v}")

# _arec_download_location(out repository tag url)
_arec_download_location(l "/srv/repos/tinyidx" "v1.2.3" "")
expect("a local repository" "git+file:///srv/repos/tinyidx@v1.2.3" "${l}")
_arec_download_location(l "https://github.com/example/tinyidx.git" "v1.2.3" "")
expect("a repository by URL" "git+https://github.com/example/tinyidx.git@v1.2.3" "${l}")
_arec_download_location(l "git@github.com:example/tinyidx.git" "" "")
expect("a repository by scp-like address" "git+ssh://git@github.com/example/tinyidx.git" "${l}")
_arec_download_location(l "" "" "/dist/fastcrc-0.9.1.tar.gz")
expect("a local tarball" "file:///dist/fastcrc-0.9.1.tar.gz" "${l}")
_arec_download_location(l "" "" "https://example.com/fastcrc-0.9.1.tar.gz")
expect("a tarball by URL" "https://example.com/fastcrc-0.9.1.tar.gz" "${l}")
