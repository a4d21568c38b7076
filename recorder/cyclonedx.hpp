// The CycloneDX 1.6 writer of a record's SBOM: the same facts as the SPDX document (recorder/sbom),
// as the ecosystem's scanners and registries exchange them. Kept beside the SPDX one as a referrer of
// the image with artifactType application/vnd.cyclonedx+json.
#pragma once

#include <nlohmann/json.hpp>

#include "recorder/sbom.hpp"

namespace arec {

// The CycloneDX 1.6 JSON document: the image as the BOM's subject (metadata.component, a container),
// the OS, each package (a library, with its purl, supplier and licence; a dependency's files as its
// components), each file of no package with its SHA-1 and SHA-256, and the dependency graph.
// Reproducible: its timestamp is SOURCE_DATE_EPOCH, its serial number made from the image digest,
// components and dependencies in a fixed order.
nlohmann::json cyclonedx_document(const SbomFacts& facts);

}  // namespace arec
