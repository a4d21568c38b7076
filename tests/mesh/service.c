/* A service of the mesh test: says which it is and its version, and exits. The test changes the
 * VERSION line for a one-line rebuild. */
#include <stdio.h>

#define VERSION "1"

int main(void) {
  printf("%s %s: ready\n", ROLE, VERSION);
  return 0;
}
