#[=======================================================================[.rst:
ArtifactRecorder
----------------

Records the outputs of CMake targets as reproducible OCI images, by module, name and digest, with the
``arec`` tool. A build records into a store (an OCI image layout directory); ``arec records`` lists
what it holds.

Use it through the package::

  find_package(Arec CONFIG REQUIRED)
  arec_record(controlplane MODULE mesh NAME controlplane)

or by adding the arec source tree (``add_subdirectory`` or ``FetchContent``), which defines the same
functions and the ``Arec::arec`` tool target.

Cache variables
^^^^^^^^^^^^^^^

``AREC_STORE``
  The store every ``arec_record`` records into when it is given no ``STORE``. Empty (the default)
  leaves the choice to ``arec`` when the build runs: the ``AREC_STORE`` environment variable of the
  build, else ``${XDG_DATA_HOME:-~/.local/share}/arec/store``. A relative path given with ``-D`` is
  taken from the directory cmake runs in, as for any PATH cache entry.

``AREC_EXECUTABLE``
  The ``arec`` program to run. Empty (the default) means the ``Arec::arec`` target.

``AREC_SIGNING_KEY``
  The private key every ``arec_record`` signs with when it is given no ``SIGN_KEY``. Empty (the default)
  leaves it to ``arec``: the ``AREC_SIGNING_KEY`` environment variable of the build (a CI secret), else
  unsigned.

The signing key is an input of every record: each build first notes the key's fingerprint (the
``arec_signing_key`` target), and a recording step runs again when it changed. So
``AREC_SIGNING_KEY=team.key cmake --build build`` over an up-to-date build directory records again once
and signs every record (the bytes are the same: nothing new is recorded, the record is signed), and the
next build with the same key runs nothing. A key replaced in its file signs again. A key that goes away
(a build without ``AREC_SIGNING_KEY``) leaves the records signed and is said once, as a warning: what the
build records from then on is unsigned. A key that does not load fails the build, naming it.
#]=======================================================================]

include_guard(GLOBAL)

set(AREC_STORE "" CACHE PATH "Store that arec_record() records into (empty: AREC_STORE of the build's environment, else arec's default)")
set(AREC_EXECUTABLE "" CACHE FILEPATH "The arec program arec_record() runs (empty: the Arec::arec target)")
set(AREC_SIGNING_KEY "" CACHE FILEPATH "Private key arec_record() signs with (empty: AREC_SIGNING_KEY of the build's environment, else unsigned)")

