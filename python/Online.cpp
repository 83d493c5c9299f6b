// probe._probe.OnlineChecker: the C++ OnlineChecker for probe.torch.Dispatch. Tensors reach check() as
// views of torch's memory (TensorView: data_ptr, shape, strides); check() copies what it keeps before it
// returns, with the GIL released (a full queue blocks there, and Python runners on the workers need the
// GIL).
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <optional>

#include "Convert.h"
#include "Keywords.h"
#include "Runners.h"
#include "probe/online_checker.h"

namespace py = pybind11;

namespace probe::python {
namespace {

bool is_torch(const py::handle& obj, const char* type) {
  const py::handle t = py::type::handle_of(obj);
  return std::string(py::str(t.attr("__module__"))).rfind("torch", 0) == 0 &&
         std::string(py::str(t.attr("__name__"))) == type;
}

Value to_value(const py::handle& obj);

// A torch tensor as a view of its memory (strides in elements); one with negative strides, which TensorView
// does not take, is gathered into a copy.
OnlineArg tensor_arg(const py::handle& obj) {
  const std::string dtype_text = py::str(obj.attr("dtype"));
  const std::optional<DType> dtype = parse_dtype(dtype_text);
  if (!dtype) throw Error(ErrorKind::Unsupported, "dtype " + dtype_text + " has no probe dtype");
  if (std::string(py::str(obj.attr("device").attr("type"))) != "cpu")
    throw Error(ErrorKind::Unsupported, "tensor not on the CPU");
  TensorView v;
  v.dtype = *dtype;
  v.shape = py::cast<Shape>(py::tuple(obj.attr("shape")));
  if (numel(v.shape) == 0) return Value(Tensor::zeros(v.dtype, v.shape));
  if (py::cast<bool>(obj.attr("is_conj")()) || py::cast<bool>(obj.attr("is_neg")()))
    throw Error(ErrorKind::Unsupported, "tensor has a lazy conjugate/negative bit");
  v.strides = py::cast<std::vector<std::int64_t>>(py::tuple(obj.attr("stride")()));
  for (const std::int64_t s : v.strides)
    if (s < 0) return Value(borrow(obj, "tensor").tensor);
  if (py::cast<bool>(obj.attr("is_contiguous")())) v.strides.clear();
  v.data = reinterpret_cast<const void*>(py::cast<std::uintptr_t>(obj.attr("data_ptr")()));
  return v;
}

bool is_tensor(const py::handle& obj) {
  return py::hasattr(obj, "data_ptr") && py::hasattr(obj, "stride") &&
         std::string(py::str(py::type::handle_of(obj).attr("__module__"))).rfind("torch", 0) == 0;
}

Value to_value(const py::handle& obj) {
  if (obj.is_none()) return Value();
  if (is_tensor(obj)) return Value(borrow(obj, "tensor").tensor.clone());
  if (py::isinstance<py::bool_>(obj)) return Value(obj.cast<bool>());
  if (py::isinstance<py::int_>(obj)) return Value(obj.cast<std::int64_t>());
  if (py::isinstance<py::float_>(obj)) return Value(obj.cast<double>());
  if (py::isinstance<py::str>(obj)) return Value(obj.cast<std::string>());
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    std::vector<Value> items;
    for (const py::handle item : obj) items.push_back(to_value(item));
    return Value(std::move(items), py::isinstance<py::tuple>(obj));
  }
  if (is_torch(obj, "dtype")) {
    const std::string text = py::str(obj);
    const std::optional<DType> d = parse_dtype(text);
    if (!d) throw Error(ErrorKind::Unsupported, "dtype " + text + " has no probe dtype");
    return Value(*d);
  }
  const std::string type = py::str(py::type::handle_of(obj).attr("__name__"));
  if (type == "device" || type == "layout" || type == "memory_format")
    return Value(OpaqueValue{"torch." + type, py::str(obj)});
  throw Error(ErrorKind::Unsupported, "argument of type " + type + " has no probe value");
}

OnlineArg to_arg(const py::handle& obj) {
  if (is_tensor(obj)) return tensor_arg(obj);
  return to_value(obj);
}

OnlineDumpMode parse_dump_mode(const std::string& s) {
  if (s == "off" || s == "OFF") return OnlineDumpMode::Off;
  if (s == "all" || s == "ALL") return OnlineDumpMode::All;
  if (s == "list" || s == "LIST") return OnlineDumpMode::List;
  if (s == "auto" || s == "AUTO") return OnlineDumpMode::Auto;
  throw Error(ErrorKind::InvalidArgument, "dump_mode must be off, all, list or auto, not '" + s + "'", "",
              "dump_mode");
}

OnlineRule parse_online_rule(const std::string& s) {
  if (s == "documented") return OnlineRule::Documented;
  if (s == "run_ut") return OnlineRule::RunUt;
  if (s == "error_bound") return OnlineRule::ErrorBound;
  throw Error(ErrorKind::InvalidArgument, "rule must be documented, run_ut or error_bound, not '" + s + "'",
              "", "rule");
}

// Overflow mode: whether a floating tensor holds inf or NaN (all exponent bits set), read in place.
bool non_finite(const py::handle& obj) {
  if (!is_tensor(obj)) return false;
  const Borrowed b = borrow(obj, "tensor");
  const Tensor& t = b.tensor;
  const std::byte* p = t.bytes();
  const std::int64_t n = t.numel();
  const auto scan = [&](auto word, auto mask) {
    using W = decltype(word);
    for (std::int64_t i = 0; i < n; ++i) {
      W w;
      std::memcpy(&w, p + i * static_cast<std::int64_t>(sizeof(W)), sizeof(W));
      if ((w & mask) == mask) return true;
    }
    return false;
  };
  py::gil_scoped_release release;
  switch (t.dtype()) {
    case DType::Float32:
      return scan(std::uint32_t{}, std::uint32_t{0x7F800000u});
    case DType::Float64:
      return scan(std::uint64_t{}, std::uint64_t{0x7FF0000000000000ull});
    case DType::Float16:
      return scan(std::uint16_t{}, std::uint16_t{0x7C00u});
    case DType::BFloat16:
      return scan(std::uint16_t{}, std::uint16_t{0x7F80u});
    default:
      return false;
  }
}

}  // namespace

