#pragma once
const char* tinyidx_version();
