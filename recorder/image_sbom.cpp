// The SBOMs of a record: the facts gathered once, written in each format asked for, put as referrers.
#include <algorithm>

#include "recorder/cyclonedx.hpp"
#include "recorder/dependencies.hpp"
#include "recorder/image_internal.hpp"
#include "recorder/signing.hpp"

namespace arec {

// Each format asked for that the store has no document of for that image yet (an unchanged relink costs
// no second read of its files): the files' packages and checksums taken once, every document from the
// same facts.
Result<SbomsMade> sbom_referrers(const RecordRequest& request, SbomHashes& hashes, Store& store,
                                 const Descriptor& image, const SbomScope& scope,
                                 const std::function<const std::string&()>& revision) {
  SbomsMade out;
  if (request.sboms.empty()) return out;
  auto listed = store.referrers(image.digest);
  if (!listed) return fail(listed.error());
  std::vector<SbomFormat> wanted;
  for (const auto format : request.sboms) {
    // One cut short by a power loss does not count: it is made again like any other blob.
    const bool held = std::ranges::any_of(*listed, [&](const Descriptor& d) {
      return d.artifact_type == sbom_media_type(format) && store.holds_image(d);
    });
    if (!held) wanted.push_back(format);
  }
  if (wanted.empty()) return out;
  SbomFacts facts;
  auto files = hashes.take();
  if (!files) return fail(files.error());
  facts.files = std::move(*files);
  auto packages = debian_sbom_packages(facts.files, DpkgDatabase(request.dpkg_admin_dir), scope.purls);
  if (!packages) return fail(std::move(packages.error()).context("making the SBOM"));
  facts.packages = std::move(*packages);
  // The build's dependencies are packages beside Debian's, each holding its files.
  auto dependencies = dependency_sbom_packages(request.dependencies, scope.dependency_of, facts.files);
  facts.packages.insert(facts.packages.end(), std::make_move_iterator(dependencies.begin()),
                        std::make_move_iterator(dependencies.end()));
  std::sort(facts.packages.begin(), facts.packages.end(),
            [](const SbomPackage& a, const SbomPackage& b) { return a.key < b.key; });
  facts.depends_on = dependency_graph(scope.needs, hashes.entries(), facts.files, scope.os.has_value());
  facts.os = scope.os;
  facts.module = request.module;
  facts.name = request.name;
  facts.revision = revision();
  facts.image = image.digest;
  facts.created = request.mtime;
  for (const auto format : wanted) {
    auto text = canonical_json(format == SbomFormat::cyclonedx ? cyclonedx_document(facts) : spdx_document(facts));
    if (!text) return fail(std::move(text.error()).context("writing the SBOM"));
    auto referrer = put_referrer(store, image, sbom_media_type(format), *text,
                                 {{std::string(annotation::k_created), rfc3339(request.mtime)}});
    if (!referrer) return fail(referrer.error());
    out.referrers.push_back(std::move(*referrer));
    out.subjects.push_back({sbom_subject_name(request.module + "/" + request.name, format), digest_of(*text)});
  }
  return out;
}

}  // namespace arec
