// `arec ref`: how arec reads an image reference.
#include <iostream>
#include <memory>

#include "addressing/reference.hpp"
#include "cli/cli.hpp"

namespace arec::cli {

void add_ref(CLI::App& app, Globals&, Action& action) {
  auto text = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("ref", "Parse an image reference per the distribution grammar");
  cmd->add_option("reference", *text, "The reference, e.g. 10.0.0.5:5000/mesh/builder:1.2@sha256:...")->required();
  cmd->add_flag("--json", *json, "Print domain, path, tag, digest and the number of path segments");
  describe(*cmd,
           "A port is never taken as a tag, and no registry is invented: without a domain, the domain is empty.\n"
           "The first component is a domain only with a '.' or ':', or as localhost (so Mesh/cp is refused, as docker\n"
           "refuses it); a name, domain included, is at most 255 characters.",
           {{"arec ref 10.0.0.5:5000/mesh/builder:1.2", "Prints the reference in its canonical form."},
            {"arec ref --json registry.example/mesh/app:1.2", "Its domain, path, tag, digest and number of segments."}},
           k_exit_local);
  cmd->callback([&action, text, json] {
    action = [text, json]() -> Result<int> {
      auto ref = Reference::parse(*text);
      if (!ref) return fail(ref.error());
      if (*json) {
        nlohmann::ordered_json out = {{"domain", ref->domain},
                                      {"path", ref->path},
                                      {"tag", ref->tag},
                                      {"digest", ref->digest},
                                      {"segments", ref->segments()}};
        std::cout << out.dump() << '\n';
      } else {
        std::cout << ref->str() << '\n';
      }
      return 0;
    };
  });
}

}  // namespace arec::cli
