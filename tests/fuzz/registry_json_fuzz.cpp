// What a registry or its token service answers, on any bytes: an error body, a token answer, a page of
// tags or of the catalog. Each reader returns (never throws), and what it returns holds: an error keeps
// its status and says what it was told in one line, a token is not empty and is renewed before it
// expires, a list holds only the names the page gave.
#include <algorithm>
#include <chrono>

#include "registry-client/auth.hpp"
#include "registry-client/registry.hpp"
#include "registry-client/registry_error.hpp"
#include "tests/fuzz/require.hpp"

using arec::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = arec::fuzz::as_text(data, size);

  arec::http::Response response;
  response.status = 400;
  response.body = std::string(text);
  const auto error = arec::RegistryError::from_response(response);
  require(error.status == 400, "an error keeps the status it came with");
  require(error.str().find('\n') == std::string::npos, "an error is one line");

  const auto now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  if (const auto token = arec::parse_token_response(text, now)) {
    require(!token->value.empty(), "a token read is not empty");
    require(token->expires > now && token->renew < token->expires && token->renew >= now,
            "a token is renewed in its life");
  }

  for (const char* key : {"tags", "repositories"}) {
    if (const auto names = arec::names_from_list_page(text, key)) {
      require(names->size() * 2 <= static_cast<std::size_t>(std::count(text.begin(), text.end(), '"')),
              "names come from strings in the page");
    }
  }
  return 0;
}
