// What push.cpp and push_tags.cpp (the tag decision) share. Private to registry-client/.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "registry-client/push.hpp"
#include "registry-client/transfer_internal.hpp"

namespace arec {

// An image a push puts: its manifest's exact bytes, its blobs and its tags.
struct RecordPlan {
  Record record;
  std::string bytes;       // the manifest, exactly as stored
  std::string media_type;  // its Content-Type
  std::vector<Descriptor> blobs;
  bool present = false;
  std::vector<std::string> tags;
};

// A tag a push moves once its image and the image's referrers are at the registry, so that whoever
// reads the tag finds the records that say how new it is.
struct TagMove {
  const RecordPlan* plan;
  std::string tag;
  std::size_t image;  // into PushSummary::images
};

// How many times a push looks at a tag or referrers tag another push may be moving at once.
inline constexpr int k_tag_attempts = 5;

// Puts the tags of `moves`: `latest` and `latest-<config>` where no newer record holds them (by the
// times the registry's records say, under trust the times a trusted key signed), the others (--tag) as
// asked. A tag that names the digest already costs no write.
Status move_tags(Run& run, const std::vector<TagMove>& moves, PushSummary& summary);

}  // namespace arec
