// needs-rebuild's scan of a declaration on any text. The first byte picks the options (bit 0: read as
// YAML, bit 1: external references too); the rest is the declaration. A YAML file that does not parse
// is an error naming it; every finding lies in the text, at a line and column it has, and is counted
// once; the scan is linear in the text's size.
#include <algorithm>

#include "addressing/needs_rebuild.hpp"
#include "tests/fuzz/require.hpp"

namespace {

using arec::fuzz::require;

// A registry on n1 (address and name), moved from n2, and a service at another port.
arec::NodeSettings settings() {
  arec::NodeSettings s;
  s.source = "nodes.json";
  s.self = "n1";
  s.nodes["n1"] = {"10.20.0.11", {{"registry", 5000}, {"bus", 5679}}, false};
  s.nodes["n2"] = {"fd00::7", {{"registry", 5001}}, true};
  s.services = {{"registry", "n1"}, {"bus", "n1"}};
  s.registry_name = "registry.mesh";
  return s;
}

std::vector<arec::Record> records() {
  arec::Record r;
  r.module = "mesh";
  r.name = "agent";
  r.manifest.digest = *arec::Digest::parse("sha256:" + std::string(64, 'a'));
  return {r};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto text = arec::fuzz::as_text(data + 1, size - 1);
  static const auto nodes = settings();
  static const auto recorded = records();
  const std::string file = (data[0] & 1) ? "deploy.yaml" : "deploy.txt";
  const auto external = (data[0] & 2) ? arec::RebuildQuery::External::include : arec::RebuildQuery::External::omit;
  arec::RebuildQuery query(nodes, recorded, external);
  const auto scanned = query.scan_text(text, file);
  if (!scanned) {
    require(scanned.error().message.find(file) != std::string::npos, "an error names the declaration");
    return 0;
  }
  const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  const auto findings = query.findings(external);
  for (const auto& f : findings) {
    require(f.file == file && f.line >= 1 && f.line <= lines && f.column >= 1, "a finding is at a place in the text");
    require((!f.reference.empty() && !f.action.empty()) || !arec::breaks(f.kind),
            "a finding that breaks says what to do");
  }
  const auto count = arec::count_breaking(findings);
  require(count.occurrences <= findings.size() && count.references <= count.occurrences, "findings are counted once");
  if (file == "deploy.txt") {
    arec::fuzz::require_linear(
        text,
        [&](std::string_view t) {
          arec::RebuildQuery again(nodes, recorded, external);
          (void)again.scan_text(t, file);
        },
        "needs-rebuild's scan is linear");
  }
  return 0;
}
