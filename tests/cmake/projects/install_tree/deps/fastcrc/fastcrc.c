unsigned fastcrc(const char* text) {
  unsigned sum = 0;
  while (*text) sum = sum * 31u + (unsigned char)*text++;
  return sum;
}
