const char* greeting() { return "hello from a recorded library"; }
