// The request scanner and compose on any template. The first byte picks the options (bit 0: JSON, bit 1:
// strict, bit 2: the store cannot be read); the rest is the template. The scanner's requests lie in the
// text in order, each read the same on its own; a compose that succeeds has filled every request.
#include <algorithm>

#include "addressing/compose.hpp"
#include "tests/fuzz/require.hpp"

namespace {

using arec::fuzz::require;
using Kind = arec::Request::Kind;

bool fillable(Kind kind) { return kind != Kind::unknown && kind != Kind::malformed; }

bool within(std::string_view part, std::string_view text) {
  return part.empty() || (part.data() >= text.data() && part.data() + part.size() <= text.data() + text.size());
}

// Every node and service shape compose meets: addresses of each family, a holder without an address
// (self and not self), a service with no port.
arec::NodeSettings settings() {
  arec::NodeSettings s;
  s.source = "nodes.json";
  s.self = "n1";
  s.nodes["n1"] = {"10.20.0.11", {{"registry", 5000}, {"bus", 5679}}, false};
  s.nodes["n2"] = {"fd00::7", {{"web", 8080}}, true};
  s.nodes["n3"] = {"", {{"cache", 6379}}, false};
  s.nodes["n4"] = {"db.internal", {}, false};
  s.services = {{"registry", "n1"}, {"bus", "n1"}, {"web", "n2"}, {"cache", "n3"}, {"metrics", "n4"}};
  return s;
}

arec::Record record(std::string module, std::string name, char hex) {
  arec::Record r;
  r.module = std::move(module);
  r.name = std::move(name);
  r.manifest.digest = *arec::Digest::parse("sha256:" + std::string(64, hex));
  return r;
}

void check_scan(std::string_view text) {
  const auto requests = arec::scan_requests(text);
  std::size_t previous_end = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const auto& r = requests[i];
    require(r.offset + r.length <= text.size(), "a request lies in the text");
    require(text.substr(r.offset).starts_with(arec::k_request_scheme), "a request starts with arec://");
    require(i == 0 || r.offset > requests[i - 1].offset, "requests come in order");
    require(r.offset >= previous_end, "a filled request does not overlap the next");
    require(r.line == 1 + static_cast<std::size_t>(
                              std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(r.offset), '\n')),
            "a request's line counts the newlines before it");
    for (auto part : {r.service, r.module, r.name, r.tag, r.digest, r.config, r.written})
      require(within(part, text), "parts are views of the text");
    if (r.kind == Kind::malformed) require(!r.problem.empty(), "a malformed request says what is wrong");
    if (!fillable(r.kind)) continue;
    previous_end = r.offset + r.length;
    // A request ends where its grammar ends: read on its own, it is the same request.
    const auto alone = arec::scan_requests(r.text(text));
    require(alone.size() == 1 && alone[0].kind == r.kind && alone[0].length == r.length &&
                alone[0].service == r.service && alone[0].module == r.module && alone[0].name == r.name &&
                alone[0].tag == r.tag && alone[0].digest == r.digest && alone[0].config == r.config,
            "a request reads the same on its own");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = arec::fuzz::as_text(data + 1, size - 1);
  check_scan(text);
  arec::fuzz::require_linear(
      text, [](std::string_view t) { (void)arec::scan_requests(t); }, "the request scanner is linear");

  static const auto nodes = settings();
  const bool store_fails = (data[0] & 4) != 0;
  const arec::RecordReader read_records = [&]() -> arec::Result<std::vector<arec::Record>> {
    if (store_fails) return arec::fail_input("index.json: malformed JSON at byte 1");
    // mesh/controlplane of two configurations: a request without ?config= means the default's, Release.
    auto debug = record("mesh", "controlplane", 'a');
    debug.config = "Debug";
    auto release = record("mesh", "controlplane", 'c');
    release.config = "Release";
    return std::vector{debug, record("mesh", "agent", 'b'), release};
  };
  arec::ComposeOptions options{
      "deploy.yaml.in", "store", (data[0] & 1) ? arec::TemplateFormat::json : arec::TemplateFormat::text,
      (data[0] & 2) ? arec::Strictness::strict : arec::Strictness::lenient, arec::ConfigChoice{}};
  const auto composed = arec::compose(text, options, nodes, read_records);
  if (!composed) {
    require(composed.error().message.find(options.source) != std::string::npos, "an error names the template");
    return 0;
  }
  // A fill that would join the text around it into a new request fails the compose.
  for (const auto& r : arec::scan_requests(composed->text)) {
    require(!fillable(r.kind) && r.kind != Kind::malformed, "a compose that succeeds fills every request");
    require(options.strictness == arec::Strictness::lenient, "a strict compose leaves no request");
  }
  if (options.format == arec::TemplateFormat::json) return 0;
  const auto requests = arec::scan_requests(text);
  const auto filled = std::count_if(requests.begin(), requests.end(), [](const auto& r) { return fillable(r.kind); });
  require(composed->requests == static_cast<std::size_t>(filled), "every request is counted as filled");
  const bool images =
      std::any_of(requests.begin(), requests.end(), [](const auto& r) { return r.kind == Kind::image; });
  require(composed->reads_records == images, "the store is read exactly when an image is asked for");
  const auto before = requests.empty() ? text : text.substr(0, requests.front().offset);
  require(composed->text.starts_with(before), "text before the first request is kept byte for byte");
  if (requests.empty()) require(composed->text == text, "a text without requests is kept byte for byte");
  return 0;
}
