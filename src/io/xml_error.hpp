// Private to src/io: a tinyxml2 parse failure in the user's words, for both loaders' errors.
#pragma once

#include <tinyxml2.h>

#include <string>

namespace gradyn::io_detail {

/// What went wrong reading the XML of a model file: an empty file and nesting beyond the reader's
/// depth limit are said so; anything else is "malformed XML: " and the reader's own description.
inline std::string xml_error_message(const tinyxml2::XMLDocument& doc) {
  switch (doc.ErrorID()) {
    case tinyxml2::XML_ERROR_EMPTY_DOCUMENT: return "the file is empty (no XML element in it)";
    case tinyxml2::XML_ELEMENT_DEPTH_EXCEEDED:
      return "elements nested deeper than the XML reader allows (" + std::to_string(TINYXML2_MAX_ELEMENT_DEPTH) +
             " levels): flatten the file's nesting";
    default: return std::string("malformed XML: ") + (doc.ErrorStr() ? doc.ErrorStr() : "parse error");
  }
}

}  // namespace gradyn::io_detail
