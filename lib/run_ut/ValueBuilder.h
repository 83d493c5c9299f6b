// Building an API's arguments from its dump entry: tensors from their files (or a received record's
// blobs), or generated from the dumped statistics, and the dumped outputs and casts read back as values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "probe/dump.h"
#include "probe/runner.h"
#include "run_ut/CheckContext.h"

namespace probe::rut {

// Builds the Value of a dumped argument: tensors from their file when there is one (real-data
// mode), else generated from the statistics (random mode); mixed dumps mix per tensor.
class ValueBuilder {
 public:
  ValueBuilder(const Context& ctx, const TensorSource& src, const DumpEntry& entry, const std::string& api)
      : ctx_(ctx), src_(src), entry_(entry), api_(api) {}

  /// msprobe's per-API input fixes (§6.5): cross_entropy targets are int64 and non-negative,
  /// histc takes floating input. `api_name` is the base name ("cross_entropy").
  void set_api_rules(const std::string& api_name);

  /// The Value of one dumped argument at `field` ("input.0", "kwargs.dim").
  Value build(const DumpNode& node, const std::string& field, int depth = 0);

  // Failures name the tensor's file (when it has one) and its field, so a SKIP row says which tensor
  // could not be built, including when memory ran out.
  Tensor tensor(const TensorInfo& info, const std::string& field);

  Tensor load_or_generate(const TensorInfo& info, const std::string& field);

  int real() const { return real_; }
  int random() const { return random_; }
  /// Fields of the tensors generated from statistics, in build order.
  const std::vector<std::string>& generated() const { return generated_; }

 private:
  const Context& ctx_;
  const TensorSource& src_;
  const DumpEntry& entry_;
  std::string api_;
  int real_ = 0, random_ = 0;
  std::vector<std::string> generated_;
  std::uint64_t generated_elements_ = 0;
  std::optional<std::pair<DType, DType>> convert_;
  std::string min_zero_field_, float_field_;
};

// Elements of the tensors the dump records as the entry's outputs (their descriptors' shapes).
double dumped_output_elements(const DumpEntry& entry);

// The dumped outputs as device values, or nullopt when some tensor has no file (then the device
// runner computes them). DECISIONS D6. In a tensor dump the device side is the dumped output: without
// it (no "output", an empty one, a descriptor without data_name) throws Format naming the field, and
// that direction is SKIP rather than judged against the device runner.
std::optional<std::vector<Value>> dumped_values(const Context& ctx, const TensorSource& src,
                                                const DumpEntry& entry, const DumpNode* list,
                                                const std::string& api, const std::string& field);

// Flattened positional tensor arguments with their dump paths ("input.0", "input.1.2").
void positional_tensors(const Value& v, const std::string& path,
                        std::vector<std::pair<std::string, const Tensor*>>& out);

// The dumped requires_grad of the positional input at `path` ("input.1", "input.2.0"); nullopt when
// the dump does not record it (MindSpore) or the path is not a tensor.
std::optional<bool> dumped_requires_grad(const DumpEntry& entry, const std::string& path);

// The dtype of the first dumped input and of the first dumped output, when both are tensors with one.
std::optional<std::pair<DType, DType>> dumped_dtypes(const DumpEntry& entry);

// The floating dtype a cast API produced when it differs from its (floating) input's dtype, from the
// dumped input and output (DECISIONS D13); nullopt for device moves and non-floating casts.
std::optional<DType> floating_cast_dtype(const DumpEntry& entry);

// The dumped call's positional and keyword arguments, as the runners take them.
ApiCall build_call(ValueBuilder& vb, const DumpEntry& entry, bool& has_out_kwarg);

// msprobe writes a positional torch.dtype as {} (no analyzer for it): the dumped output's dtype says which
// cast a `to`/`type` ran, and becomes its dtype keyword. `same_dtype`: also for a move or a cast to the
// input's own dtype.
void name_dumped_cast(const DumpEntry& entry, ApiCall& call, bool same_dtype);

}  // namespace probe::rut