#[=======================================================================[.rst:
.. command:: arec_record

  Records a target's output as an OCI image each time the target is linked::

    arec_record(<target>
                [MODULE <module>]
                [NAME <name>]
                [DESTINATION <dir>]
                [FILES <src>[=<dest>]...]
                [DIRECTORIES <src>[=<dest>]...]
                [BASE oci:<dir>[:<ref>] | <reference>]
                [ENTRYPOINT <arg>...]
                [ENV <key>=<value>...]
                [COMPRESSION gzip|zstd|none]
                [RUNTIME auto|none]
                [SBOM spdx|cyclonedx... | none]
                [LAYERS <n>]
                [USER <name>|<uid>[:<group>|<gid>]]
                [PACKAGES <package>[:<arch>]...]
                [SIGN_KEY <file>]
                [STORE <dir>]
                [COMPONENT <component> [PREFIX <dir>]]
                [PLUGINS <target>[=<dest>]...]
                [PACKAGES_INFO <file>...])

  Adds a recording step (the target ``arec_record_<target>``, part of ``ALL``) that runs ``arec record``
  on ``$<TARGET_FILE:<target>>``. The target's build ``RPATH`` is made ``$ORIGIN``-relative
  (``BUILD_RPATH_USE_ORIGIN``, unless the project set it, for instance through
  ``CMAKE_BUILD_RPATH_USE_ORIGIN``), so its file, and the image's digest, do not depend on where the build
  tree is; ``arec record`` warns about an ``RPATH`` or ``RUNPATH`` entry that still names a directory of
  the build machine. It runs when any input of the record changes: the target's file, a
  ``FILES`` file, a file or directory of a ``DIRECTORIES`` tree (an entry added or removed too), or a
  library of the runtime closure, such as the project's own shared libraries, also when the target does
  not relink (``CMAKE_LINK_DEPENDS_NO_SHARED``). A build that changes none of them runs nothing, and a
  recording that comes out with the digest already recorded records nothing new. A failing recording
  fails the build with arec's own message, and runs again at the next build. The record carries the
  target's name and, when there is one, the build configuration (``$<CONFIG>``): each configuration has
  its own latest record, so Ninja Multi-Config records Debug and Release apart and a Debug build never
  changes what a Release compose or push sees.

  ``<target>``
    An executable or a shared library built in the current directory (an ALIAS of one is accepted).

  ``MODULE <module>``
    The module of the record. Default: ``PROJECT_NAME``, lower-cased, with every run of characters
    that may not appear in a repository path component replaced by ``-``.

  ``NAME <name>``
    The name of the record within its module. Default: the target's name, treated the same way.
    Module and name each must be one OCI repository path component: ``[a-z0-9]+((.|_|__|-+)[a-z0-9]+)*``.
    Both accept generator expressions (``NAME api-$<LOWER_CASE:$<CONFIG>>``); what they evaluate to is
    checked by ``arec record`` when the build runs.

  ``DESTINATION <dir>``
    Where the target's file goes in the image. Default: ``/usr/local/bin`` for an executable,
    ``/usr/local/lib`` for a shared library (which is also recorded under its ``SONAME``, when that
    name differs from the file's).

  ``FILES <src>[=<dest>]...``
    More files to pack: ``<src>`` on the build machine (relative to the current source directory),
    ``<dest>`` its path in the image (default: ``/usr/local/bin/<file name>``); a ``<dest>`` ending in
    ``/`` is a directory the file goes into.

  ``DIRECTORIES <src>[=<dest>]...``
    Directory trees to pack under ``<dest>`` (default ``/``).

  ``BASE oci:<dir>[:<ref>] | <reference>``
    The image to build on: from a local OCI image layout (relative to the current source directory), or
    a registry reference such as ``mesh/base@sha256:...``, pulled into the store once and recorded by
    digest only (without a host, from the registry the node settings give).

  ``ENTRYPOINT <arg>...``
    The image's entrypoint. Default for an executable: ``<DESTINATION>/<target file name>``; a shared
    library has none. ``ENTRYPOINT`` with no argument gives an executable's image none either.

  ``ENV <key>=<value>...``
    Environment variables of the image.

  ``COMPRESSION gzip|zstd|none``
    Layer compression. Default: ``gzip``.

  ``RUNTIME auto|none``
    ``auto`` (the default) adds what the dynamic loader needs to run the recorded files: the loader,
    every library they need (recursively) at the path the loader looks it up at, and their ``SONAME``
    links; a library the ``BASE`` holds is not added, and must define every symbol version needed from
    it. A static program gets nothing added. ``none`` records only what is named.
  In a cross build (a toolchain file, ``CMAKE_CROSSCOMPILING``), the image is for the target's
  platform: arec reads it from the recorded ELF files, and is also told the one ``CMAKE_SYSTEM_NAME``
  and ``CMAKE_SYSTEM_PROCESSOR`` name (``linux/arm64`` for ``Linux``/``aarch64``), which the files must
  not contradict. The loader and libraries added with ``RUNTIME auto`` come from the target's root:
  ``CMAKE_SYSROOT``, else the directory above the cross compiler's own ``libc.so.6`` (for Debian's
  ``g++-aarch64-linux-gnu``, ``/usr/aarch64-linux-gnu``), never from the build machine.

  ``SBOM spdx|cyclonedx... | none``
    The SBOMs kept beside the record, each a referrer of its image: ``spdx`` (SPDX 2.3), ``cyclonedx``
    (CycloneDX 1.6), both (``SBOM spdx cyclonedx``), or ``none``. ``arec sbom --format`` prints them.
    Default: ``spdx``.

  ``LAYERS <n>``
    At most ``<n>`` layers of the record's own, 1 to 100 (default 16): one per Debian package of the
    runtime closure, its files of no package, the build's shared libraries, the other files; past
    ``<n>`` the smallest packages share one layer. ``1`` records one layer of everything.

  ``USER <name>|<uid>[:<group>|<gid>]``
    The user the image runs as (the config's ``User``, written ``UID:GID``). A name is looked up in the
    image's ``/etc/passwd``: without a ``BASE`` (and with ``RUNTIME auto``) arec writes one with ``root``
    (0) and ``nonroot`` (65532), so ``USER nonroot`` runs as 65532, which Kubernetes' ``runAsNonRoot``
    accepts; with a ``BASE`` the name must be the base's. A number is taken as it is.

  ``PACKAGES <package>[:<arch>]...``
    Installed Debian packages to add, each a layer of its own: the files dpkg lists for it
    (documentation, man pages and locales left out), and the runtime closure of its programs and
    libraries; the SBOM names each with its version. ``PACKAGES tzdata`` gives the image its time zones.
    A cross build takes the target architecture's packages (``<package>:arm64``, or of architecture
    ``all``). A package that is not installed fails the recording, naming ``apt-get install``.

  ``SIGN_KEY <file>``
    Sign the record with this private key (``arec record --sign-key``; relative to the current source
    directory): a signature and SLSA provenance, kept as referrers of the image. Default:
    ``AREC_SIGNING_KEY``. The key's fingerprint is an input: replacing the file's key records again.

  ``STORE <dir>``
    The store to record into (relative to the current binary directory). Default: ``AREC_STORE``.

  ``COMPONENT <component>``
    The image is what the project's install rules put in this component: exactly what
    ``cmake --install <build> --component <component> --config <CONFIG>`` installs under ``PREFIX``, at its
    install paths and with the install ``RPATH``, with the runtime closure of every ELF file in it (one layer
    per Debian package, as always). The target's file is not added again: the install rules place it, and an
    executable's installed path is the entrypoint (unless ``ENTRYPOINT`` is given). The step stages the
    component into the build tree (``CMakeFiles/arec-stage.*``, removed afterwards) by running the install
    scripts CMake generated, traced, and depends on every file and directory they read and on the scripts
    themselves: a new ``install()`` rule, a changed data file or a rebuilt library or plugin records again in
    the same build, and a build that changes none of them records nothing. It runs after every target of
    ``ALL``, since any may be installed. A component that installs no file, or a file the rules put outside
    the prefix (an absolute ``DESTINATION``), fails the build saying so. ``DESTINATION`` does not apply.
    Installing rewrites a file's build ``RPATH`` in place, keeping its length, so every executable and
    library of the project gets ``BUILD_RPATH_USE_ORIGIN`` (unless the project set it): the installed
    files, and the digest, are then the same wherever the build tree is.

  ``PREFIX <dir>``
    The install prefix of ``COMPONENT`` in the image. Default: ``/usr/local``.

  ``PLUGINS <target>[=<dest>]...``
    Libraries the program loads with ``dlopen`` (``MODULE`` or ``SHARED`` libraries of the project): the step
    depends on each and records again when one changes, and the image holds each with its runtime closure.
    With ``COMPONENT`` the component must install each (at its install path); without, a plugin goes to
    ``<dest>`` (default ``/usr/local/lib/``, a ``<dest>`` ending in ``/`` being a directory). When a recorded
    program calls ``dlopen`` and a ``MODULE`` library of the project is in no image (neither installed by the
    component nor named in ``PLUGINS`` of any ``arec_record``), the build warns, naming it.

  ``PACKAGES_INFO <file>...``
    JSON files naming packages of no Debian package that the image holds, such as a vendor's library
    under ``/opt`` (relative to the current source directory)::

      {"packages": [{"name": "vendorlib", "version": "4.2.0", "license": "LicenseRef-Acme",
                     "download_location": "https://vendor.example/vendorlib-4.2.0.tar.gz",
                     "checksum": "SHA256=<hex>", "supplier": "Organization: Acme",
                     "paths": ["/opt/vendor/lib"], "files": ["libvendor.so.4"]}]}

    A file under one of ``paths``, or in an install tree a file named in ``files`` (by name or ``SONAME``),
    is the package's: the package's files are a layer of their own, ``dep:NAME=VERSION``, and the SBOM
    names the package (name, version, download location, checksum, licence, purl). The project's
    ``FetchContent`` and ``ExternalProject`` dependencies are named so without being listed: their name,
    ``GIT_TAG`` (a version tag such as ``v1.2.3`` gives ``1.2.3``) or the dependency's own
    ``project(VERSION)``, ``GIT_REPOSITORY`` or ``URL``, and ``URL_HASH``; a ``PACKAGES_INFO`` entry of the
    same name adds to what was found (its licence, say). A library found through an absolute ``RUNPATH``
    outside the build (``/opt/vendor/lib``) stays at that path in the image; without a package naming it,
    the build warns that the SBOM knows it only as a file.

  ``FILES``, ``DIRECTORIES``, ``ENTRYPOINT`` and ``ENV`` accept generator expressions. An item that
  evaluates to an empty string is left out, and one that evaluates to a list gives one argument per
  element; a literal comma inside such an item is written ``$<COMMA>``.

  Unknown keywords (named with the nearest keyword, ``MODUEL: did you mean MODULE?``), a missing target
  and a target of an unsupported type are errors when the project is configured. So is a ``FILES`` or
  ``DIRECTORIES`` source without a generator expression that does not exist once the directory's
  ``CMakeLists.txt`` has been read to its end, unless the build generates it: the ``OUTPUT`` (or
  ``BYPRODUCTS``) of an ``add_custom_command()`` anywhere in that file, or a source marked ``GENERATED``;
  the recording step then runs after it is made.

  Without ``COMPONENT``, a library the build's ``RUNPATH`` leads to is recorded where that path puts it in
  the image (``$ORIGIN/../_deps/...`` gives ``/usr/local/_deps/...``); one at a path made from the build
  tree's layout rather than a ``lib`` directory is warned about once, naming ``COMPONENT`` as the way to
  install paths.

  Example::

    add_executable(controlplane controlplane.cpp)
    target_link_options(controlplane PRIVATE -static)
    arec_record(controlplane MODULE mesh
                FILES controlplane.toml=/etc/mesh/controlplane.toml
                      $<$<CONFIG:Debug>:debug.toml=/etc/mesh/debug.toml>
                ENV MESH_LOG=info)
    # mesh/controlplane: /usr/local/bin/controlplane (also the entrypoint), its configuration file,
    # and in Debug builds a second one.

  An install component as the image::

    install(TARGETS gateway gwcore RUNTIME DESTINATION bin COMPONENT runtime
                                   LIBRARY DESTINATION lib COMPONENT runtime NAMELINK_COMPONENT dev)
    install(TARGETS gwplugin LIBRARY DESTINATION lib/gateway/plugins COMPONENT runtime)
    install(FILES gateway.conf DESTINATION etc/gateway COMPONENT runtime)
    arec_record(gateway COMPONENT runtime PLUGINS gwplugin)
    # shop/gateway: /usr/local/bin/gateway (the entrypoint), lib/libgwcore.so.*, the plugin and
    # etc/gateway/gateway.conf under /usr/local, each where the install rules put it.
