// One value out of a JSON document by JSON Pointer (RFC 6901), for a scenario step's capture.
// It walks the text without building a tree: only the value asked for is copied out.
#pragma once

#include <string>
#include <string_view>

namespace punctual::http {

// The value at `pointer` ("" is the whole document, "/a/0/b" a path; "~1" is '/', "~0" '~'),
// written to `out`: a string's decoded text, or a number's, true's, false's, null's, an
// object's or an array's own JSON text. False when the document is not JSON, the path does not
// exist, or nesting is deeper than 64. The pointer is taken as written (the caller checks it).
bool json_pointer_value(std::string_view json, std::string_view pointer, std::string& out);

// Whether `pointer` is "" or a sequence of "/segment" with only ~0 and ~1 escapes.
bool valid_json_pointer(std::string_view pointer) noexcept;

}  // namespace punctual::http