void register_online(py::module_& m) {
  m.def("non_finite", &non_finite, py::arg("tensor"));
  py::class_<OnlineChecker>(m, "OnlineChecker")
      .def(py::init([](const py::kwargs& kwargs) {
        using O = OnlineCheckerOptions;
        O o;
        apply_keywords("OnlineChecker", kwargs, o,
                       {{"dump_path", &O::dump_path, KeywordUse::Required},
                        {"tag", &O::tag},
                        {"rank", &O::rank},
                        {"dump_mode", [](O& o, const std::string& m) { o.dump_mode = parse_dump_mode(m); }},
                        {"api_list", &O::api_list},
                        {"black_list", &O::black_list},
                        {"rule", [](O& o, const std::string& r) { o.rule = parse_online_rule(r); }},
                        {"profile", [](O& o, const std::string& p) { o.profile = parse_profile(p); }},
                        {"workers", &O::workers},
                        {"queue_capacity", &O::queue_capacity},
                        {"timestamp", &O::timestamp}});
        RunnerRegistry registry = registry_snapshot();
        py::gil_scoped_release release;
        return std::make_unique<OnlineChecker>(std::move(o), std::move(registry));
      }))
      .def(
          "check",
          [](OnlineChecker& c, const std::string& api, const py::sequence& args, const py::dict& kwargs,
             const py::sequence& outputs, bool backward, const std::optional<std::uint64_t>& step) {
            OnlineCall call;
            for (const py::handle a : args) call.args.push_back(to_arg(a));
            for (const auto& [k, v] : kwargs) call.kwargs.emplace_back(py::cast<std::string>(k), to_arg(v));
            std::vector<OnlineArg> outs;
            for (const py::handle o : outputs) outs.push_back(to_arg(o));
            py::gil_scoped_release release;
            return c.check(api, call, outs, OnlineCallSite{backward, step});
          },
          py::arg("api"), py::arg("args"), py::arg("kwargs"), py::arg("outputs"), py::arg("backward") = false,
          py::arg("step") = py::none())
      .def("flush", &OnlineChecker::flush, py::call_guard<py::gil_scoped_release>())
      .def("summary", [](const OnlineChecker& c) {
        using S = OnlineCheckerSummary;
        return fields_dict(c.summary(), {{"calls", &S::calls},
                                         {"blacklisted", &S::blacklisted},
                                         {"dropped", &S::dropped},
                                         {"unsupported", &S::unsupported},
                                         {"skipped", &S::skipped},
                                         {"passed", &S::passed},
                                         {"failed", &S::failed},
                                         {"pending", &S::pending},
                                         {"unsupported_ops", &S::unsupported_ops},
                                         {"run_dir", &S::run_dir},
                                         {"result_csv", &S::result_csv},
                                         {"details_csv", &S::details_csv}});
      });
}

}  // namespace probe::python