#]=======================================================================]
function(arec_record target)
  set(one_value MODULE NAME DESTINATION BASE COMPRESSION RUNTIME LAYERS USER SIGN_KEY STORE COMPONENT PREFIX)
  set(multi_value FILES DIRECTORIES ENTRYPOINT ENV PACKAGES SBOM PLUGINS PACKAGES_INFO)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "${one_value}" "${multi_value}")
  if(arg_UNPARSED_ARGUMENTS)
    _arec_fail_unknown_arguments(arec_record "${target}" "${one_value};${multi_value}" ${arg_UNPARSED_ARGUMENTS})
  endif()
  foreach(keyword IN LISTS arg_KEYWORDS_MISSING_VALUES)
    if(NOT keyword MATCHES "^(FILES|DIRECTORIES|ENTRYPOINT|ENV)$")
      message(FATAL_ERROR "arec_record(${target}): ${keyword} needs a value")
    endif()
  endforeach()

  _arec_built_target(built "${target}")
  get_target_property(type ${built} TYPE)
  # The build RPATH names the build tree's library directories; as $ORIGIN-relative entries it is the
  # same wherever the tree is, and so is the recorded file's digest. A choice the project made stays.
  get_property(origin_set TARGET ${built} PROPERTY BUILD_RPATH_USE_ORIGIN SET)
  if(NOT origin_set)
    set_property(TARGET ${built} PROPERTY BUILD_RPATH_USE_ORIGIN ON)
  endif()

  if(NOT DEFINED arg_MODULE)
    _arec_path_component(arg_MODULE "${PROJECT_NAME}" "the project name")
  endif()
  if(NOT DEFINED arg_NAME)
    _arec_path_component(arg_NAME "${built}" "the target name")
  endif()
  _arec_check_component("${target}" MODULE "${arg_MODULE}")
  _arec_check_component("${target}" NAME "${arg_NAME}")

  _arec_check_install_arguments("${target}" "${arg_COMPONENT}" "${arg_PREFIX}" "${arg_DESTINATION}" "${arg_PLUGINS}")
  if(NOT DEFINED arg_DESTINATION)
    if(type STREQUAL "EXECUTABLE")
      set(arg_DESTINATION /usr/local/bin)
    else()
      set(arg_DESTINATION /usr/local/lib)
    endif()
  endif()
  if(NOT arg_DESTINATION MATCHES "^/")
    message(FATAL_ERROR "arec_record(${target}): DESTINATION \"${arg_DESTINATION}\" is not an absolute path in the image")
  endif()
  string(REGEX REPLACE "/+$" "" destination "${arg_DESTINATION}")

  if(DEFINED arg_COMPRESSION AND NOT arg_COMPRESSION MATCHES "^(gzip|zstd|none)$")
    message(FATAL_ERROR "arec_record(${target}): COMPRESSION \"${arg_COMPRESSION}\" is not one of gzip, zstd, none")
  endif()
  if(DEFINED arg_SBOM)
    list(LENGTH arg_SBOM sbom_count)
    list(REMOVE_DUPLICATES arg_SBOM)
    list(LENGTH arg_SBOM sbom_distinct)
    foreach(format IN LISTS arg_SBOM)
      if(NOT format MATCHES "^(spdx|cyclonedx|none)$" OR (format STREQUAL "none" AND sbom_distinct GREATER 1))
        message(FATAL_ERROR "arec_record(${target}): SBOM \"${arg_SBOM}\" is not spdx, cyclonedx, both, or none")
      endif()
    endforeach()
    if(NOT sbom_count EQUAL sbom_distinct)
      message(FATAL_ERROR "arec_record(${target}): SBOM names a format twice")
    endif()
  endif()

  if(DEFINED arg_LAYERS AND (NOT arg_LAYERS MATCHES "^[1-9][0-9]*$" OR arg_LAYERS GREATER 100))
    message(FATAL_ERROR "arec_record(${target}): LAYERS \"${arg_LAYERS}\" is not a number from 1 to 100")
  endif()
  if(DEFINED arg_RUNTIME AND NOT arg_RUNTIME MATCHES "^(auto|none)$")
    message(FATAL_ERROR "arec_record(${target}): RUNTIME \"${arg_RUNTIME}\" is not one of auto, none")
  endif()
  if(DEFINED arg_USER)
    # What arec record --user accepts: a name (lowercase letters, digits, '_', '-') or a number below 2^32 - 1,
    # then optionally ':' and a group the same way.
    set(account "([a-z_][a-z0-9_-]*|[0-9]+)")
    set(user_ok FALSE)
    if(arg_USER MATCHES "^${account}(:${account})?$")
      set(user_ok TRUE)
      string(REPLACE ":" ";" parts "${arg_USER}")
      foreach(part IN LISTS parts)
        string(LENGTH "${part}" length)
        if(length GREATER 32 OR (part MATCHES "^[0-9]+$" AND (length GREATER 10 OR part GREATER 4294967294)))
          set(user_ok FALSE)
        endif()
      endforeach()
    endif()
    if(NOT user_ok)
      message(FATAL_ERROR "arec_record(${target}): USER \"${arg_USER}\" is not a user name or number, optionally followed by :group or :gid")
    endif()
  endif()
  foreach(package IN LISTS arg_PACKAGES)
    if(NOT package MATCHES "^[a-z0-9][a-z0-9+.-]+(:[a-z0-9-]+)?$")
      message(FATAL_ERROR "arec_record(${target}): PACKAGES \"${package}\" is not a Debian package name, optionally followed by :arch")
    endif()
  endforeach()

  set(file "$<TARGET_FILE:${built}>")
  set(args --module=${arg_MODULE} --name=${arg_NAME} --target=${built}
           "$<$<BOOL:$<CONFIG>>:--config=$<CONFIG>>")
  set(default_entrypoint FALSE)
  if(type STREQUAL "EXECUTABLE" AND NOT DEFINED arg_ENTRYPOINT AND NOT "ENTRYPOINT" IN_LIST arg_KEYWORDS_MISSING_VALUES)
    set(default_entrypoint TRUE)
  endif()
  if(DEFINED arg_COMPONENT)
    # The install rules place the target's file: its installed path is the entrypoint.
    if(default_entrypoint)
      list(APPEND args "--entrypoint-name=$<TARGET_FILE_NAME:${built}>")
    endif()
  else()
    list(APPEND args "--file=${file}=${destination}/$<TARGET_FILE_NAME:${built}>")
    if(type STREQUAL "SHARED_LIBRARY")
      # The dynamic loader looks a library up by its SONAME (libfoo.so.1), not its file name (libfoo.so.1.2.3).
      set(soname "$<TARGET_SONAME_FILE_NAME:${built}>")
      list(APPEND args "$<$<NOT:$<STREQUAL:${soname},$<TARGET_FILE_NAME:${built}>>>:--file=${file}=${destination}/${soname}>")
    endif()
    if(default_entrypoint)
      set(arg_ENTRYPOINT "${destination}/$<TARGET_FILE_NAME:${built}>")
    endif()
  endif()
  _arec_install_args(args install_depends ${built} "${arg_COMPONENT}" "${arg_PREFIX}" "${arg_PLUGINS}" "${arg_PACKAGES_INFO}")
  _arec_option_args(args --file ${arg_FILES})
  _arec_option_args(args --dir ${arg_DIRECTORIES})
  _arec_option_args(args --entrypoint ${arg_ENTRYPOINT})
  _arec_option_args(args --env ${arg_ENV})
  if(DEFINED arg_BASE)
    list(APPEND args "--base=${arg_BASE}")
  endif()
  if(DEFINED arg_COMPRESSION)
    list(APPEND args "--compression=${arg_COMPRESSION}")
  endif()
  if(DEFINED arg_RUNTIME)
    list(APPEND args "--runtime=${arg_RUNTIME}")
  endif()
  if(DEFINED arg_SBOM)
    list(JOIN arg_SBOM "," sboms)
    list(APPEND args "--sbom=${sboms}")
  endif()
  if(DEFINED arg_LAYERS)
    list(APPEND args "--layers=${arg_LAYERS}")
  endif()
  if(DEFINED arg_USER)
    list(APPEND args "--user=${arg_USER}")
  endif()
  foreach(package IN LISTS arg_PACKAGES)
    list(APPEND args "--package=${package}")
  endforeach()
  if(NOT DEFINED arg_SIGN_KEY AND NOT AREC_SIGNING_KEY STREQUAL "")
    set(arg_SIGN_KEY "${AREC_SIGNING_KEY}")
  endif()
  set(sign_key "")
  if(DEFINED arg_SIGN_KEY)
    get_filename_component(sign_key "${arg_SIGN_KEY}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args "--sign-key=${sign_key}")
  endif()
  if(CMAKE_CROSSCOMPILING)
    _arec_toolchain_platform(platform)
    if(platform)
      list(APPEND args "--platform=${platform}")
    endif()
    _arec_toolchain_sysroot(sysroot)
    if(sysroot)
      list(APPEND args "--sysroot=${sysroot}")
    endif()
  endif()

  _arec_signing_stamp(signing "${sign_key}")
  _arec_command(command "${arg_STORE}")
  _arec_record_step(${built} "${arg_MODULE}/${arg_NAME}" "${arg_FILES};${arg_DIRECTORIES}" "${signing}"
                    "${install_depends}" ${command} record ${args})
  _arec_order_after_base(${built} "${arg_MODULE}/${arg_NAME}" "${arg_BASE}")
  get_property(stamp TARGET ${built} PROPERTY AREC_RECORD_STAMP)
  _arec_check_sources_later("${target}" "${stamp}" "${one_value};${multi_value}" "${arg_FILES}" "${arg_DIRECTORIES}")
  if(DEFINED arg_COMPONENT)
    _arec_cpack_command(${built} "${arg_COMPONENT}" "${arg_PREFIX}" ${command} record ${args})
  endif()
endfunction()

# A record whose BASE is another target's record of this project (`M/N`, or `oci:<dir>:M/N` of the
# store) is made after that one, whichever arec_record() came first: the recording steps are targets of
# their own, which the link order of the targets no longer sequences.
function(_arec_order_after_base built repository base)
  string(REPLACE "/" "__" key "${repository}")
  set_property(GLOBAL PROPERTY _arec_recorded_by_${key} arec_record_${built})
  get_property(waiting GLOBAL PROPERTY _arec_waiting_on_${key})
  foreach(waiter IN LISTS waiting)
    add_dependencies(${waiter} arec_record_${built})
  endforeach()
  if(base MATCHES [[^(oci:.*:)?([a-z0-9._-]+/[a-z0-9._-]+)$]])
    string(REPLACE "/" "__" base_key "${CMAKE_MATCH_2}")
    get_property(recorder GLOBAL PROPERTY _arec_recorded_by_${base_key})
    if(recorder)
      add_dependencies(arec_record_${built} ${recorder})
    else()
      set_property(GLOBAL APPEND PROPERTY _arec_waiting_on_${base_key} arec_record_${built})
    endif()
  endif()
endfunction()

# --- Composing declarations ---------------------------------------------------------------------------
# arec_compose(): see ArecCompose.cmake. Like arec_record() it finds the tool and the store through
# _arec_command().
include("${CMAKE_CURRENT_LIST_DIR}/ArecCompose.cmake")
# The checks of their arguments beyond the grammar: see ArecArguments.cmake.
include("${CMAKE_CURRENT_LIST_DIR}/ArecArguments.cmake")
# COMPONENT, PLUGINS, PACKAGES_INFO: ArecInstallTree.cmake.
include("${CMAKE_CURRENT_LIST_DIR}/ArecInstallTree.cmake")

# --- Private helpers ----------------------------------------------------------------------------------

# Sets <out> to the target that arec_record(<target>) records: <target> itself, or what an ALIAS names.
# A FATAL_ERROR names the problem when that is no target, one of an unsupported type, an imported one,
# or one defined in another directory (add_custom_command(TARGET) reaches only the current directory).
function(_arec_built_target out target)
  if(NOT TARGET "${target}")
    message(FATAL_ERROR "arec_record(${target}): there is no target named \"${target}\" "
                        "(call arec_record() after add_executable() or add_library())")
  endif()
  get_target_property(aliased "${target}" ALIASED_TARGET)
  set(built "${target}")
  if(aliased)
    set(built "${aliased}")
  endif()
  get_target_property(type ${built} TYPE)
  if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY)$")
    message(FATAL_ERROR "arec_record(${target}): target \"${target}\" is a ${type}; "
                        "only an EXECUTABLE or a SHARED_LIBRARY can be recorded")
  endif()
  get_target_property(imported ${built} IMPORTED)
  if(imported)
    message(FATAL_ERROR "arec_record(${target}): target \"${target}\" is imported; "
                        "only a target this project builds can be recorded")
  endif()
  get_target_property(binary_dir ${built} BINARY_DIR)
  if(NOT binary_dir STREQUAL CMAKE_CURRENT_BINARY_DIR)
    get_target_property(source_dir ${built} SOURCE_DIR)
    message(FATAL_ERROR "arec_record(${target}): target \"${target}\" is defined in ${source_dir}; "
                        "call arec_record() in that directory's CMakeLists.txt")
  endif()
  set(${out} "${built}" PARENT_SCOPE)
