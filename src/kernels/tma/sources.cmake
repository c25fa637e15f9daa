# The tma family's files (included by the top-level CMakeLists.txt; docs/adding-a-family.md).
list(APPEND SKINNYGEMM_FAMILY_HOST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/family.cpp ${CMAKE_CURRENT_LIST_DIR}/tma_family.cpp
     ${CMAKE_CURRENT_LIST_DIR}/first_cut.cpp)
list(APPEND SKINNYGEMM_FAMILY_CUDA_SOURCES ${CMAKE_CURRENT_LIST_DIR}/device.cu ${CMAKE_CURRENT_LIST_DIR}/tma_launch.cu
            ${CMAKE_CURRENT_LIST_DIR}/tma_bf16.cu ${CMAKE_CURRENT_LIST_DIR}/tma_fp16.cu)
