// Tests of vkConvertCooperativeVectorMatrixNV / vkCmdConvertCooperativeVectorMatrixNV (being written).
#include <catch2/catch_test_macros.hpp>