endfunction()

# Sets <out> to <text> made a repository path component: lower-cased, every run of other characters
# (or of separators that may not follow each other) one "-", no separator at either end.
function(_arec_path_component out text what)
  string(TOLOWER "${text}" value)
  string(REGEX REPLACE "[^a-z0-9._-]+" "-" value "${value}")
  # Between alphanumerics may stand ".", "_", "__" or a run of "-"; any other run of separators becomes "-".
  string(REGEX MATCHALL "[a-z0-9]+|[._-]+" parts "${value}")
  set(value "")
  foreach(part IN LISTS parts)
    if(part MATCHES "^[._-]" AND NOT part MATCHES "^([.]|_|__|-+)$")
      set(part "-")
    endif()
    string(APPEND value "${part}")
  endforeach()
  string(REGEX REPLACE "^[._-]+|[._-]+$" "" value "${value}")
  if(value STREQUAL "")
    message(FATAL_ERROR "arec_record: ${what} \"${text}\" gives no usable record name; give MODULE and NAME")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

# Fails unless <value> is one repository path component, naming <keyword> of arec_record(<target>).
# A value holding a generator expression is checked by arec when the build runs (--module, --name).
function(_arec_check_component target keyword value)
  if(value MATCHES [[\$<]])
    return()
  endif()
  if(NOT value MATCHES "^[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*$")
    message(FATAL_ERROR "arec_record(${target}): ${keyword} \"${value}\" is not a repository path component "
                        "(lower-case letters and digits, separated by \".\", \"_\", \"__\" or \"-\")")
  endif()
