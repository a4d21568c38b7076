#include "gwcore.h"
const char* gwcore_name() { return "gwcore-v1"; }
