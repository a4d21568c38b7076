#include "tinyidx.h"
const char* tinyidx_version() { return "1.2.3"; }
