#include "port-reader/port_reader.hpp"

#include <algorithm>
#include <charconv>

namespace arec {

namespace {

constexpr std::string_view k_request_prefix = "arec://";
constexpr std::string_view k_blanks = " \t\r\n";

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(k_blanks);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(k_blanks) - first + 1);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::optional<std::uint16_t> parse_port(std::string_view text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), is_digit)) return std::nullopt;
  unsigned number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end != text.data() + text.size() || number < 1 || number > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(number);
}

}  // namespace

Result<PortReading> read_port(std::string_view value, std::optional<std::uint16_t> sealed) {
  const auto text = trim(value);
  PortReading reading;
  if (text.empty()) {
    reading.said = PortReading::Said::empty;
    reading.port = sealed;
    return reading;
  }
  if (text.starts_with(k_request_prefix)) {
    reading.said = PortReading::Said::unfilled_request;
    reading.port = sealed;
    reading.request = std::string(text);
    return reading;
  }
  const auto port = parse_port(text);
  if (!port) {
    return fail_input("\"" + std::string(value) +
                      "\" is not a port (an integer 1-65535, empty, or an unfilled arec:// request)");
  }
  reading.said = PortReading::Said::port;
  reading.port = port;
  return reading;
}

}  // namespace arec