endfunction()

# The recording step of <built>: a custom command whose output is a stamp per configuration, in a custom
# target of ALL, rather than a POST_BUILD command, which runs only when the target relinks and can have no
# dependencies. It depends on the target's file and on the FILES and DIRECTORIES sources that exist when
# the project is configured (<inputs>: the "src[=dest]" items); `arec record --stamp` then writes a
# depfile naming every file it packed (the runtime closure too, so the project's own shared libraries
# even when the executable does not relink, CMAKE_LINK_DEPENDS_NO_SHARED) and every directory of the
# DIRECTORIES trees (whose time changes when an entry comes or goes). A change to any of them records
# again; a build that changes none runs nothing. A failed recording writes no stamp, so it runs again.
# The signing key is an input too: <signing> is the target and the file of _arec_signing_stamp().
# <what> is MODULE/NAME for the build's message; <more_depends> what else it depends on (plugins, packages
# info); ARGN the arec command line.
function(_arec_record_step built what inputs signing more_depends)
  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/arec_record_${built}$<$<BOOL:$<CONFIG>>:.$<CONFIG>>.stamp")
  list(GET signing 0 signing_target)
  list(GET signing 1 signing_file)
  set(depends ${built} "$<TARGET_FILE:${built}>" "${signing_file}" ${more_depends})
  foreach(item IN LISTS inputs)
    # An item with a generator expression is known only when the build runs: the depfile has it then.
    if(item STREQUAL "" OR item MATCHES [[\$<]])
      continue()
    endif()
    string(REGEX REPLACE "=.*$" "" source "${item}")
    cmake_path(ABSOLUTE_PATH source BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
    # A source that does not exist yet must be one the build generates (_arec_check_sources, at the end
    # of the directory, adds it then).
    if(EXISTS "${source}")
      list(APPEND depends "${source}")
    endif()
  endforeach()
  if(what MATCHES [[\$<]])
    set(what "the target ${built}")
  endif()
  # Depfile paths are absolute; NEW makes every generator read them the same way.
  cmake_policy(PUSH)
  cmake_policy(SET CMP0116 NEW)
  add_custom_command(
    OUTPUT "${stamp}"
    COMMAND ${ARGN} "--stamp=${stamp}"
    DEPENDS ${depends}
    DEPFILE "${stamp}.d"
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    COMMENT "Recording ${what}"
    VERBATIM COMMAND_EXPAND_LISTS)
  cmake_policy(POP)
  add_custom_target(arec_record_${built} ALL DEPENDS "${stamp}")
  add_dependencies(arec_record_${built} ${signing_target})
  # For arec_compose(DEPENDS <target>): what it depends on to compose again after a recording.
  set_property(TARGET ${built} PROPERTY AREC_RECORD_STAMP "${stamp}")
endfunction()

# Sets <out> to the target and the file that note the signing key a recording step signs with: <sign_key>
# (SIGN_KEY or the AREC_SIGNING_KEY cache variable, absolute), else, when empty, whatever
# AREC_SIGNING_KEY the build's environment gives, which configure cannot see. The target runs at every
# build (before any recording step) and `arec __signing-stamp` rewrites the file only when the key's
# fingerprint, or its absence, changed: a BYPRODUCTS file, restat by Ninja and compared by time by Make,
# so a recording step runs again exactly when the key changed. One per key, shared by every
# arec_record() that signs with it; one file per configuration (Ninja Multi-Config builds them apart).
function(_arec_signing_stamp out sign_key)
  if(sign_key STREQUAL "")
    set(key_target arec_signing_key)
  else()
    string(SHA256 key_hash "${sign_key}")
    string(SUBSTRING "${key_hash}" 0 12 key_hash)
    set(key_target arec_signing_key_${key_hash})
  endif()
  set(file "${CMAKE_BINARY_DIR}/CMakeFiles/${key_target}$<$<BOOL:$<CONFIG>>:.$<CONFIG>>.txt")
  if(NOT TARGET ${key_target})
    set(args "")
    if(NOT sign_key STREQUAL "")
      set(args "--sign-key=${sign_key}")
    endif()
    _arec_command(command "")
    add_custom_target(${key_target}
      COMMAND ${command} __signing-stamp "${file}" ${args}
      BYPRODUCTS "${file}"
      WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
      COMMENT "Checking the signing key"
      VERBATIM)
  endif()
  set(${out} ${key_target} "${file}" PARENT_SCOPE)
endfunction()

# Appends "<option>=<item>" to the list <out> for each item. An item holding a generator expression
# becomes one "<option>=<element>" per element of what it evaluates to, and nothing when that is empty;
# COMMAND_EXPAND_LISTS then turns each element into an argument of its own. Emptiness is tested with
# STREQUAL, not BOOL: BOOL would also drop values such as "0", "off" or "x-NOTFOUND".
function(_arec_option_args out option)
  set(args ${${out}})
  foreach(item IN LISTS ARGN)
    if(item MATCHES [[\$<]])
      list(APPEND args "$<$<NOT:$<STREQUAL:${item},>>:${option}=$<JOIN:${item},$<SEMICOLON>${option}=>>")
    else()
      list(APPEND args "${option}=${item}")
    endif()
  endforeach()
  set(${out} ${args} PARENT_SCOPE)
endfunction()

# Sets <out> to the OCI platform (os/arch[/variant]) of the toolchain's CMAKE_SYSTEM_NAME and
# CMAKE_SYSTEM_PROCESSOR, or empty when arec has no name for it (the ELF files then say alone).
function(_arec_toolchain_platform out)
  string(TOLOWER "${CMAKE_SYSTEM_NAME}" os)
  string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" processor)
  set(arch "")
  if(processor MATCHES "^(x86_64|amd64)$")
    set(arch amd64)
  elseif(processor MATCHES "^(aarch64|arm64)$")
    set(arch arm64)
  elseif(processor MATCHES "^armv7")
    set(arch arm/v7)
  elseif(processor MATCHES "^armv6")
    set(arch arm/v6)
  elseif(processor MATCHES "^i[3-6]86$")
    set(arch 386)
  elseif(processor MATCHES "^(riscv64|ppc64le|s390x)$")
    set(arch ${processor})
  endif()
  if(os STREQUAL "linux" AND arch)
    set(${out} "linux/${arch}" PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# Sets <out> to the target's root the runtime closure comes from: CMAKE_SYSROOT, else the directory
# above the lib/ holding the cross compiler's own libc.so.6 (/usr/aarch64-linux-gnu for Debian's
# cross packages); empty when neither is found (arec then looks in /usr/<triplet> itself).
function(_arec_toolchain_sysroot out)
  set(${out} "" PARENT_SCOPE)
  if(CMAKE_SYSROOT)
    set(${out} "${CMAKE_SYSROOT}" PARENT_SCOPE)
    return()
  endif()
  set(compiler "${CMAKE_CXX_COMPILER}")
  if(NOT compiler)
    set(compiler "${CMAKE_C_COMPILER}")
  endif()
  if(NOT compiler)
    return()
  endif()
  execute_process(COMMAND "${compiler}" -print-file-name=libc.so.6
    OUTPUT_VARIABLE libc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
  if(failed OR NOT IS_ABSOLUTE "${libc}" OR NOT EXISTS "${libc}")
    return()
  endif()
  cmake_path(NORMAL_PATH libc)
  cmake_path(GET libc PARENT_PATH lib)
  cmake_path(GET lib PARENT_PATH root)
  set(${out} "${root}" PARENT_SCOPE)
endfunction()

# Sets <out> to the arec command line up to the command name: the program, and --store when one is
# given (<store>, else the AREC_STORE cache variable), as an absolute path.
function(_arec_command out store)
  if(AREC_EXECUTABLE)
    set(command "${AREC_EXECUTABLE}")
  elseif(TARGET Arec::arec)
    set(command "$<TARGET_FILE:Arec::arec>")
  else()
    message(FATAL_ERROR "arec: no arec program: use find_package(Arec), add the arec source tree with "
                        "add_subdirectory() or FetchContent, or set AREC_EXECUTABLE")
  endif()
  set(base "${CMAKE_CURRENT_BINARY_DIR}")
  if(store STREQUAL "" AND NOT AREC_STORE STREQUAL "")
    set(store "${AREC_STORE}")
    set(base "${CMAKE_BINARY_DIR}")
  endif()
  if(NOT store STREQUAL "")
    cmake_path(ABSOLUTE_PATH store BASE_DIRECTORY "${base}" NORMALIZE)
    list(APPEND command "--store=${store}")
  endif()
  set(${out} ${command} PARENT_SCOPE)
endfunction()
