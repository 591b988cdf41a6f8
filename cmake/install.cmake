# Install rules of mla_var3 (included from the top CMakeLists.txt): the header, both libraries,
# the CLI, devices.json, a pkg-config file and a CMake package (mla_var3::mla_var3 = shared,
# mla_var3::mla_var3_static). The shared library links the CUDA runtime (static) and cJSON
# privately, so a user of the .so needs only -lmla_var3.
include(CMakePackageConfigHelpers)

set(MLA_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/mla_var3")
set(MLA_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/mla_var3")

# The .so already contains cudart_static and needs cJSON only as its own DT_NEEDED: nothing of
# its link line belongs to its users (a second static CUDA runtime in the user's program would
# be a second runtime state). The top file links them PUBLIC for the in-tree targets' sake;
# the installed/exported interface of the shared library is therefore emptied here.
set_property(TARGET mla_var3_shared PROPERTY INTERFACE_LINK_LIBRARIES "")
set_target_properties(mla_var3_shared PROPERTIES EXPORT_NAME mla_var3)
set_target_properties(mla_var3_static PROPERTIES EXPORT_NAME mla_var3_static)
# The archive holds nvcc-compiled (C++) objects: a C program linking it needs libstdc++ too.
set_property(TARGET mla_var3_static APPEND PROPERTY INTERFACE_LINK_LIBRARIES
             "$<INSTALL_INTERFACE:stdc++>" "$<INSTALL_INTERFACE:rt>")

# A cJSON outside the system dirs (a carried dpkg -x copy) must stay findable by the installed
# .so: its directory goes into the .so's RUNPATH (also used by ld to resolve DT_NEEDED).
set(MLA_PC_EXTRA_LDIRS "")
foreach(lib ${CJSON_LIBRARIES})
  if(IS_ABSOLUTE "${lib}")
    get_filename_component(_dir "${lib}" DIRECTORY)
    if(NOT _dir MATCHES "^/(usr/)?lib(64|32)?(/|$)")
      set_property(TARGET mla_var3_shared APPEND PROPERTY INSTALL_RPATH "${_dir}")
      string(APPEND MLA_PC_EXTRA_LDIRS " -L${_dir}")
    endif()
  endif()
endforeach()

install(FILES "${PROJECT_SOURCE_DIR}/include/mla_var3.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(TARGETS mla_var3_static mla_var3_shared EXPORT mla_var3Targets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(TARGETS mla_var3 RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
if(EXISTS "${MLA_DEVICES_JSON}")
  install(FILES "${MLA_DEVICES_JSON}" DESTINATION "${MLA_INSTALL_DATADIR}")
endif()

# CMake package: exported targets + config + version.
install(EXPORT mla_var3Targets NAMESPACE mla_var3:: DESTINATION "${MLA_INSTALL_CMAKEDIR}"
        FILE mla_var3Targets.cmake)
configure_package_config_file(
    "${CMAKE_CURRENT_LIST_DIR}/mla_var3Config.cmake.in"
    "${PROJECT_BINARY_DIR}/mla_var3Config.cmake"
    INSTALL_DESTINATION "${MLA_INSTALL_CMAKEDIR}"
    PATH_VARS CMAKE_INSTALL_INCLUDEDIR MLA_INSTALL_DATADIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/mla_var3ConfigVersion.cmake"
    VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/mla_var3Config.cmake"
              "${PROJECT_BINARY_DIR}/mla_var3ConfigVersion.cmake"
        DESTINATION "${MLA_INSTALL_CMAKEDIR}")

# pkg-config: the prefix is relative to the .pc file, so `cmake --install --prefix X` works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(MLA_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _rel "/mla_root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/mla_root")
  string(REGEX REPLACE "/$" "" _rel "${_rel}")
  set(MLA_PC_PREFIX "\${pcfiledir}/${_rel}")
endif()
# -L of the directory that really holds libcudart_static.a (CUDAToolkit_LIBRARY_DIR may be lib/
# where the archive lives in lib64/).
set(MLA_CUDART_DIR "${CUDAToolkit_LIBRARY_DIR}")
if(TARGET CUDA::cudart_static)
  get_target_property(_cudart CUDA::cudart_static IMPORTED_LOCATION)
  if(_cudart)
    get_filename_component(MLA_CUDART_DIR "${_cudart}" DIRECTORY)
  endif()
endif()
set(MLA_PC_LIBS_PRIVATE
    "-L${MLA_CUDART_DIR}${MLA_PC_EXTRA_LDIRS} -lcudart_static -lcjson -lstdc++ -lpthread -ldl -lrt -lm")
configure_file("${CMAKE_CURRENT_LIST_DIR}/mla_var3.pc.in" "${PROJECT_BINARY_DIR}/mla_var3.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/mla_var3.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
