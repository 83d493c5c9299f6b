// probe.Dump: a parsed dump.json whose tensors load as numpy views of their mapped files.
#include "probe/dump.h"

#include <pybind11/stl.h>

#include <memory>

#include "Convert.h"

namespace py = pybind11;

namespace probe::python {
namespace {

py::object statistic(const Statistic& s) {
  switch (s.kind) {
    case Statistic::Kind::Bool:
      return py::bool_(s.b);
    case Statistic::Kind::Int:
      return py::int_(s.i);
    case Statistic::Kind::Float:
      return py::float_(s.d);
    default:
      return py::none();
  }
}

// One entry's tensor descriptors as dicts; `load` needs the dump, so it lives on the Dump object.
py::list tensor_infos(const DumpEntry& e) {
  py::list out;
  for (const TensorInfo* t : e.tensors()) {
    py::dict d;
    d["field"] = t->field;
    d["type"] = t->type;
    d["dtype"] = t->dtype_name;
    d["shape"] = py::tuple(py::cast(t->shape));
    d["max"] = statistic(t->max);
    d["min"] = statistic(t->min);
    d["mean"] = statistic(t->mean);
    d["norm"] = statistic(t->norm);
    d["requires_grad"] = t->requires_grad ? py::object(py::bool_(*t->requires_grad)) : py::none();
    d["data_name"] = t->data_name;
    d["md5"] = t->md5;
    out.append(d);
  }
  return out;
}

}  // namespace

void register_dump(py::module_& m) {
  py::class_<Dump, std::shared_ptr<Dump>>(m, "Dump")
      .def(py::init([](const std::string& path) {
             py::gil_scoped_release release;
             return std::make_shared<Dump>(Dump::open(path));
           }),
           py::arg("path"))
      .def_property_readonly("path", &Dump::path)
      .def_property_readonly("task", &Dump::task)
      .def_property_readonly("level", &Dump::level)
      .def_property_readonly("framework", [](const Dump& d) { return std::string(to_string(d.framework())); })
      .def_property_readonly("tensor_dir", &Dump::tensor_dir)
      .def("keys",
           [](const Dump& d) {
             py::list keys;
             for (const DumpEntry& e : d.entries()) keys.append(e.key);
             return keys;
           })
      .def(
          "entry",
          [](const Dump& d, const std::string& key) {
            const DumpEntry* e = d.find(key);
            if (!e) throw Error(ErrorKind::InvalidArgument, "no entry '" + key + "'", d.path(), "data", key);
            py::dict out;
            out["key"] = e->key;
            out["prefix"] = e->name.prefix;
            out["api"] = e->name.api;
            out["full_name"] = e->name.full_name;
            out["call_index"] = e->name.call_index;
            out["direction"] = std::string(to_string(e->name.direction));
            out["is_module"] = e->name.is_module;
            out["tensors"] = tensor_infos(*e);
            return out;
          },
          py::arg("key"))
      .def(
          "load",
          [](const Dump& d, const std::string& key, const std::string& field) {
            const DumpEntry* e = d.find(key);
            if (!e) throw Error(ErrorKind::InvalidArgument, "no entry '" + key + "'", d.path(), "data", key);
            for (const TensorInfo* t : e->tensors()) {
              if (t->field != field) continue;
              Tensor tensor;
              {
                py::gil_scoped_release release;
                tensor = d.load_tensor(*e, *t);
              }
              return py::make_tuple(to_numpy(tensor, false), std::string(name(tensor.dtype())));
            }
            throw Error(ErrorKind::InvalidArgument, "entry has no tensor '" + field + "'", d.path(), field,
                        key);
          },
          py::arg("key"), py::arg("field"));
}

}  // namespace probe::python
