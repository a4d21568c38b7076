# ArecCompose.cmake: arec_compose, composing a declaration as a build output.
#
# Included by ArtifactRecorder.cmake, whose _arec_command() finds the tool and the store the same way
# for arec_record() and arec_compose().
include_guard(GLOBAL)

#[=======================================================================[
arec_compose
------------

Composes a declaration at build time: runs ``arec compose`` on a template, filling every ``arec://``
request from the store's records and the node settings (ARCHITECTURE.md, "Compose").

::

  arec_compose(<output>
               TEMPLATE <file>
               [NODES <file>]
               [STORE <dir>]
               [STRICT]
               [TARGET <name>]
               [DEPENDS <target-or-file>...])

``<output>``
  The composed file; a relative path is taken from ``CMAKE_CURRENT_BINARY_DIR``. It may hold
  ``$<CONFIG>`` (``deploy-$<CONFIG>.yaml``): with a multi-config generator, each configuration then
  composes its own file, with its own depfile. Written atomically:
  when composing fails, the build fails with arec's message and the output is left as it was.
``TEMPLATE <file>``
  The declaration to fill; relative to ``CMAKE_CURRENT_SOURCE_DIR``. ``*.json`` and ``*.json.in`` are
  composed as JSON, anything else as text.
``NODES <file>``
  The node settings (``--nodes``). Without it, arec reads ``AREC_NODES`` from the build's environment,
  or uses its built-in default.
``STORE <dir>``
  The store (``--store``). Without it, the ``AREC_STORE`` cache variable; when that is empty too, arec
  reads ``AREC_STORE`` from the build's environment, or uses its default store.
``STRICT``
  An ``arec://`` kind this arec does not know fails the build instead of warning.
``TARGET <name>``
  The name of the target that builds the output (default ``arec_compose_<output>``, with every
  character other than ``[A-Za-z0-9_.+-]`` made ``_``). It is part of ``ALL``.
``DEPENDS <target-or-file>...``
  Composed after these: name the targets whose records the template asks for (those given to
  ``arec_record``), so that a relink, and so a new record, recomposes the output.

An image request names the latest record of the configuration being built (``arec compose --config
$<CONFIG>``), unless the request names another (``arec://image/M/N?config=Release``); a record that
names no configuration serves every one. So a Debug build never changes what the Release output names.

The output is recomposed when the template, the node settings, or (when the template asks for images)
the store's records change: ``arec compose --depfile`` names exactly what it read, so a store that does
not exist yet is no error until an image is asked of it.

Example::

  arec_record(controlplane MODULE mesh NAME controlplane)
  arec_compose(deploy.yaml TEMPLATE deploy.yaml.in NODES ${CMAKE_SOURCE_DIR}/nodes.json
               STRICT DEPENDS controlplane)
#]=======================================================================]
function(arec_compose output)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "STRICT" "TEMPLATE;NODES;STORE;TARGET" "DEPENDS")
  if(ARG_UNPARSED_ARGUMENTS)
    _arec_fail_unknown_arguments(arec_compose "${output}" "TEMPLATE;NODES;STORE;STRICT;TARGET;DEPENDS"
                                 ${ARG_UNPARSED_ARGUMENTS})
  endif()
  if(ARG_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "arec_compose(${output}): ${ARG_KEYWORDS_MISSING_VALUES} given without a value")
  endif()
  if(NOT ARG_TEMPLATE)
    message(FATAL_ERROR "arec_compose(${output}): TEMPLATE <file> is required")
  endif()
  cmake_path(ABSOLUTE_PATH output BASE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}" NORMALIZE OUTPUT_VARIABLE out)
  cmake_path(ABSOLUTE_PATH ARG_TEMPLATE BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE OUTPUT_VARIABLE template)
  if(NOT EXISTS "${template}")
    message(FATAL_ERROR "arec_compose(${output}): TEMPLATE ${template} does not exist")
  endif()

  set(globals "")
  set(depends "${template}")
  # A target given to arec_record() is recorded by its own step, arec_record_<target>, which the output
  # follows, and depends on that step's stamp: rewritten each time it records, it tells the build tool
  # that the store changed in this very build (the store's index.json, in the depfile, was looked at
  # before the build began). arec_record may be called after arec_compose, so both are decided when the
  # build system is generated.
  foreach(dep IN LISTS ARG_DEPENDS)
    if(NOT dep MATCHES "[/$]")
      list(APPEND depends "$<TARGET_NAME_IF_EXISTS:arec_record_${dep}>"
        "$<$<TARGET_EXISTS:${dep}>:$<TARGET_GENEX_EVAL:${dep},$<TARGET_PROPERTY:${dep},AREC_RECORD_STAMP>>>")
    endif()
  endforeach()
  if(ARG_NODES)
    cmake_path(ABSOLUTE_PATH ARG_NODES BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE OUTPUT_VARIABLE nodes)
    list(APPEND globals --nodes "${nodes}")
    list(APPEND depends "${nodes}")
  endif()
  _arec_command(command "${ARG_STORE}")
  set(strict "")
  if(ARG_STRICT)
    set(strict --strict)
  endif()

  cmake_path(RELATIVE_PATH out BASE_DIRECTORY "${CMAKE_BINARY_DIR}" OUTPUT_VARIABLE shown)
  set(target "${ARG_TARGET}")
  if(NOT target)
    # One target for every configuration: $<CONFIG> in the name is spelled "config".
    string(REPLACE "$<CONFIG>" "config" name "${shown}")
    string(REGEX REPLACE "[^A-Za-z0-9_.+-]" "_" target "arec_compose_${name}")
  endif()
  # One depfile per configuration: each configuration's output is composed from its own records.
  set(depfile "${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}$<$<BOOL:$<CONFIG>>:.$<CONFIG>>.d")
  # arec writes OUT and the depfile by renaming a temporary in the same directory, which must exist.
  cmake_path(GET out PARENT_PATH out_dir)
  set(make_out_dir "")
  if(out_dir MATCHES [[\$<]])
    set(make_out_dir COMMAND "${CMAKE_COMMAND}" -E make_directory "${out_dir}")
  else()
    file(MAKE_DIRECTORY "${out_dir}")
  endif()
  file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles")
  # The configuration being built names the records an image request means (arec compose --config).
  set(config "$<$<BOOL:$<CONFIG>>:--config=$<CONFIG>>")

  # Depfile paths are absolute; NEW makes every generator read them the same way.
  cmake_policy(PUSH)
  cmake_policy(SET CMP0116 NEW)
  add_custom_command(
    OUTPUT "${out}"
    ${make_out_dir}
    COMMAND ${command} ${globals} compose "${template}" -o "${out}" --depfile "${depfile}" ${config} ${strict}
    DEPENDS ${depends} ${ARG_DEPENDS}
    DEPFILE "${depfile}"
    COMMENT "Composing ${shown}"
    VERBATIM COMMAND_EXPAND_LISTS)
  cmake_policy(POP)
  add_custom_target(${target} ALL DEPENDS "${out}")
endfunction()
