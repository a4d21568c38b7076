#include "addressing/base_spec.hpp"

namespace arec {

std::string BaseSpec::what() const { return "base \"" + text + "\""; }

Result<BaseSpec> parse_base(std::string_view spec) {
  BaseSpec base{std::string(spec), LayoutBase{}};
  const std::string what = base.what();
  if (spec.starts_with("oci:")) {
    const auto rest = spec.substr(4);
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const std::string ref = colon == std::string_view::npos ? std::string() : std::string(rest.substr(colon + 1));
    if (dir.empty()) return fail_input(what + ": the layout directory is empty");
    base.kind = LayoutBase{dir, ref};
    return base;
  }
  const std::string expected = what +
                               ": expected oci:DIR[:REF], MODULE/NAME of a record, or a "
                               "registry reference [HOST[:PORT]/]REPOSITORY[:TAG][@DIGEST]";
  static constexpr std::string_view k_transports[] = {
      "docker-archive:", "oci-archive:", "docker-daemon:", "containers-storage:", "dir:", "tarball:",
      "ostree:",         "sif:"};
  for (const auto transport : k_transports) {
    if (spec.starts_with(transport)) return fail_input(expected);
  }
  if (spec.starts_with("docker://")) spec.remove_prefix(9);
  auto reference = Reference::parse(spec);
  if (!reference) return fail(std::move(reference.error()).context(expected));
  // MODULE/NAME with no domain, tag or digest is a record of this store.
  if (reference->domain.empty() && reference->tag.empty() && reference->digest.empty() && reference->segments() == 2) {
    const auto slash = reference->path.find('/');
    base.kind = RecordBase{reference->path.substr(0, slash), reference->path.substr(slash + 1)};
    return base;
  }
  RegistryBase registry{std::move(*reference), std::nullopt};
  if (!registry.reference.digest.empty()) {
    auto digest = Digest::parse(registry.reference.digest);
    if (!digest) return fail(std::move(digest.error()).context(what));
    registry.digest = std::move(*digest);
  }
  base.kind = std::move(registry);
  return base;
}

}  // namespace arec
