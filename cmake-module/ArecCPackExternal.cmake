#[=======================================================================[.rst:
ArecCPackExternal
-----------------

The CPack External script of arec: ``cpack -G External`` with this script records each install component
CPack staged that an ``arec_record(<target> COMPONENT <component>)`` of the project names, with that
``arec_record``'s own options, so the image has the digest the build's recording step gives::

  set(CPACK_GENERATOR External)
  set(CPACK_EXTERNAL_ENABLE_STAGING ON)
  set(CPACK_EXTERNAL_PACKAGE_SCRIPT "${AREC_CPACK_EXTERNAL_SCRIPT}")
  set(CPACK_COMPONENTS_ALL runtime)
  set(CPACK_SET_DESTDIR ON)                         # absolute destinations stay inside the staging
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr/local)    # the PREFIX of arec_record (default /usr/local)
  include(CPack)

then, after a build, ``cpack -G External`` (``-C <config>`` with a multi-configuration generator). The
staged tree of each component, ``<CPACK_TEMPORARY_DIRECTORY>/<component><CPACK_PACKAGING_INSTALL_PREFIX>``,
is recorded at the component's ``PREFIX``; the record goes into the store the build records into. A
component no ``arec_record`` names is left alone, saying so.
#]=======================================================================]

if(NOT CPACK_EXTERNAL_ENABLE_STAGING)
  message(FATAL_ERROR "arec: set CPACK_EXTERNAL_ENABLE_STAGING ON, so CPack stages the components arec records")
endif()
if(NOT CPACK_COMPONENTS_ALL)
  message(FATAL_ERROR "arec: CPACK_COMPONENTS_ALL names no component; arec records install components, each "
                      "staged apart (set CPACK_COMPONENTS_ALL to the components arec_record(... COMPONENT) names)")
endif()
list(GET CPACK_INSTALL_CMAKE_PROJECTS 0 _arec_build_dir)
set(_arec_commands "${_arec_build_dir}/CMakeFiles/arec/cpack")

foreach(_arec_component IN LISTS CPACK_COMPONENTS_ALL)
  # The command of the configuration CPack installed: -C <config>, else the only one there is.
  if(CPACK_BUILD_CONFIG)
    set(_arec_found "${_arec_commands}/${_arec_component}.${CPACK_BUILD_CONFIG}.cmake")
    if(NOT EXISTS "${_arec_found}")
      set(_arec_found "")
    endif()
  else()
    file(GLOB _arec_found "${_arec_commands}/${_arec_component}.cmake" "${_arec_commands}/${_arec_component}.*.cmake")
  endif()
  list(LENGTH _arec_found _arec_count)
  if(_arec_count EQUAL 0)
    message(STATUS "arec: no arec_record(... COMPONENT ${_arec_component}) in ${_arec_build_dir}: "
                   "${_arec_component} not recorded")
    continue()
  elseif(_arec_count GREATER 1)
    message(FATAL_ERROR "arec: ${_arec_component} is recorded in several configurations; run cpack -C <config>")
  endif()
  include("${_arec_found}")
  set(_arec_staged "${CPACK_TEMPORARY_DIRECTORY}/${_arec_component}${CPACK_PACKAGING_INSTALL_PREFIX}")
  cmake_path(NORMAL_PATH _arec_staged)
  list(REMOVE_ITEM AREC_COMMAND "")
  execute_process(COMMAND ${AREC_COMMAND} "--staged=${_arec_staged}"
                  RESULT_VARIABLE _arec_result OUTPUT_VARIABLE _arec_out ERROR_VARIABLE _arec_err
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT _arec_result EQUAL 0)
    message(FATAL_ERROR "arec: recording the component ${_arec_component} failed: ${_arec_err}")
  endif()
  if(NOT _arec_err STREQUAL "")
    message(STATUS "${_arec_err}")
  endif()
  message(STATUS "arec: ${_arec_component}: ${_arec_out}")
endforeach()
