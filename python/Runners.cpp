// probe.register_runner: a bench or device runner written in Python. Runs call runners on worker threads
// with the GIL released; a Python runner takes the GIL for the call only. Its Python exception becomes a
// C++ exception with the Python message, which the registry turns into Error(Runner) naming the API, so
// run_ut writes that API's row with the message instead of stopping.
#include "Runners.h"

#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <stdexcept>

#include "Convert.h"
#include "probe/dump.h"

namespace py = pybind11;

namespace probe::python {
namespace {

std::mutex registry_mutex;

// Never destroyed: it holds Python callables, which must not be released after the interpreter is gone.
RunnerRegistry& registry() {
  static auto* r = new RunnerRegistry(RunnerRegistry::with_builtins());
  return *r;
}

// A Python callable shared by copies of a runner; the last copy releases it under the GIL, from whichever
// thread drops it.
using Callable = std::shared_ptr<py::object>;
Callable hold(py::object f) {
  return Callable(new py::object(std::move(f)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

py::object to_python(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::None:
      return py::none();
    case Value::Kind::Bool:
      return py::bool_(std::get<bool>(v.storage()));
    case Value::Kind::Int:
      return py::int_(std::get<std::int64_t>(v.storage()));
    case Value::Kind::Float:
      return py::float_(std::get<double>(v.storage()));
    case Value::Kind::String:
      return py::str(v.as_string());
    case Value::Kind::Tensor: {
      const Tensor& t = v.tensor();
      // numpy has no bfloat16: such inputs arrive widened to float32 (exact).
      return to_numpy(t.dtype() == DType::BFloat16 ? t.to(DType::Float32) : t, false);
    }
    case Value::Kind::List: {
      py::list items;
      for (const Value& item : v.list()) items.append(to_python(item));
      if (std::get<ValueList>(v.storage()).is_tuple) return py::tuple(items);
      return items;
    }
    case Value::Kind::DType:
      return py::str(std::string(torch_name(std::get<DType>(v.storage()))));
    default:
      return py::str(v.to_string());
  }
}

py::dict arguments(const BoundArgs& args) {
  py::dict d;
  for (std::size_t i = 0; i < args.size(); ++i)
    d[py::str(args.schema().params[i].name)] = to_python(args.at(i));
  return d;
}

// A returned array or tensor as an owned probe tensor (float64 for a bench runner's floating outputs).
Value to_probe_value(const py::handle& obj, RunnerRole role) {
  if (obj.is_none()) return Value();
  if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
    std::vector<Value> items;
    for (const py::handle item : obj) items.push_back(to_probe_value(item, role));
    return Value(std::move(items), py::isinstance<py::tuple>(obj));
  }
  if (py::isinstance<py::bool_>(obj)) return Value(obj.cast<bool>());
  if (py::isinstance<py::int_>(obj)) return Value(obj.cast<std::int64_t>());
  if (py::isinstance<py::float_>(obj)) return Value(obj.cast<double>());
  Tensor t = borrow(obj, "result").tensor.clone();
  if (role == RunnerRole::Bench && is_floating(t.dtype())) t = t.to(DType::Float64);
  return Value(std::move(t));
}

void collect_dtypes(const Value& v, std::vector<DType>& out) {
  if (v.is_tensor()) out.push_back(v.tensor().dtype());
  if (v.is_list())
    for (const Value& item : v.list()) collect_dtypes(item, out);
}

std::string python_message(py::error_already_set& e) {
  std::string type = py::str(e.type().attr("__name__"));
  return type + ": " + std::string(py::str(e.value()));
}

// The dtype the device produces, when the runner does not say: a bench runner's floating outputs take the
// first floating tensor argument's dtype (the dumped one), a device runner's are their own.
DType default_device_dtype(const BoundArgs& args, DType own) {
  if (!is_floating(own)) return own;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args.at(i).is_tensor() && is_floating(args.at(i).tensor().dtype()))
      return args.at(i).tensor().dtype();
  return own;
}

Runner python_runner(const std::string& schema, const py::object& forward, const py::object& backward,
                     RunnerRole role) {
  Runner r;
  r.schema = schema;
  const Callable fwd = hold(forward);
  r.forward = [fwd, role](const BoundArgs& args) -> ApiResult {
    py::gil_scoped_acquire gil;
    try {
      py::object out = (*fwd)(arguments(args));
      py::object dtypes = py::none();
      if (py::isinstance<py::tuple>(out) && py::len(out) == 2 &&
          py::isinstance<py::list>(py::tuple(out)[1]) && py::len(py::tuple(out)[1]) > 0 &&
          py::isinstance<py::str>(py::list(py::tuple(out)[1])[0])) {
        dtypes = py::tuple(out)[1];
        out = py::tuple(out)[0];
      }
      ApiResult result;
      if (py::isinstance<py::list>(out) || py::isinstance<py::tuple>(out)) {
        for (const py::handle o : out) result.outputs.push_back(to_probe_value(o, role));
      } else {
        result.outputs.push_back(to_probe_value(out, role));
      }
      std::vector<DType> own;
      for (const Value& v : result.outputs) collect_dtypes(v, own);
      if (!dtypes.is_none()) {
        for (const py::handle d : dtypes) {
          const std::string text = py::str(d);
          const std::optional<DType> parsed = parse_dtype(text);
          if (!parsed) throw std::runtime_error("unknown device dtype '" + text + "'");
          result.device_dtypes.push_back(*parsed);
        }
      } else {
        for (const DType d : own)
          result.device_dtypes.push_back(role == RunnerRole::Bench ? default_device_dtype(args, d) : d);
      }
      return result;
    } catch (py::error_already_set& e) {
      throw std::runtime_error(python_message(e));
    }
  };
  if (!backward.is_none()) {
    const Callable bwd = hold(backward);
    r.backward = [bwd, role](const BoundArgs& args, const std::vector<Value>& grads) -> std::vector<Value> {
      py::gil_scoped_acquire gil;
      try {
        py::list g;
        for (const Value& v : grads) g.append(to_python(v));
        const py::object out = (*bwd)(arguments(args), g);
        std::vector<Value> result;
        for (const py::handle o : out) result.push_back(to_probe_value(o, role));
        return result;
      } catch (py::error_already_set& e) {
        throw std::runtime_error(python_message(e));
      }
    };
  }
  return r;
}

RunnerRole parse_role(const std::string& role) {
  if (role == "bench") return RunnerRole::Bench;
  if (role == "device") return RunnerRole::Device;
  throw Error(ErrorKind::InvalidArgument, "role must be 'bench' or 'device', not '" + role + "'", "", "role");
}

}  // namespace

RunnerRegistry registry_snapshot() {
  std::lock_guard lock(registry_mutex);
  return registry();
}

void register_runners(py::module_& m) {
  m.def(
      "runners",
      [](const std::string& role) { return registry_snapshot().keys(Framework::PyTorch, parse_role(role)); },
      py::arg("role") = "bench");
  m.def(
      "register_runner",
      [](const std::string& name, const std::string& schema, const py::object& forward,
         const py::object& backward, const std::string& role) {
        Runner r = python_runner(schema, forward, backward, parse_role(role));
        std::lock_guard lock(registry_mutex);
        registry().add(Framework::PyTorch, name, std::move(r), parse_role(role));
      },
      py::arg("name"), py::arg("schema"), py::arg("forward"), py::arg("backward") = py::none(),
      py::arg("role") = "bench");
}

}  // namespace probe::python
