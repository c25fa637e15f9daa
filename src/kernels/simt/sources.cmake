# The simt family's files (included by the top-level CMakeLists.txt; docs/adding-a-family.md).
list(APPEND SKINNYGEMM_FAMILY_HOST_SOURCES ${CMAKE_CURRENT_LIST_DIR}/family.cpp)
list(APPEND SKINNYGEMM_FAMILY_CUDA_SOURCES ${CMAKE_CURRENT_LIST_DIR}/device.cu
            ${CMAKE_CURRENT_LIST_DIR}/simt_bf16.cu ${CMAKE_CURRENT_LIST_DIR}/simt_fp16.cu)
