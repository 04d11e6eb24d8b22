// Warnings collected while one model is loaded, issued once per kind: a file with 40 links whose
// mesh is missing, or 12 <equality> constraints, gives one warning, not 40 or 12. The warning
// names the first occurrence in full (file:line: <element>: what why), then how many there are
// and where the others are.
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include "gradyn/model/errors.hpp"

namespace gradyn::detail {

class GroupedWarnings {
 public:
  /// One occurrence. kind: what groups occurrences (never shown); what: this occurrence, e.g.
  /// "<equality><connect>"; why: the sentence shared by the kind, e.g. "is not simulated by gradyn".
  void add(const std::string& kind, const SourceLocation& where, const std::string& what, const std::string& why) {
    for (Group& g : groups_)
      if (g.kind == kind) {
        g.items.push_back({where, what});
        return;
      }
    groups_.push_back({kind, why, {{where, what}}});
  }

  bool empty() const { return groups_.empty(); }

  std::vector<std::string> messages() const {
    constexpr size_t kListed = 10;  // the others listed by location; past that, a count
    std::vector<std::string> out;
    for (const Group& g : groups_) {
      const Item& first = g.items.front();
      std::string s = first.where.str() + first.what + " " + g.why;
      if (g.items.size() > 1) {
        s += " (" + std::to_string(g.items.size()) + " in all; the others: ";
        for (size_t k = 1; k < g.items.size() && k <= kListed; ++k) {
          const Item& it = g.items[k];
          if (k > 1) s += ", ";
          s += it.what + " at ";
          if (it.where.file != first.where.file && !it.where.file.empty()) s += it.where.file + ":";
          else s += "line ";
          s += std::to_string(it.where.line);
          if (!it.where.element.empty()) s += " " + it.where.element;
        }
        if (g.items.size() > kListed + 1) s += ", and " + std::to_string(g.items.size() - kListed - 1) + " more";
        s += ")";
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  /// Appends the messages to `sink`, or prints them to std::cerr when it is null; then forgets them.
  void emit(std::vector<std::string>* sink) {
    for (std::string& m : messages()) {
      if (sink) sink->push_back(std::move(m));
      else std::cerr << "gradyn: warning: " << m << '\n';
    }
    groups_.clear();
  }

 private:
  struct Item {
    SourceLocation where;
    std::string what;
  };
  struct Group {
    std::string kind, why;
    std::vector<Item> items;
  };
  std::vector<Group> groups_;  // in the order of their first occurrence
};

}  // namespace gradyn::detail
