#include "addressing/composed.hpp"

#include <gtest/gtest.h>

namespace arec {
namespace {

// The values compose wrote, as the spans give them.
std::vector<std::string> values(std::string_view output, const std::optional<std::vector<FilledSpan>>& spans) {
  std::vector<std::string> out;
  if (!spans) return {"(not composed)"};
  for (const auto& s : *spans) out.emplace_back(output.substr(s.offset, s.length));
  return out;
}

TEST(Composed, TextBetweenRequestsIsKept) {
  const std::string templ =
      "image: arec://image/mesh/app\nurl: http://arec://endpoint/web/path\nport: arec://port/db\n";
  const std::string out = "image: 10.0.0.1:5000/mesh/app@sha256:ab\nurl: http://10.0.0.2:80/path\nport: \n";
  EXPECT_EQ(values(out, filled_spans(templ, out, TemplateFormat::text)),
            (std::vector<std::string>{"10.0.0.1:5000/mesh/app@sha256:ab", "10.0.0.2:80", ""}));
  // Edited: a line added, a literal changed, a value across lines.
  EXPECT_FALSE(filled_spans(templ, out + "extra: 1\n", TemplateFormat::text));
  EXPECT_FALSE(filled_spans(templ, "image: x\nurl: https://y/path\nport: \n", TemplateFormat::text));
  EXPECT_FALSE(filled_spans(templ, "image: x\ny\nurl: http://y/path\nport: \n", TemplateFormat::text));
  // No request: the same text only.
  EXPECT_EQ(values("a\n", filled_spans("a\n", "a\n", TemplateFormat::text)), std::vector<std::string>{});
  EXPECT_FALSE(filled_spans("a\n", "b\n", TemplateFormat::text));
}

TEST(Composed, AValueOfTwoRequestsApart) {
  const std::string templ = "a: arec://address/db:arec://port/db\n";
  const std::string out = "a: 10.0.0.1:5432\n";
  EXPECT_EQ(values(out, filled_spans(templ, out, TemplateFormat::text)),
            (std::vector<std::string>{"10.0.0.1", "5432"}));
}

TEST(Composed, JsonAsComposeWritesIt) {
  const std::string templ = R"({"image": "arec://image/mesh/app", "port": "arec://port/db", "n": [1, 2]})";
  const std::string out =
      "{\n  \"image\": \"10.0.0.1:5000/mesh/app@sha256:ab\",\n  \"port\": 5432,\n  \"n\": [\n    1,\n    2\n  ]\n}\n";
  // A string holding a request keeps its quotes; one that was exactly a port request is a number.
  EXPECT_EQ(values(out, filled_spans(templ, out, TemplateFormat::json)),
            (std::vector<std::string>{"10.0.0.1:5000/mesh/app@sha256:ab", "5432"}));
  // A port not given is "" (quotes and all, where the request was the whole string).
  const std::string empty = "{\n  \"image\": \"x\",\n  \"port\": \"\",\n  \"n\": [\n    1,\n    2\n  ]\n}\n";
  EXPECT_EQ(values(empty, filled_spans(templ, empty, TemplateFormat::json)), (std::vector<std::string>{"x", "\"\""}));
  // Another member, or the template not JSON: not composed from it.
  EXPECT_FALSE(filled_spans(templ, "{\n  \"image\": \"x\",\n  \"port\": 1\n}\n", TemplateFormat::json));
  EXPECT_FALSE(filled_spans("{", out, TemplateFormat::json));
}

TEST(Composed, ComposeDepfile) {
  auto rule = read_compose_depfile("/b/deploy\\ x.yaml: /s/deploy.yaml.in /s/nodes.json /st/index.json\n");
  ASSERT_TRUE(rule);
  EXPECT_EQ(rule->output, "/b/deploy x.yaml");
  EXPECT_EQ(rule->template_path, "/s/deploy.yaml.in");
  EXPECT_EQ(read_compose_depfile("/b/a$$b: /s/t\n")->output, "/b/a$b");
  // Not compose's: relative paths, no prerequisite, a second rule, anything else.
  EXPECT_FALSE(read_compose_depfile("a.o: a.c\n"));
  EXPECT_FALSE(read_compose_depfile("/b/out:\n"));
  EXPECT_FALSE(read_compose_depfile("/b/out: /s/t\n/b/other: /s/u\n"));
  EXPECT_FALSE(read_compose_depfile("hello world\n"));
}

}  // namespace
}  // namespace arec
