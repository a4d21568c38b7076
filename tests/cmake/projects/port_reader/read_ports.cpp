// read_ports VALUE SEALED: prints the port VALUE says, else the sealed one; warns, as the port reader
// leaves to its caller, when VALUE is an unfilled request; exits 2 when VALUE is not a port.
#include <cstdio>
#include <string>

#include "port-reader/port_reader.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: read_ports VALUE SEALED\n");
    return 2;
  }
  const auto reading = arec::read_port(argv[1], static_cast<std::uint16_t>(std::stoi(argv[2])));
  if (!reading) {
    std::fprintf(stderr, "error: %s\n", reading.error().message.c_str());
    return 2;
  }
  if (reading->said == arec::PortReading::Said::unfilled_request) {
    std::fprintf(stderr, "warning: unfilled request %s\n", reading->request.c_str());
  }
  std::printf("%u\n", static_cast<unsigned>(*reading->port));
  return 0;
}
