// Every kernel family, one line each, in Family order: the enumerators of include/skinnygemm/config.h name the
// first four, a family added later is reached by name (find_family). Each line names a descriptor <name>_family
// defined in the family's own folder (docs/adding-a-family.md).
#include "kernels/family.h"

#include <iterator>

#include "skinnygemm/error.h"

#define SKINNYGEMM_FAMILIES(FAMILY) \
  FAMILY(bulk)     /* src/kernels/bulk */           \
  FAMILY(tma)      /* src/kernels/tma */            \
  FAMILY(cublaslt) /* src/backends/cuda/cublaslt */ \
  FAMILY(cpu)      /* src/backends/cpu */

namespace skinnygemm {

#define SKINNYGEMM_DECLARE_FAMILY(name) extern const FamilyDescriptor name##_family;
SKINNYGEMM_FAMILIES(SKINNYGEMM_DECLARE_FAMILY)
#undef SKINNYGEMM_DECLARE_FAMILY

const std::vector<const FamilyDescriptor*>& families() {
#define SKINNYGEMM_FAMILY_POINTER(name) &name##_family,
  static const std::vector<const FamilyDescriptor*> list{SKINNYGEMM_FAMILIES(SKINNYGEMM_FAMILY_POINTER)};
#undef SKINNYGEMM_FAMILY_POINTER
  return list;
}

const FamilyDescriptor& family(Family id) {
  const auto& list = families();
  const auto i = static_cast<std::size_t>(id);
  SKINNYGEMM_CHECK(i < list.size(), "family #" << i << " is not registered (" << list.size() << " families)");
  return *list[i];
}

const FamilyDescriptor* find_family(const std::string& name, Family* id) {
  const auto& list = families();
  for (std::size_t i = 0; i < list.size(); ++i)
    if (name == list[i]->name) {
      if (id) *id = static_cast<Family>(i);
      return list[i];
    }
  return nullptr;
}

}  // namespace skinnygemm
