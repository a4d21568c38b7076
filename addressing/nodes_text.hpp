// The node settings file as text, edited in place: what a move of the registry changes in it, every
// other byte (its layout, its key order, members arec does not read, numbers as written) kept. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace arec {

// `text` with the registry held by `node` on `port`: the values that change are rewritten where they
// are, a member that is missing is added beside its siblings (on a line of its own with their
// indentation, or inline as they are), and every other byte stays. Nothing when the text, which has
// parsed as JSON already, has no `services` object or no `nodes.<node>` object.
std::optional<std::string> with_registry_moved(std::string_view text, const std::string& node, std::uint16_t port);

}  // namespace arec
