#ifndef CORE_VERSION
#define CORE_VERSION "core-v1"
#endif
const char* core_version() { return CORE_VERSION; }
