// Warnings that a long run would otherwise print per call: the first message of each key goes to stderr, later
// ones are dropped (selection's skipped tables and table entries, plans that fall back from a table entry).
#pragma once

#include <string>

namespace skinnygemm {

// Prints "skinnygemm: warning: <message>" the first time this key is seen in the process. Thread-safe.
void warn_once(const std::string& key, const std::string& message);

}  // namespace skinnygemm
