//===- Schemas.cpp - ONNX's schema registry with cuvil's overlay ----------===//
#include "frontend/onnx/Schemas.h"

#include <onnx/defs/schema.h>

#include <map>
#include <utility>

namespace cuvil {
namespace {

/// Looks an operator up in cuvil's schemas and in ONNX's, and returns the
/// one with the highest since-version at or below the requested opset.
class OverlayRegistry final : public onnx::ISchemaRegistry {
public:
  void add(onnx::OpSchema &&S) {
    S.Finalize();
    auto &Versions = Own[{S.Name(), S.domain()}];
    int Since = S.SinceVersion();
    Versions.emplace(Since, std::move(S));
  }

  const onnx::OpSchema *GetSchema(const std::string &Op, const int Version,
                                  const std::string &Domain) const override {
    std::string D = Domain == "ai.onnx" ? "" : Domain;
    const onnx::OpSchema *Base =
        onnx::OpSchemaRegistry::Instance()->GetSchema(Op, Version, D);
    auto It = Own.find({Op, D});
    if (It == Own.end())
      return Base;
    auto V = It->second.upper_bound(Version);
    if (V == It->second.begin())
      return Base;
    --V;
    // cuvil's schema of the same version as ONNX's replaces it (Einsum-12).
    if (Base && Base->SinceVersion() > V->first)
      return Base;
    return &V->second;
  }

private:
  std::map<std::pair<std::string, std::string>, std::map<int, onnx::OpSchema>>
      Own;
};

OverlayRegistry *build() {
  static OverlayRegistry R;
  for (onnx::OpSchema &S : newerSchemas())
    R.add(std::move(S));
  return &R;
}

} // namespace

const onnx::ISchemaRegistry &schemaRegistry() {
  static OverlayRegistry *R = build();
  return *R;
}

} // namespace cuvil
