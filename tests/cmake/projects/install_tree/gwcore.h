#pragma once
const char* gwcore_name();
