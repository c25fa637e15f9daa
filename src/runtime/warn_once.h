// Warnings that a long run would otherwise print per call: the first message of each key goes to stderr, later
// ones are dropped (selection's skipped tables and table entries, plans that fall back from a table entry); and the
// switch of the choices' log.
#pragma once

#include <string>

namespace skinnygemm {

// Prints "skinnygemm: warning: <message>" the first time this key is seen in the process. Thread-safe.
void warn_once(const std::string& key, const std::string& message);

// Whether SKINNYGEMM_LOG is set to something other than "" or "0": selection and fused projections then print each
// new choice once.
bool logging_enabled();

}  // namespace skinnygemm
