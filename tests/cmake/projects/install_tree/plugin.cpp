extern "C" const char* plugin_greeting() { return "plugin-v1"; }
