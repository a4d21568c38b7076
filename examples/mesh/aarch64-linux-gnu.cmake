# Toolchain file for arm64 with Debian's cross compiler (apt-get install g++-aarch64-linux-gnu):
#   cmake -S examples/mesh -B build-mesh-arm64 -G Ninja --toolchain examples/mesh/aarch64-linux-gnu.cmake \
#         -DCMAKE_PREFIX_PATH=<arec install prefix> -DAREC_STORE=<store>
# arec_record() then records images for linux/arm64, with the loader and libraries of the cross
# packages (/usr/aarch64-linux-gnu), never the build machine's.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Libraries and headers of the target only; programs (and arec's own package, a build machine tool) of both.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
